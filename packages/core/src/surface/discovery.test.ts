import { describe, expect, it } from "vitest";
import { collapsedNameLists, DISCOVERY_SUMMARY_TOKENS, discoverySummary, estimateTokens } from "./discovery";

const pack = (family: string, count: number) =>
  Array.from({ length: count }, (_, i) => `gh__${family}_op_number_${String(i).padStart(3, "0")}`);

describe("collapsedNameLists (tool_list without a prefix)", () => {
  it("answers every name while they fit the budget", () => {
    const lists = [
      ["tool_description", "tool_list"],
      ["doc_alpha", "gh__issues_get"],
    ];
    expect(collapsedNameLists(lists, 2_000)).toEqual({ lists, collapsed: false });
  });

  it("collapses a pack's families first and keeps plain names; each entry's prefix is one tool_list expands", () => {
    const available = [...pack("issues", 300), ...pack("pulls", 200), "doc_alpha", "doc_beta"];
    const { lists, collapsed } = collapsedNameLists([["tool_description", "tool_list"], available], 2_000);
    expect(collapsed).toBe(true);
    expect(lists).toEqual([
      ["tool_description", "tool_list"],
      ["doc_alpha", "doc_beta", "gh__issues_* (300 tools)", "gh__pulls_* (200 tools)"],
    ]);
    expect(estimateTokens(JSON.stringify(lists))).toBeLessThanOrEqual(2_000);
  });

  it("past the families, one entry per pack, then as many entries as fit and how many more", () => {
    const families = Array.from({ length: 400 }, (_, i) => `gh__family${i}_x`).flatMap((n) => [n, `${n}_y`]);
    const byPack = collapsedNameLists([[], families], 200);
    expect(byPack.lists).toEqual([[], ["gh__* (800 tools)"]]);
    const packs = Array.from({ length: 400 }, (_, i) => [`pack${i}__a`, `pack${i}__b`]).flat();
    const cut = collapsedNameLists([[], packs], 200);
    expect(estimateTokens(JSON.stringify(cut.lists))).toBeLessThanOrEqual(200);
    expect(cut.lists[1]!.at(-1)).toMatch(/^… and \d+ more entries: call tool_list with a prefix$/);
  });
});

describe("discoverySummary (tool_description's description)", () => {
  it("names small sets with their hints, collapses large ones within its budget, and is empty without deferred tools", () => {
    const small = discoverySummary([{ name: "greet", description: "Greets someone by name. More." }]);
    expect(small).toContain("- greet — Greets someone by name.");
    expect(small).toContain("call tool_description with their names");
    const large = discoverySummary(
      pack("issues", 2_000).map((name) => ({ name, description: `Operation ${name} does things.` })),
    );
    expect(estimateTokens(large)).toBeLessThanOrEqual(DISCOVERY_SUMMARY_TOKENS);
    expect(large).toContain("gh__issues_* (2000 tools)");
    expect(discoverySummary([])).toBe("");
  });
});
