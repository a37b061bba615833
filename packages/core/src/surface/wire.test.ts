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
    const manifest = Object.freeze({ tools: [counted.tool(tool, "openai")] });
    counted.body(manifest);
    counted.tool(tool, "openai");
    counted.body(manifest);
    expect(counted.cacheReports()).toEqual({
      tools: { hits: 1, misses: 1 },
      toolJson: { hits: 0, misses: 1 },
      manifestBodies: { hits: 1, misses: 1 },
    });
  });
});
