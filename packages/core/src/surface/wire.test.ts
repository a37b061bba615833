import { describe, expect, it } from "vitest";
import { WireCache } from "./wire";

const tool = {
  name: "doc_lookup",
  description: "Looks up — a “document”.\n",
  inputSchema: { type: "object" },
};

describe("wire tools", () => {
  const wire = new WireCache();
  const toWireTool = wire.tool.bind(wire);
  const manifestJson = wire.json.bind(wire);

  it("builds each tool once per format, frozen", () => {
    expect(toWireTool(tool, "openai")).toBe(toWireTool(tool, "openai"));
    expect(toWireTool(tool, "anthropic")).toEqual({
      name: "doc_lookup",
      description: tool.description,
      input_schema: { type: "object" },
    });
    expect(Object.isFrozen(toWireTool(tool, "openai"))).toBe(true);
  });

  it("manifestJson is JSON.stringify byte for byte, cached fragments or not", () => {
    for (const format of ["openai", "anthropic"] as const) {
      const manifest = {
        tools: [toWireTool(tool, format), { name: "plain", description: "x", input_schema: {} }],
        primary: ["doc_lookup", "plain"],
        deferred: [],
        demoted: [],
        budget: { maxTools: null, reserve: 1, limit: null },
        discoveryBlock: "## More\n- a — b…",
        demotedDiscoveryBlock: "",
      };
      expect(manifestJson(manifest)).toBe(JSON.stringify(manifest));
      expect(manifestJson(manifest)).toBe(JSON.stringify(manifest));
    }
    expect(manifestJson({ tools: [] })).toBe(JSON.stringify({ tools: [] }));
  });

  it("counts its reads: a second manifest of the same frozen object is a hit of each cache", () => {
    const counted = new WireCache();
    const manifest = Object.freeze({ tools: [counted.tool(tool, "openai")], deferred: [], demoted: [] });
    counted.body(manifest);
    counted.tool(tool, "openai");
    counted.body(manifest);
    expect(counted.cacheReports()).toEqual({
      tools: { hits: 1, misses: 1 },
      toolJson: { hits: 0, misses: 1 },
      manifestBodies: { hits: 1, misses: 1 },
    });
  });

  it("answers the name lists' version; without the lists when asked with that version, whole otherwise", () => {
    const wire = new WireCache();
    const manifest = Object.freeze({
      tools: [],
      primary: ["a"],
      deferred: ["b", "c"],
      demoted: ["c"],
      discoveryBlock: "",
    });
    const whole = JSON.parse(new TextDecoder().decode(wire.body(manifest))) as Record<string, unknown>;
    const version = whole.namesVersion as string;
    expect(version).toMatch(/^[0-9a-f]{16}$/);
    expect(whole).toEqual({ ...manifest, namesVersion: version });
    expect(JSON.parse(new TextDecoder().decode(wire.body(manifest, version)))).toEqual({
      tools: [],
      primary: ["a"],
      discoveryBlock: "",
      namesVersion: version,
    });
    expect(JSON.parse(new TextDecoder().decode(wire.body(manifest, "0123456789abcdef")))).toEqual(whole);
    // Equal lists in another manifest: the same version; other lists: another.
    const copy = { tools: [], deferred: [...manifest.deferred], demoted: [...manifest.demoted] };
    expect(wire.namesVersion(copy)).toBe(version);
    const others = [
      { deferred: ["b", "c"], demoted: [] },
      { deferred: ["b"], demoted: ["c"] },
      { deferred: ["bc"], demoted: ["c"] },
      { deferred: ["c", "b"], demoted: ["c"] },
      { deferred: ["b", "c"], demoted: ["b"] },
    ];
    const versions = new Set(others.map((lists) => wire.namesVersion({ tools: [], ...lists })));
    expect(versions.size).toBe(others.length);
    expect(versions.has(version)).toBe(false);
  });
});
