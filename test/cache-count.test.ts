import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";

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
      "allowedToolsAdd",
      "documents",
      "identity.verifiedTokens",
      "jsonSchemas",
      "mcpServer.parsedServers",
      "mcpServer.serverOfSubTool",
      "secrets.values",
      "sources.lists",
      "tools.compiledLayers",
      "tools.listedLayers",
      "tools.parsed",
      "tools.snapshots",
      "usage.demand",
    ]);
  });
});
