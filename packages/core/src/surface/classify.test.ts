import { describe, expect, it } from "vitest";
import {
  type ClassificationInput,
  classifyTools,
  configureTools,
  isDeferred,
  prepareClassification,
  type SurfaceTool,
} from "./classify";
import { toolFamily } from "./tool-family";

const tool = (name: string, primary = true, extra: Partial<SurfaceTool> = {}): SurfaceTool => ({
  name,
  description: `${name}.`,
  inputSchema: { type: "object" },
  origin: "configured",
  primary,
  defaultDeferred: false,
  ...extra,
});

const floor = [tool("tool_list"), tool("tool_description")];
const noHints = {
  allowedToolsAdd: [],
  allowedToolsKeep: [],
  allowedToolsDefer: [],
  allowedToolsDropFirst: [],
};

function input(tools: SurfaceTool[], overrides: Partial<ClassificationInput> = {}): ClassificationInput {
  return {
    tools: [...floor, ...tools],
    hints: noHints,
    activated: new Map(),
    demand: new Map(),
    limit: null,
    ...overrides,
  };
}

describe("classifyTools", () => {
  it("puts primary tools and the floor in the array, the rest on request", () => {
    const result = classifyTools(input([tool("b_tool"), tool("a_side", false)]));
    expect(result.primary).toEqual(["b_tool", "tool_description", "tool_list"]);
    expect(result.deferred).toEqual(["a_side"]);
    expect(result.staticDeferred).toEqual(["a_side"]);
  });

  it("promotes names in allowedToolsAdd and allowedToolsKeep; allowedToolsDefer wins over both", () => {
    const hints = {
      ...noHints,
      allowedToolsAdd: ["x_add"],
      allowedToolsKeep: ["y_*"],
      allowedToolsDefer: ["y_two"],
    };
    const result = classifyTools(
      input([tool("x_add", false), tool("y_one", false), tool("y_two", true)], { hints }),
    );
    expect(result.primary).toEqual(["tool_description", "tool_list", "x_add", "y_one"]);
    expect(result.deferred).toEqual(["y_two"]);
  });

  it("packs with defaultDeferred start deferred; activation makes a deferred tool primary", () => {
    const pack = [
      tool("gm__a", true, { defaultDeferred: true }),
      tool("gm__b", true, { defaultDeferred: true }),
    ];
    const result = classifyTools(input(pack, { activated: new Map([["gm__b", 5]]) }));
    expect(result.primary).toContain("gm__b");
    expect(result.staticDeferred).toEqual(["gm__a"]);
  });

  it("demotes in class order: dropFirst, pack, built-in, add, keep, activated", () => {
    const tools = [
      tool("aa_keep"),
      tool("bb_add"),
      tool("cc_plain"),
      tool("dd__op"),
      tool("ee_drop"),
      tool("ff_active", false),
    ];
    const hints = {
      ...noHints,
      allowedToolsKeep: ["aa_keep"],
      allowedToolsAdd: ["bb_add"],
      allowedToolsDropFirst: ["ee_drop"],
    };
    const order: string[] = [];
    for (let limit = 7; limit >= 2; limit--) {
      const result = classifyTools(input(tools, { hints, activated: new Map([["ff_active", 1]]), limit }));
      expect(result.primary.length).toBeLessThanOrEqual(limit);
      for (const name of result.demoted) if (!order.includes(name)) order.push(name);
    }
    expect(order).toEqual(["ee_drop", "dd__op", "cc_plain", "bb_add", "aa_keep", "ff_active"]);
  });

  it("within a class, lower demand goes first; ties go by family name", () => {
    const tools = [tool("alpha_x"), tool("beta_x"), tool("gamma_x")];
    const demand = new Map([
      ["alpha_x", 9],
      ["beta_x", 1],
      ["gamma_x", 5],
    ]);
    expect(classifyTools(input(tools, { demand, limit: 4 })).demoted).toEqual(["beta_x"]);
    expect(classifyTools(input(tools, { limit: 4 })).demoted).toEqual(["alpha_x"]);
  });

  it("keeps families whole and never half-shows a pack", () => {
    const tools = ["p__1", "p__2", "p__3", "q__1", "doc_a", "doc_b"].map((name) => tool(name));
    const result = classifyTools(input(tools, { limit: 5 }));
    const families = new Set(result.demoted.map(toolFamily));
    for (const name of result.primary) expect(families.has(toolFamily(name))).toBe(false);
    expect(result.demoted).toEqual(["p__1", "p__2", "p__3"]);
  });

  it("throws budget_floor_exceeded when the floor alone is over the limit", () => {
    expect(() => classifyTools(input([], { limit: 1 }))).toThrowError(/floor/);
  });

  it("the static deferred list is deferred minus demoted: demotions never change it, an activation takes its tool out (spec §14.3)", () => {
    const tools = [tool("a_1"), tool("a_2"), tool("b_1", false), tool("b_2", false), tool("c__1")];
    const free = classifyTools(input(tools));
    expect(free.staticDeferred).toEqual(["b_1", "b_2"]);
    const tight = classifyTools(input(tools, { limit: 3 }));
    expect(tight.demoted.length).toBeGreaterThan(0);
    expect(tight.staticDeferred).toEqual(free.staticDeferred);
    const activated = classifyTools(input(tools, { activated: new Map([["b_1", 3]]) }));
    expect(activated.staticDeferred).toEqual(["b_2"]);
    // Activated, then demoted by the budget: only the dynamic half lists it.
    const both = classifyTools(input(tools, { limit: 2, activated: new Map([["b_1", 3]]) }));
    expect(both.demoted).toContain("b_1");
    expect(both.staticDeferred).toEqual(["b_2"]);
    expect(both.staticDeferred.filter((name) => both.demoted.includes(name))).toEqual([]);
  });
});

