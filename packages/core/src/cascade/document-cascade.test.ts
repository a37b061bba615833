import { describe, expect, it } from "vitest";
import type {
  DeleteOptions,
  DeleteResult,
  GetOptions,
  GetResult,
  ListPage,
  ObjectStore,
  PutOptions,
  PutResult,
} from "../ports/object-store";
import { type BundledDocuments, DocumentCascade } from "./document-cascade";

/** An object store in a map, conditional writes included, counting the requests it answers. */
function memoryStore(objects: Record<string, string> = {}) {
  const entries = new Map<string, { body: string; etag: string }>();
  let writes = 0;
  const requests = { get: 0, bodiesSent: 0, put: 0, delete: 0, list: 0 };
  const write = (key: string, body: string) => {
    const etag = `"${++writes}"`;
    entries.set(key, { body, etag });
    return etag;
  };
  for (const [key, body] of Object.entries(objects)) write(key, body);
  const store: ObjectStore = {
    get: async (key: string, options?: GetOptions): Promise<GetResult> => {
      requests.get++;
      const entry = entries.get(key);
      if (!entry) return null;
      if (options?.ifNoneMatch === entry.etag) return { notModified: true };
      requests.bodiesSent++;
      return { key, body: entry.body, etag: entry.etag, contentType: "text/markdown" };
    },
    put: async (key: string, body: string, options?: PutOptions): Promise<PutResult> => {
      requests.put++;
      const current = entries.get(key);
      if (options?.ifNoneMatch === "*" && current) return { ok: false, reason: "precondition_failed" };
      if (options?.ifMatch !== undefined && current?.etag !== options.ifMatch)
        return { ok: false, reason: "precondition_failed" };
      return { ok: true, etag: write(key, body) };
    },
    delete: async (key: string, options?: DeleteOptions): Promise<DeleteResult> => {
      requests.delete++;
      const current = entries.get(key);
      if (!current) return { ok: false, reason: "not_found" };
      if (options?.ifMatch !== undefined && current.etag !== options.ifMatch)
        return { ok: false, reason: "precondition_failed" };
      entries.delete(key);
      return { ok: true };
    },
    list: async (prefix: string): Promise<ListPage> => {
      requests.list++;
      const items = [...entries]
        .filter(([key]) => key.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, entry]) => ({ key, etag: entry.etag, size: entry.body.length }));
      return { items, cursor: undefined };
    },
  };
  return { store, requests };
}

const bundled: BundledDocuments = new Map([
  ["docs/style.md", { body: "bundled style", contentType: "text/markdown" }],
  ["docs/only-bundled.md", { body: "shipped with the service", contentType: "text/markdown" }],
]);

