import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { CountingObjectStore } from "@vance/adapters/testing";
import { CompiledToolLayers, compiledLayerKey, mapWithConcurrency } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";

/**
 * Issue 24: a cold instance answers a large project's first manifest from one compiled index per
 * layer — one GET each, no LIST, no per-document read — and never from an index older than a
 * write that finished before the request. Every instance runs over the same directory stores
 * (documents and SQLite state), each through its own counters.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vance-compiled-"));
  dirs.push(dir);
  return dir;
}

/** One function instance over the shared data directory, counting its document-store requests. */
async function instance(dir: string, now?: () => number) {
  const fs = new FsObjectStore(join(dir, "documents"));
  const documents = new CountingObjectStore(fs);
  const { app, services } = await testApp({ dataDir: dir, documents, ...(now ? { now } : {}) });
  const client = await projectClient(app);
  return { app, services, client, documents, fs };
}

const toolNames = (count: number) => Array.from({ length: count }, (_, i) => `f${Math.floor(i / 20)}_t${i}`);

/** `count` tool documents in acme/shop, written straight into the store (as a bulk import would). */
async function seedStore(fs: FsObjectStore, count: number): Promise<void> {
  await mapWithConcurrency(toolNames(count), 32, async (name, i) => {
    const result = await fs.put(
      `acme/shop/server-tools/${name}.yaml`,
      docTool(`tool ${i}`, `primary: ${i % 4 < 3}\nlabels: [bulk]\n`),
      { contentType: "application/yaml" },
    );
    if (!result.ok) throw new Error(`seeding ${name}: ${result.reason}`);
  });
}

const NO_WRITES = { put: 0, delete: 0 };

/**
 * Runs `writes` through the API, lets the rebuilds they schedule finish, then puts the layer's
 * index back as it was: the index a writer leaves when its process ends before its rebuild ran.
 */
async function staleAfter(
  a: Awaited<ReturnType<typeof instance>>,
  writes: () => Promise<void>,
): Promise<void> {
  const key = compiledLayerKey("acme", "shop");
  const index = await a.fs.get(key);
  if (index === null || "notModified" in index) throw new Error("no index to keep");
  await writes();
  await a.services.compiledLayers.settled();
  expect(a.services.compiledLayers.stats.written).toBeGreaterThan(0);
  expect((await a.fs.put(key, index.body, { contentType: "application/json" })).ok).toBe(true);
}

