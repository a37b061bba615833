import { describe, expect, it } from "vitest";
import type { CascadeHit, DocumentCascade } from "../cascade/document-cascade";
import { layerDocumentKey, toolDocumentPath } from "../ids";
import { silentLogger } from "../ports/logger";
import { builtInToolTypes } from "../tool-types/builtin-types";
import { ToolTypeRegistry } from "../tool-types/registry";
import { JsonSchemaValidator } from "../validation/json-schema-validator";
import type { CompiledToolLayers } from "./compiled-tool-layers";
import { ParsedToolCache } from "./parsed-tool-cache";

const types = new ToolTypeRegistry(builtInToolTypes());

/** A stored tool document of `tenant`'s project `shop`, as the cascade hands it over. */
function hitOf(tenant: string, name: string, descriptionChars: number): CascadeHit {
  const path = toolDocumentPath(name);
  return {
    layer: "project",
    path,
    key: layerDocumentKey(tenant, "shop", path),
    body: `type: doc_lookup\ndescription: ${"d".repeat(descriptionChars)}\nparameters:\n  path: documents/x.md\n`,
    etag: `"${name}"`,
    contentType: "application/yaml",
    audit: null,
  };
}

describe("ParsedToolCache, shared by tenants", () => {
  it("keeps tenant B's parsed document while tenant A parses documents past its share", async () => {
    // 256 KiB, a quarter (64 KiB) for each tenant; each document is about 9 KiB as counted.
    const cache = new ParsedToolCache(
      {} as DocumentCascade,
      types,
      silentLogger,
      256 * 1024,
      undefined,
      0.25,
    );
    const mine = hitOf("tenant-b", "b_tool", 4_000);
    expect((await cache.interpretStored(mine, "b_tool")).status).toBe("found");
    for (let i = 0; i < 64; i++)
      await cache.interpretStored(hitOf("tenant-a", `a_tool_${i}`, 4_000), `a_tool_${i}`);

    const hits = cache.stats.hits;
    expect(cache.cachedLookup(mine.key!, mine.etag!)?.status).toBe("found");
    expect(cache.stats.hits).toBe(hits + 1);
    // A's flood evicted A's own first documents, not B's.
    const first = hitOf("tenant-a", "a_tool_0", 4_000);
    expect(cache.cachedLookup(first.key!, first.etag!)).toBeUndefined();
    expect(cache.stats.bytes).toBeLessThanOrEqual(256 * 1024);
  });

  it("keeps remembering tenant B's listed layer while tenant A lists more layers than the instance remembers", async () => {
    let layerStates = 0;
    const cascade = {
      layerState: async () => {
        layerStates++;
        return null;
      },
    } as unknown as DocumentCascade;
    const compiled = { stats: { found: 0, missing: 0, unusable: 0 } } as unknown as CompiledToolLayers;
    const cache = new ParsedToolCache(cascade, types, silentLogger, 1024 * 1024, compiled, 0.25);
    cache.listingOf("tenant-b", "shop", ["shop", "_tenant"], 1, 1);
    // 12,000 layers: more than the 10,000 the instance remembers across tenants.
    for (let i = 0; i < 12_000; i++) cache.listingOf("tenant-a", `p${i}`, [`p${i}`], 1, 1);

    // A layer remembered as listed costs no look at its state: B's costs none after A's flood.
    await cache.fromCompiledLayers("tenant-b", ["shop", "_tenant"]);
    expect(layerStates).toBe(0);
    expect(cache.cacheReports().listedLayers).toMatchObject({ hits: 2, entries: 2 + 2_500 });
    // A's oldest layer was forgotten (its own share is 2,500 layers): its state is looked at.
    await cache.fromCompiledLayers("tenant-a", ["p0"]);
    expect(layerStates).toBe(1);
  });
});

describe("ParsedToolCache: a stored document read cold", () => {
  it("compiles its input schema of 200 nodes and more on the worker, not here; the next read is a cache hit", async () => {
    const worker = new JsonSchemaValidator();
    const asked: string[] = [];
    const jsonSchemas = new JsonSchemaValidator(undefined, undefined, {
      offloadCompile: async (tenant, schema) => {
        asked.push(tenant);
        return worker.compileSource(schema);
      },
    });
    const offloading = new ToolTypeRegistry(builtInToolTypes(), { jsonSchemas });
    const cache = new ParsedToolCache(
      {} as DocumentCascade,
      offloading,
      silentLogger,
      1024 * 1024,
      undefined,
    );
    // 250 properties, 20 with a pattern: over 500 nodes.
    const schema = {
      type: "object",
      required: ["p_0"],
      properties: Object.fromEntries(
        Array.from({ length: 250 }, (_, i) => [
          `p_${i}`,
          i < 20 ? { type: "string", pattern: `^p${i}$` } : { type: "integer", minimum: i },
        ]),
      ),
    };
    const path = toolDocumentPath("wide");
    const hit: CascadeHit = {
      layer: "project",
      path,
      key: layerDocumentKey("acme", "shop", path),
      body: `type: mcp\ndescription: wide\nparameters:\n  server: s\n  toolName: wide\n  inputSchema: ${JSON.stringify(schema)}\n`,
      etag: '"1"',
      contentType: "application/yaml",
      audit: null,
    };
    const found = await cache.interpretStored(hit, "wide");
    if (found.status !== "found") throw new Error(`expected the tool, got ${JSON.stringify(found)}`);
    expect(asked).toEqual(["acme"]);
    expect(jsonSchemas.compileCounts()).toEqual({ servingThread: 0, servingThreadLarge: 0, worker: 1 });
    const compiled = jsonSchemas.compiledNow(found.tool.inputSchema);
    if (!compiled?.ok) throw new Error("expected the input schema compiled");
    expect(compiled.validate({ p_0: "x" })).toEqual([{ path: "p_0", message: 'must match pattern "^p0$"' }]);

    const hits = cache.stats.hits;
    expect(await cache.interpretStored(hit, "wide")).toBe(found);
    expect(cache.stats.hits).toBe(hits + 1);
    expect(asked).toEqual(["acme"]);
  });
});
