import { readFileSync } from "node:fs";
import { join } from "node:path";
import { builtInToolTypes, cutAtWord, toolHint } from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/** The bundled documents models read: they must stay true to the code. */
describe("the bundled docs", () => {
  it("doc_tools_overview names every tool type, in its description and its document", () => {
    const tool = parse(readFileSync(join(DEFAULTS_DIR, "server-tools/doc_tools_overview.yaml"), "utf8")) as {
      description: string;
      parameters: { path: string };
    };
    const text = readFileSync(join(DEFAULTS_DIR, tool.parameters.path), "utf8");
    const types = builtInToolTypes().map((type) => type.typeId);
    expect(types).toContain("openapi");
    expect(types.filter((type) => !text.includes(`| \`${type}\``))).toEqual([]);
    expect(types.filter((type) => !tool.description.includes(type))).toEqual([]);
  });
});

describe("discovery lines", () => {
  it("are cut between words, never inside one", () => {
    const hint = toolHint(
      "The tool types (doc_lookup, rest, scripted, mcp, mcp_server, openapi, prompt_template), their parameters, and how tools are found, allowed and budgeted per turn.",
    );
    expect(hint.length).toBeLessThanOrEqual(120);
    expect(hint).toBe(
      "The tool types (doc_lookup, rest, scripted, mcp, mcp_server, openapi, prompt_template), their parameters, and how tools…",
    );
    expect(cutAtWord("alpha beta gamma", 12)).toBe("alpha beta");
    expect(cutAtWord("alpha, beta gamma", 7)).toBe("alpha");
    expect(cutAtWord("a".repeat(30), 10)).toBe("a".repeat(10));
  });
});
