import { rmSync } from "node:fs";
import type { CacheReport } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

/**
 * Issue 38: at most 15 caches, each listed in `/v1/metrics`. Adding a cache means listing it
 * here and keeping the count — remove one (derive the view on a snapshot version, keep it on an
 * entry that exists already) before adding a sixteenth.
 */
const MAX_CACHES = 15;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("GET /v1/metrics: the instance's caches", () => {
  it(`lists at most ${MAX_CACHES} caches, each once, these by name`, async () => {
    const { app, dataDir } = await testApp();
    dirs.push(dataDir);
    const res = await app.request("/v1/metrics", { headers: await bearer({ tenant: "*", roles: [] }) });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { caches: { name: string }[] }).caches.map((cache) => cache.name);
    expect(names.length).toBeLessThanOrEqual(MAX_CACHES);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([
      "allowSets",
      "catalog",
      "documents",
      "identity.verifiedTokens",
      "jsonSchemas",
      "mcpServer.parsedServers",
      "mcpServer.serverOfSubTool",
      "processes.parsed",
      "secrets.values",
      "sources.lists",
      "tools.compiledLayers",
      "tools.listedLayers",
      "tools.parsed",
      "tools.snapshots",
      "usage.demand",
    ]);
  });

  it("lists the model catalog and the learned limits as `catalog`: a warm budget answers from it", async () => {
    const { app, dataDir } = await testApp();
    dirs.push(dataDir);
    const platform = await bearer({ tenant: "*", roles: [] });
    const catalog = async () => {
      const res = await app.request("/v1/metrics", { headers: platform });
      const caches = ((await res.json()) as { caches: ({ name: string } & CacheReport)[] }).caches;
      return caches.find((cache) => cache.name === "catalog");
    };
    const budget = async () =>
      (await app.request("/v1/models/budget?chain=openai/gpt-4.1", { headers: platform })).status;

    expect(await budget()).toBe(200);
    const cold = await catalog();
    expect(cold).toMatchObject({ entries: expect.any(Number), maxEntries: expect.any(Number) });
    expect(cold!.entries).toBeGreaterThan(0);
    expect(await budget()).toBe(200);
    const warm = await catalog();
    // The second budget read the catalog and the limit's absence from what the first one kept.
    expect(warm!.hits).toBeGreaterThanOrEqual(cold!.hits + 2);
    expect(warm!.misses).toBe(cold!.misses);
  });

  it("lists the state store's parsed process records: a turn of an unchanged record parses nothing", async () => {
    const { app, dataDir } = await testApp();
    dirs.push(dataDir);
    const platform = await bearer({ tenant: "*", roles: [] });
    const parsed = async () => {
      const res = await app.request("/v1/metrics", { headers: platform });
      const caches = ((await res.json()) as { caches: ({ name: string } & CacheReport)[] }).caches;
      return caches.find((cache) => cache.name === "processes.parsed")!;
    };
    const client = await projectClient(app);
    const { processId } = await client.spawn({ models: [] });
    await client.manifest(processId);
    const first = await parsed();
    expect(first.entries).toBe(1);
    expect(first.bytes).toBeGreaterThan(0);
    await client.manifest(processId);
    await client.manifest(processId);
    const warm = await parsed();
    expect(warm.hits).toBe(first.hits + 2);
    expect(warm.misses).toBe(first.misses);
  });
});