describe("the classification memo (configureTools, kept per process and listing)", () => {
  /** A seeded generator (mulberry32): the same cases on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it("one configureTools reused across activations, skills and limits classifies as a fresh classification does, and every tool is primary or deferred", () => {
    const next = random(36);
    for (let round = 0; round < 40; round++) {
      const tools = [...floor];
      for (let i = 0; i < 60; i++) {
        const inPack = next() < 0.6;
        const name = inPack ? `pk${Math.floor(next() * 3)}__op_${i}` : `fam${Math.floor(next() * 4)}_t${i}`;
        tools.push(tool(name, next() < 0.5, { defaultDeferred: inPack && next() < 0.8 }));
      }
      const names = tools.map((one) => one.name);
      const pick = (share: number) => names.filter(() => next() < share);
      const hints = {
        allowedToolsAdd: pick(0.05),
        allowedToolsKeep: next() < 0.5 ? ["fam1_*"] : pick(0.05),
        allowedToolsDefer: pick(0.05),
        allowedToolsDropFirst: next() < 0.5 ? ["fam2_*"] : [],
      };
      const configured = configureTools(tools, hints);
      for (let turn = 0; turn < 5; turn++) {
        const activated = new Map(pick(0.1).map((name, index) => [name, 1_000 + index] as const));
        const skills = pick(0.03);
        const limit = next() < 0.5 ? null : 4 + Math.floor(next() * 30);
        const base = { tools, hints, activated, additional: skills, limit };
        const fresh = prepareClassification(base).finish(new Map());
        const kept = prepareClassification({ ...base, configured }).finish(new Map());
        expect({ ...kept }).toEqual({ ...fresh });
        // Every tool is in exactly one of primary and deferred, each in name order.
        expect([...kept.primary, ...kept.deferred].sort()).toEqual([...names].sort());
        expect(kept.deferred).toEqual([...kept.deferred].sort());
        for (const name of names) {
          expect(isDeferred(kept, new Set(names), name)).toBe(kept.deferred.includes(name));
        }
        // An activated tool is primary unless the budget demoted it.
        for (const name of activated.keys())
          if (!kept.demoted.includes(name)) expect(kept.primary).toContain(name);
      }
    }
  });
});
