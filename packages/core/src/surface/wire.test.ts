import { describe, expect, it } from "vitest";
import { manifestBytes, manifestJson, namesVersionOf, wireTool } from "./wire";

const tool = {
  name: "doc_lookup",
  description: "Looks up — a “document”.\n",
  inputSchema: { type: "object" },
};

describe("wire tools", () => {
  it("builds each format's tool, frozen", () => {
    expect(wireTool(tool, "anthropic")).toEqual({
      name: "doc_lookup",
      description: tool.description,
      input_schema: { type: "object" },
    });
    expect(wireTool(tool, "openai")).toEqual({
      type: "function",
      function: { name: "doc_lookup", description: tool.description, parameters: { type: "object" } },
    });
    expect(Object.isFrozen(wireTool(tool, "openai"))).toBe(true);
  });

  it("manifestJson is JSON.stringify byte for byte, with kept tool JSON or without", () => {
    for (const format of ["openai", "anthropic"] as const) {
      const wire = wireTool(tool, format);
      const kept = JSON.stringify(wire);
      const manifest = {
        tools: [wire, { name: "plain", description: "x", input_schema: {} }],
        primary: ["doc_lookup", "plain"],
        deferred: [],
        demoted: [],
        budget: { maxTools: null, reserve: 1, limit: null },
        discoveryBlock: "## More\n- a — b…",
        demotedDiscoveryBlock: "",
      };
      expect(manifestJson(manifest)).toBe(JSON.stringify(manifest));
      expect(manifestJson(manifest, (each) => (each === wire ? kept : JSON.stringify(each)))).toBe(
        JSON.stringify(manifest),
      );
      expect(new TextDecoder().decode(manifestBytes(manifest))).toBe(JSON.stringify(manifest));
    }
    expect(manifestJson({ tools: [] })).toBe(JSON.stringify({ tools: [] }));
  });

  it("versions the name lists: equal lists, equal versions; any other lists, another", () => {
    const version = namesVersionOf(["b", "c"], ["c"]);
    expect(version).toMatch(/^[0-9a-f]{16}$/);
    expect(namesVersionOf([..."bc"], ["c"])).toBe(version);
    const others: [string[], string[]][] = [
      [["b", "c"], []],
      [["b"], ["c"]],
      [["bc"], ["c"]],
      [["c", "b"], ["c"]],
      [["b", "c"], ["b"]],
    ];
    const versions = new Set(others.map(([deferred, demoted]) => namesVersionOf(deferred, demoted)));
    expect(versions.size).toBe(others.length);
    expect(versions.has(version)).toBe(false);
  });
});
