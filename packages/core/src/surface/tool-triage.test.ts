import { describe, expect, it } from "vitest";
import { packSubFamily } from "./tool-family";
import { type TriageCandidate, triageTools } from "./tool-triage";

const floor: TriageCandidate[] = ["tool_description", "tool_list"].map((name) => ({
  name,
  triageClass: "mandatory",
  demand: 0,
  namedInHint: false,
}));

/** A pack of `families` families of `size` sub-tools each (`big__f3_op7`). */
function pack(families: number, size: (family: number) => number): TriageCandidate[] {
  return Array.from({ length: families }, (_, family) =>
    Array.from({ length: size(family) }, (_, op) => ({
      name: `big__f${family}_op${op}`,
      triageClass: "add" as const,
      demand: 0,
      namedInHint: false,
    })),
  ).flat();
}

function families(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) {
    if (!name.startsWith("big__")) continue;
    const family = packSubFamily(name);
    counts.set(family, (counts.get(family) ?? 0) + 1);
  }
  return counts;
}

describe("triage of a pack larger than the budget (issue 23)", () => {
  it("keeps whole families inside the pack up to the limit instead of demoting the pack to an empty array", () => {
    // 500 sub-tools in 40 families of 5 to 20; limit 127 with a floor of 2.
    const candidates = [...floor, ...pack(40, (family) => 5 + (family % 16))];
    const all = families(candidates.map((candidate) => candidate.name));
    const result = triageTools(candidates, 127);
    expect(result.kept.length).toBeLessThanOrEqual(127);
    expect(result.kept.length).toBeGreaterThanOrEqual(120);
    // No family half visible: each is all kept or all demoted.
    const kept = families(result.kept);
    for (const [family, count] of kept) expect(count, family).toBe(all.get(family));
    // No free slot a demoted family could fill.
    const room = 127 - result.kept.length;
    for (const unit of result.demotedUnits) expect(unit.tools, unit.family).toBeGreaterThan(room);
    expect(result.demotedUnits.every((unit) => unit.family.startsWith("big__f"))).toBe(true);
    expect(result.kept.length + result.demoted.length).toBe(candidates.length);
  });

  it("a pack that fits the budget whole stays one family: demoted whole, never cut", () => {
    const other: TriageCandidate[] = Array.from({ length: 100 }, (_, i) => ({
      name: `keep_${String(i).padStart(3, "0")}`,
      triageClass: "keep",
      demand: 0,
      namedInHint: false,
    }));
    const candidates = [...floor, ...other, ...pack(4, () => 10)];
    const result = triageTools(candidates, 127);
    expect(result.kept.filter((name) => name.startsWith("big__"))).toEqual([]);
    expect(result.demotedUnits).toEqual([{ family: "big", triageClass: "add", tools: 40 }]);
  });

  const tools = (prefix: string, n: number, triageClass: TriageCandidate["triageClass"]) =>
    Array.from({ length: n }, (_, i) => ({
      name: `${prefix}_${i}`,
      triageClass,
      demand: 0,
      namedInHint: false,
    }));

  it("brings back a smaller family of the same class demoted earlier when the last demotion freed more than needed", () => {
    // 10 over the limit: `small` (3, least demand) goes, then `large` (50, same class); 3 fit back.
    const candidates = [
      ...floor,
      ...tools("small", 3, "builtIn"),
      ...tools("large", 50, "builtIn").map((candidate) => ({ ...candidate, demand: 1 })),
      ...tools("main", 82, "keep"),
    ];
    const result = triageTools(candidates, 127);
    expect(result.demotedUnits).toEqual([{ family: "large", triageClass: "builtIn", tools: 50 }]);
    expect(result.kept).toContain("small_0");
  });

  it("never brings back a lower class while a higher-class family that could be on the wire stays demoted (§14.2: order determines membership)", () => {
    // `small` (dropFirst) goes, then `large` (builtIn, 50): 43 slots free, but `large` needs 50.
    // Bringing `small` back would put a dropFirst family on the wire while a builtIn one is not.
    const candidates = [
      ...floor,
      ...tools("small", 3, "dropFirst"),
      ...tools("large", 50, "builtIn"),
      ...tools("main", 82, "keep"),
    ];
    const result = triageTools(candidates, 127);
    expect(result.demotedUnits).toEqual([
      { family: "small", triageClass: "dropFirst", tools: 3 },
      { family: "large", triageClass: "builtIn", tools: 50 },
    ]);
    expect(result.kept.filter((name) => name.startsWith("small_"))).toEqual([]);
    expect(result.kept.length).toBe(84);
  });

  it("a lower class still fills the room a pack that could never be whole leaves", () => {
    // The `add` pack (200 sub-tools) can never be on the wire whole under 127: its families come
    // back while they fit, and what room is left still takes the dropFirst family.
    const candidates = [...floor, ...tools("small", 2, "dropFirst"), ...pack(20, () => 10)];
    const result = triageTools(candidates, 127);
    expect(result.kept).toContain("small_0");
    expect(result.kept.length).toBeLessThanOrEqual(127);
  });
});

describe("triage by the tools array's tokens (maxToolTokens)", () => {
  it("demotes whole families until the schemas fit the token limit, with no count limit, and refills what fits", () => {
    const candidates = [
      ...floor.map((candidate) => ({ ...candidate, tokens: 100 })),
      ...pack(40, (family) => 5 + (family % 16)).map((candidate) => ({ ...candidate, tokens: 50 })),
    ];
    const all = families(candidates.map((candidate) => candidate.name));
    const result = triageTools(candidates, null, 3_000);
    const tokensOf = (names: readonly string[]) =>
      names.reduce((sum, name) => sum + candidates.find((candidate) => candidate.name === name)!.tokens, 0);
    expect(tokensOf(result.kept)).toBeLessThanOrEqual(3_000);
    // The pack could never be whole (it takes ~25,000 tokens): its families come back while they fit.
    const kept = families(result.kept);
    expect(kept.size).toBeGreaterThan(1);
    for (const [family, count] of kept) expect(count, family).toBe(all.get(family));
    const spare = 3_000 - tokensOf(result.kept);
    const demoted = families(result.demoted);
    for (const [family, count] of demoted) expect(count * 50, family).toBeGreaterThan(spare);
    expect(result.kept).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
  });

  it("a floor larger than the token limit is a configuration error", () => {
    const candidates = floor.map((candidate) => ({ ...candidate, tokens: 100 }));
    expect(() => triageTools(candidates, null, 150)).toThrow(/raise maxToolTokens/);
  });

  it("without a token limit the tokens change nothing", () => {
    const candidates = pack(3, () => 4).map((candidate) => ({ ...candidate, tokens: 10_000 }));
    expect(triageTools(candidates, null).demoted).toEqual([]);
  });
});
