import { describe, expect, it } from "vitest";
import { THRASH_WINDOW_MS } from "../cache/tenant-byte-cache";
import type { Logger } from "../ports/logger";
import type { GetOptions, GetResult, ObjectStore, StoredObject } from "../ports/object-store";
import { DocumentCascade } from "./document-cascade";

/**
 * A store of documents that counts, per key, the bodies it sent: a read the cascade answers from
 * its body cache is revalidated (`If-None-Match`) and sends no body.
 */
function countingStore(documents: Map<string, string>) {
  const bodiesSent = new Map<string, number>();
  const store: ObjectStore = {
    get: async (key: string, options?: GetOptions): Promise<GetResult> => {
      const body = documents.get(key);
      if (body === undefined) return null;
      const etag = `"${body.length}"`;
      if (options?.ifNoneMatch === etag) return { notModified: true };
      bodiesSent.set(key, (bodiesSent.get(key) ?? 0) + 1);
      const object: StoredObject = { key, body, etag, contentType: "text/markdown" };
      return object;
    },
    put: async () => {
      throw new Error("not used");
    },
    delete: async () => {
      throw new Error("not used");
    },
    list: async () => ({ items: [], cursor: undefined }),
  };
  return { store, bodiesSent };
}

describe("DocumentCascade's document cache, shared by tenants", () => {
  it("keeps tenant B's document cached while tenant A reads documents past its share", async () => {
    const documents = new Map<string, string>();
    documents.set("tenant-b/_tenant/docs/readme.md", "B's readme");
    // 64 documents of 8 KiB (16 KiB each as the cache counts UTF-16): 1 MiB, four times the
    // 256 KiB share A has of the 1 MiB cache.
    for (let i = 0; i < 64; i++) documents.set(`tenant-a/_tenant/docs/page-${i}.md`, "a".repeat(8 * 1024));
    const { store, bodiesSent } = countingStore(documents);
    const cascade = new DocumentCascade(store, new Map(), { maxCacheBytes: 1024 * 1024, tenantShare: 0.25 });

    expect((await cascade.lookup("tenant-b", "_tenant", "docs/readme.md"))?.body).toBe("B's readme");
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 64; i++) await cascade.lookup("tenant-a", "_tenant", `docs/page-${i}.md`);
    expect((await cascade.lookup("tenant-b", "_tenant", "docs/readme.md"))?.body).toBe("B's readme");

    // B's body was sent once: the second read was answered from the cache (revalidated only).
    expect(bodiesSent.get("tenant-b/_tenant/docs/readme.md")).toBe(1);
    // A's flood evicted A's own documents: its second round sent them again.
    expect(bodiesSent.get("tenant-a/_tenant/docs/page-0.md")).toBe(2);
    expect(cascade.stats.bytes).toBeLessThanOrEqual(cascade.stats.maxBytes);
  });
});

describe("DocumentCascade's document cache: a tenant thrashing its share is logged", () => {
  it("writes one cache_thrash WARN line (cache 'documents') per tenant and window, counted in its stats", async () => {
    const documents = new Map<string, string>();
    for (let i = 0; i < 5; i++) documents.set(`tenant-b/_tenant/docs/page-${i}.md`, "b".repeat(8 * 1024));
    for (let i = 0; i < 64; i++) documents.set(`tenant-a/_tenant/docs/page-${i}.md`, "a".repeat(8 * 1024));
    const { store } = countingStore(documents);
    const lines: { event: string; fields: Readonly<Record<string, unknown>> | undefined }[] = [];
    const logger: Logger = { info: () => {}, warn: (event, fields) => lines.push({ event, fields }) };
    let now = 1_000;
    const cascade = new DocumentCascade(store, new Map(), {
      maxCacheBytes: 1024 * 1024,
      tenantShare: 0.25,
      logger,
      now: () => now,
    });
    const thrashLines = () => lines.filter((line) => line.event === "cache_thrash");

    // B's five documents fit its share, read twice: nothing evicted, nothing logged.
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 5; i++) await cascade.lookup("tenant-b", "_tenant", `docs/page-${i}.md`);
    expect(thrashLines()).toEqual([]);

    // A reads 64 documents of 16 KiB (as UTF-16) through its 256 KiB share: its own evict its own.
    for (let i = 0; i < 64; i++) await cascade.lookup("tenant-a", "_tenant", `docs/page-${i}.md`);
    expect(thrashLines()).toHaveLength(1);
    expect(thrashLines()[0]!.fields).toMatchObject({
      tenant: "tenant-a",
      cache: "documents",
      shareBytes: 256 * 1024,
      windowSeconds: THRASH_WINDOW_MS / 1000,
    });
    expect(cascade.stats.thrashes).toBe(1);

    // Still thrashing in the same window: no second line.
    for (let i = 0; i < 64; i++) await cascade.lookup("tenant-a", "_tenant", `docs/page-${i}.md`);
    expect(thrashLines()).toHaveLength(1);

    // The next window: one more line.
    now += THRASH_WINDOW_MS;
    for (let i = 0; i < 64; i++) await cascade.lookup("tenant-a", "_tenant", `docs/page-${i}.md`);
    expect(thrashLines()).toHaveLength(2);
    expect(cascade.stats.thrashes).toBe(2);
    expect(thrashLines().every((line) => line.fields?.tenant === "tenant-a")).toBe(true);
  });
});