describe("compiled layer index: a cold project in one read per layer", () => {
  it("a cold instance's first manifest of 5,000 tools reads one object per layer (no LIST, no document GET) and equals the manifest built document by document", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await a.services.syncCatalog();
    await seedStore(a.fs, 5000);
    a.documents.reset();
    // No index yet: the spawn reads document by document, then writes each layer's index.
    const { processId } = await a.client.spawn({ allowedToolsAdd: ["@bulk"], models: ["openai/gpt-4.1"] });
    const built = await a.client.manifest(processId);
    expect(built.primary.length + built.deferred.length + built.demoted.length).toBeGreaterThan(100);
    expect(a.documents.counts.get).toBeGreaterThanOrEqual(5000);
    expect(a.documents.counts.put).toBe(2);

    const b = await instance(dir);
    b.documents.reset();
    const cold = await b.client.manifest(processId);
    expect(cold).toEqual(built);
    // The project layer's index and the tenant layer's: one GET each.
    expect(b.documents.counts).toMatchObject({ get: 2, list: 0, ...NO_WRITES });

    // Warm from then on: no request at all.
    b.documents.reset();
    expect(await b.client.manifest(processId)).toEqual(built);
    expect(b.documents.counts).toEqual({ get: 0, list: 0, ...NO_WRITES });
  });

  it("a write that finished before the request is seen on a cold instance; the stale index still saves every unchanged document's read, and is rebuilt", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await seedStore(a.fs, 40);
    const before = await (await a.services.tools.snapshot("acme", "shop")).tools();
    expect(before.filter((tool) => tool.layer === "project")).toHaveLength(40);
    const listed = a.documents.counts;
    expect(listed.put).toBe(2);

    // Through the API: the project layer's generation moves past the index's (whose rebuild is lost).
    await staleAfter(a, async () => {
      await a.client.putTool("f0_t0", docTool("tool 0, rewritten", "labels: [bulk]\n"));
      await a.client.putTool("fresh", docTool("a new tool", "labels: [bulk]\n"));
    });

    const b = await instance(dir);
    b.documents.reset();
    const tools = await (await b.services.tools.snapshot("acme", "shop")).tools();
    expect(tools.find((tool) => tool.name === "f0_t0")?.config.description).toBe("tool 0, rewritten");
    expect(tools.find((tool) => tool.name === "fresh")?.config.description).toBe("a new tool");
    // Two index GETs and one LIST; only the two changed documents read; the project's index rewritten.
    expect(b.documents.counts).toMatchObject({ get: 2 + 2, list: 1, put: 1, delete: 0 });

    const c = await instance(dir);
    c.documents.reset();
    expect(
      (await (await c.services.tools.snapshot("acme", "shop")).tools()).map((tool) => tool.config),
    ).toEqual(tools.map((tool) => tool.config));
    expect(c.documents.counts).toMatchObject({ get: 2, list: 0, ...NO_WRITES });
  });

  it("a corrupt or foreign index is not used: the layer is read document by document and the index rewritten", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await seedStore(a.fs, 10);
    const expected = (await (await a.services.tools.snapshot("acme", "shop")).tools()).map(
      (tool) => tool.config,
    );
    for (const body of ["{not json", JSON.stringify({ format: 999 }), '{"format":1,"entries":[1]}']) {
      const stored = await a.fs.get(compiledLayerKey("acme", "shop"));
      expect(stored).not.toBeNull();
      expect((await a.fs.put(compiledLayerKey("acme", "shop"), body)).ok).toBe(true);

      const b = await instance(dir);
      b.documents.reset();
      expect(
        (await (await b.services.tools.snapshot("acme", "shop")).tools()).map((tool) => tool.config),
      ).toEqual(expected);
      expect(b.documents.counts).toMatchObject({ get: 2 + 10, list: 1, put: 1 });

      const c = await instance(dir);
      c.documents.reset();
      await (await c.services.tools.snapshot("acme", "shop")).tools();
      expect(c.documents.counts).toMatchObject({ get: 2, list: 0, put: 0 });
    }
  });

  it("an index older than the safety net is checked by a LIST: its results still spare every document's GET, and it is written anew", async () => {
    const dir = dataDir();
    const start = Date.now();
    const a = await instance(dir, () => start);
    await seedStore(a.fs, 10);
    const expected = (await (await a.services.tools.snapshot("acme", "shop")).tools()).map(
      (tool) => tool.config,
    );

    // Six minutes on: past the default 300 s safety net, no generation moved.
    const later = start + 6 * 60 * 1000;
    const b = await instance(dir, () => later);
    b.documents.reset();
    expect(
      (await (await b.services.tools.snapshot("acme", "shop")).tools()).map((tool) => tool.config),
    ).toEqual(expected);
    expect(b.documents.counts).toMatchObject({ get: 2, list: 2, put: 2 });

    const c = await instance(dir, () => later);
    c.documents.reset();
    await (await c.services.tools.snapshot("acme", "shop")).tools();
    expect(c.documents.counts).toMatchObject({ get: 2, list: 0, put: 0 });
  });

  it("a write through the API rebuilds the layer's index off its answer: a fresh instance's cold manifest then reads one object per layer and no document", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await a.services.syncCatalog();
    await seedStore(a.fs, 200);
    const { processId } = await a.client.spawn({ allowedToolsAdd: ["@bulk"], models: ["openai/gpt-4.1"] });
    await a.client.manifest(processId);
    await a.services.compiledLayers.settled();

    // A replacement, a creation, a deletion, a document beside the tools, and a tenant tool.
    a.documents.reset();
    await a.client.putTool("f0_t0", docTool("tool 0, rewritten", "labels: [bulk]\n"));
    await a.services.compiledLayers.settled();
    // The rebuild: the index GET, one LIST, the one changed document's GET, the index PUT.
    expect(a.documents.counts).toMatchObject({ get: 1 + 1, list: 1 });
    expect(a.services.compiledLayers.stats).toMatchObject({ written: 1, failed: 0 });
    await a.client.putTool("fresh", docTool("a new tool", "labels: [bulk]\n"));
    await a.client.putTool("shared", docTool("a tenant tool", "labels: [bulk]\n"), "_tenant");
    const removed = await a.client.call("DELETE", "/tools/f0_t1");
    expect(removed.status).toBe(204);
    const guide = await a.client.call("PUT", "/documents/documents/guide.md", "# guide", "text/markdown");
    expect(guide.status).toBeLessThan(300);
    await a.services.compiledLayers.settled();
    expect(a.services.compiledLayers.stats.failed).toBe(0);
    const after = await a.client.spawn({ allowedToolsAdd: ["@bulk"], models: ["openai/gpt-4.1"] });
    const expected = await a.client.manifest(after.processId);
    const names = [...expected.primary, ...expected.deferred, ...expected.demoted];
    expect(names).toContain("fresh");
    expect(names).toContain("shared");
    expect(names).not.toContain("f0_t1");

    const b = await instance(dir);
    b.documents.reset();
    expect(await b.client.manifest(after.processId)).toEqual(expected);
    // Each layer's index, current: one GET each — no LIST, no document read, no rewrite.
    expect(b.documents.counts).toEqual({ get: 2, list: 0, ...NO_WRITES });
    expect(
      (await (await b.services.tools.snapshot("acme", "shop")).tools()).find((tool) => tool.name === "f0_t0")
        ?.config.description,
    ).toBe("tool 0, rewritten");
    expect(b.documents.counts).toEqual({ get: 2, list: 0, ...NO_WRITES });
  });

  it("a write into a layer that had no index yet writes one: the next cold instance reads no document", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await seedStore(a.fs, 30);
    // No listing ever ran on this store: the write's rebuild reads every document once.
    a.documents.reset();
    await a.client.putTool("fresh", docTool("a new tool", "labels: [bulk]\n"));
    await a.services.compiledLayers.settled();
    expect(a.documents.counts).toMatchObject({ get: 1 + 31, list: 1 });

    const b = await instance(dir);
    b.documents.reset();
    const tools = await (await b.services.tools.snapshot("acme", "shop")).tools();
    expect(tools.filter((tool) => tool.layer === "project")).toHaveLength(31);
    // The project layer's index; the tenant layer has none (nothing was written there): its LIST.
    expect(b.documents.counts).toMatchObject({ get: 2, list: 1 });
  });

  it("the store scan (the local stand-in for bucket events) rebuilds the index of each layer it bumps", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await seedStore(a.fs, 20);
    await (await a.services.tools.snapshot("acme", "shop")).tools();
    await a.services.scanStores();
    // Behind the service's back, as an editor or `cp` would.
    expect(
      (await a.fs.put("acme/shop/server-tools/behind.yaml", docTool("behind", "labels: [bulk]\n"))).ok,
    ).toBe(true);
    expect(await a.services.scanStores()).toEqual(["documents/acme/shop"]);
    await a.services.compiledLayers.settled();

    const b = await instance(dir);
    b.documents.reset();
    const tools = await (await b.services.tools.snapshot("acme", "shop")).tools();
    expect(tools.find((tool) => tool.name === "behind")?.config.description).toBe("behind");
    expect(b.documents.counts).toMatchObject({ get: 2, list: 0, ...NO_WRITES });
  });

  it("concurrent cold listings of one instance share the index GET and write the rebuilt index once", async () => {
    const dir = dataDir();
    const a = await instance(dir);
    await seedStore(a.fs, 10);
    await (await a.services.tools.snapshot("acme", "shop")).tools();
    await staleAfter(a, () => a.client.putTool("f0_t0", docTool("tool 0, rewritten", "labels: [bulk]\n")));

    const b = await instance(dir);
    b.documents.reset();
    const listings = await Promise.all(
      Array.from({ length: 5 }, async () => (await b.services.tools.snapshot("acme", "shop")).tools()),
    );
    for (const listing of listings) expect(listing).toEqual(listings[0]);
    // Each layer's index read once; only the project's (stale) index written again, once.
    expect(b.documents.counts.put).toBe(1);
    expect(b.documents.counts.list).toBeLessThanOrEqual(1);
  });

  it("an index write replaces only the version it read: a builder that lost the race leaves the other's index", async () => {
    const store = new FsObjectStore(join(dataDir(), "documents"));
    const layers = new CompiledToolLayers(store, "fp");
    const layer = (generation: number) => ({ stamp: { generation, at: 1 }, entries: [] });
    expect(await layers.write("acme", "shop", layer(3), null)).toBe(true);
    const first = await layers.read("acme", "shop");
    expect(first).toMatchObject({ status: "found", layer: { stamp: { generation: 3 } } });
    // A second builder that also saw no index comes too late.
    expect(await layers.write("acme", "shop", layer(2), null)).toBe(false);
    expect(await layers.write("acme", "shop", layer(4), first.status === "found" ? first.etag : "")).toBe(
      true,
    );
    // The first builder, still holding the version it read, cannot replace the newer one.
    expect(await layers.write("acme", "shop", layer(3), first.status === "found" ? first.etag : "")).toBe(
      false,
    );
    expect(await layers.read("acme", "shop")).toMatchObject({ layer: { stamp: { generation: 4 } } });
    expect(await new CompiledToolLayers(store, "other types").read("acme", "shop")).toMatchObject({
      status: "unusable",
    });
    expect(layers.stats).toMatchObject({ writes: 2, conflicts: 2 });
  });
});
