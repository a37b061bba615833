import { SqliteStateStore } from "@vance/adapters/sqlite";
import { MemoryObjectStore } from "@vance/adapters/testing";
import { DocumentCascade, Generations, layerMarker } from "@vance/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { docTool, toolServices } from "./support/fixtures";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function sqlite() {
  const state = new SqliteStateStore(":memory:");
  cleanups.push(() => state.close());
  return state;
}

describe("Generations", () => {
  it("never moves a marker back: a read that answers late with an older generation is ignored", async () => {
    const generations = new Generations({ state: sqlite() });
    let answerOld!: (generations: number[]) => void;
    const slow = generations.readAlong(["m"], async () => ({
      value: "slow",
      generations: await new Promise<number[]>((resolve) => {
        answerOld = resolve;
      }),
    }));
    await generations.readAlong(["m"], async () => ({ value: "fast", generations: [7] }));
    answerOld([6]);
    await slow;
    const stamp = generations.stamp("m");
    expect(stamp.generation).toBe(7);
    expect(generations.isCurrent("m", stamp)).toBe(true);
  });

  it("ensure reads only the markers it does not know, all in one request", async () => {
    const state = sqlite();
    const read = vi.spyOn(state, "getGenerations");
    const generations = new Generations({ state });
    await generations.ensure(["a", "b"]);
    await generations.ensure(["a", "b", "c"]);
    await generations.ensure(["c", "a"]);
    expect(read.mock.calls).toEqual([[["a", "b"]], [["c"]]]);
  });

  it("a stamp stops being current when the marker moves, or when the safety net's time has passed", async () => {
    let now = 1_000_000;
    const state = sqlite();
    const generations = new Generations({ state, now: () => now, revalidateAfterMs: 60_000 });
    await generations.read(["m"]);
    const stamp = generations.stamp("m");
    now += 59_999;
    expect(generations.isCurrent("m", stamp)).toBe(true);
    now += 1;
    expect(generations.isCurrent("m", stamp)).toBe(false);

    const fresh = generations.stamp("m");
    await state.bumpGeneration("m");
    expect(generations.isCurrent("m", fresh)).toBe(true);
    await generations.read(["m"]);
    expect(generations.isCurrent("m", fresh)).toBe(false);
    expect(generations.isCurrent("never-read", { generation: 0, at: now })).toBe(false);
  });
});

describe("DocumentCascade with generations", () => {
  it("concurrent cold listings of one layer share one LIST; a warm one needs none until the layer moves", async () => {
    const state = sqlite();
    const generations = new Generations({ state });
    const { tools, store } = toolServices({ store: new MemoryObjectStore(), generations });
    await tools.put("acme", "shop", "one", docTool("one"));
    const fresh = toolServices({ store, generations: new Generations({ state }) });
    fresh.store.reset();
    const lists = await Promise.all([1, 2, 3].map(() => fresh.tools.listAll("acme", "shop")));
    expect(lists[1]).toEqual(lists[0]);
    expect(fresh.store.counts.list).toBe(2);

    fresh.store.reset();
    await fresh.tools.listAll("acme", "shop");
    expect(fresh.store.counts).toEqual({ get: 0, put: 0, delete: 0, list: 0 });

    await tools.put("acme", "_tenant", "two", docTool("two"));
    fresh.store.reset();
    expect((await fresh.tools.listAll("acme", "shop")).map((tool) => tool.name)).toContain("two");
    expect(fresh.store.counts.list).toBe(1);
  });

  it("a write the store took but whose bump failed answers the state store's error", async () => {
    const state = sqlite();
    const generations = new Generations({ state });
    vi.spyOn(state, "bumpGeneration").mockRejectedValueOnce(new Error("state store down"));
    const cascade = new DocumentCascade(new MemoryObjectStore(), new Map(), { generations });
    await expect(cascade.upsert("acme", "shop", "documents/a.md", "a", {})).rejects.toThrow(
      "state store down",
    );
    expect(await state.getGenerations([layerMarker("acme", "shop")])).toEqual([0]);
  });
});