describe("DocumentCascade: project → tenant → bundled", () => {
  const objects = {
    "acme/shop/docs/style.md": "shop style",
    "acme/_tenant/docs/style.md": "acme style",
    "acme/_tenant/docs/tenant-only.md": "acme's own",
    "other/_tenant/docs/tenant-only.md": "another tenant's",
  };

  it("answers the innermost layer that has the path", async () => {
    const cascade = new DocumentCascade(memoryStore(objects).store, bundled);
    const read = async (project: string, path: string) => {
      const hit = await cascade.lookup("acme", project, path);
      return hit && { layer: hit.layer, body: hit.body };
    };
    expect(await read("shop", "docs/style.md")).toEqual({ layer: "project", body: "shop style" });
    expect(await read("web", "docs/style.md")).toEqual({ layer: "tenant", body: "acme style" });
    expect(await read("shop", "docs/tenant-only.md")).toEqual({ layer: "tenant", body: "acme's own" });
    expect(await read("shop", "docs/only-bundled.md")).toEqual({
      layer: "bundled",
      body: "shipped with the service",
    });
    expect(await read("shop", "docs/nowhere.md")).toBeNull();
    // `_tenant` is the tenant layer itself: its documents answer as the tenant's.
    expect(await read("_tenant", "docs/style.md")).toEqual({ layer: "tenant", body: "acme style" });
  });

  it("keeps tenants apart: a tenant never reads another's layers", async () => {
    const cascade = new DocumentCascade(memoryStore(objects).store, bundled);
    expect((await cascade.lookup("other", "shop", "docs/style.md"))?.body).toBe("bundled style");
    expect((await cascade.lookup("other", "shop", "docs/tenant-only.md"))?.body).toBe("another tenant's");
    expect(await cascade.lookup("nobody", "shop", "docs/tenant-only.md")).toBeNull();
  });

  it("reads exactly one layer when asked to, and names the version that answers without its body", async () => {
    const cascade = new DocumentCascade(memoryStore(objects).store, bundled);
    expect(await cascade.readLayer("acme", "web", "docs/style.md")).toBeNull();
    expect((await cascade.readLayer("acme", "_tenant", "docs/style.md"))?.body).toBe("acme style");
    const project = await cascade.lookup("acme", "shop", "docs/style.md");
    expect(await cascade.lookupVersion("acme", "shop", "docs/style.md")).toEqual({
      layer: "project",
      path: "docs/style.md",
      etag: project?.etag,
    });
    expect(await cascade.lookupVersion("acme", "shop", "docs/only-bundled.md")).toEqual({
      layer: "bundled",
      path: "docs/only-bundled.md",
      etag: null,
    });
  });

  it("refuses a path or an id that could leave its layer", async () => {
    const cascade = new DocumentCascade(memoryStore(objects).store, bundled);
    await expect(cascade.lookup("acme", "shop", "../_tenant/docs/style.md")).rejects.toThrow();
    await expect(cascade.lookup("acme", "../other", "docs/style.md")).rejects.toThrow();
    await expect(cascade.lookup("Acme/x", "shop", "docs/style.md")).rejects.toThrow();
  });
});

describe("DocumentCascade: writes and deletes", () => {
  it("serves what was written through it, into the addressed layer, and the layer below once it is deleted", async () => {
    const { store } = memoryStore({ "acme/_tenant/docs/style.md": "acme style" });
    const cascade = new DocumentCascade(store, bundled);
    const written = await cascade.write("acme", "shop", "docs/style.md", "shop style", {});
    expect(written).toMatchObject({ key: "acme/shop/docs/style.md", etag: expect.any(String) });
    expect(await cascade.lookup("acme", "shop", "docs/style.md")).toMatchObject({
      layer: "project",
      body: "shop style",
    });
    await cascade.remove("acme", "shop", "docs/style.md", undefined);
    expect(await cascade.lookup("acme", "shop", "docs/style.md")).toMatchObject({
      layer: "tenant",
      body: "acme style",
    });
  });

  it("sees a write made by someone else: without generation markers every read revalidates, and a body seen before is not sent again", async () => {
    const { store, requests } = memoryStore({ "acme/shop/docs/a.md": "first" });
    const cascade = new DocumentCascade(store, bundled);
    expect((await cascade.lookup("acme", "shop", "docs/a.md"))?.body).toBe("first");
    const gets = requests.get;
    expect((await cascade.lookup("acme", "shop", "docs/a.md"))?.body).toBe("first");
    // Asked again (If-None-Match), and the body not sent again.
    expect(requests.get).toBeGreaterThan(gets);
    expect(requests.bodiesSent).toBe(1);
    await store.put("acme/shop/docs/a.md", "second");
    expect((await cascade.lookup("acme", "shop", "docs/a.md"))?.body).toBe("second");
    expect(requests.bodiesSent).toBe(2);
  });

  it("honours a write's or a delete's precondition: a stale ETag changes nothing", async () => {
    const { store } = memoryStore();
    const cascade = new DocumentCascade(store, bundled);
    await cascade.write("acme", "shop", "docs/a.md", "one", { ifNoneMatch: "*" });
    await expect(
      cascade.write("acme", "shop", "docs/a.md", "two", { ifNoneMatch: "*" }),
    ).rejects.toMatchObject({
      code: "precondition_failed",
    });
    await expect(
      cascade.write("acme", "shop", "docs/a.md", "three", { ifMatch: '"stale"' }),
    ).rejects.toMatchObject({
      code: "precondition_failed",
    });
    await expect(cascade.remove("acme", "shop", "docs/a.md", '"stale"')).rejects.toMatchObject({
      code: "precondition_failed",
    });
    expect((await cascade.lookup("acme", "shop", "docs/a.md"))?.body).toBe("one");
  });
});
