import { SqliteStateStore } from "@vance/adapters/sqlite";
import { MemoryObjectStore } from "@vance/adapters/testing";
import {
  DocumentCascade,
  Generations,
  layerMarker,
  requestMarkers,
  StoreUnavailableError,
} from "@vance/core";
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

describe("Generations: concurrent reads of one instance", () => {
  /** A state store whose generation reads answer only when told, each with the generations stored when it started. */
  function heldState() {
    const stored = new Map<string, number>();
    const held: (() => void)[] = [];
    const state = {
      reads: 0,
      stored,
      release: () => {
        for (const answer of held.splice(0)) answer();
      },
      getGenerations: async (markers: readonly string[]) => {
        state.reads++;
        const seen = markers.map((marker) => stored.get(marker) ?? 0);
        await new Promise<void>((resolve) => held.push(resolve));
        return seen;
      },
      bumpGeneration: async (marker: string) => {
        stored.set(marker, (stored.get(marker) ?? 0) + 1);
        return stored.get(marker) ?? 0;
      },
    };
    return state;
  }

  async function settle(): Promise<void> {
    for (let i = 0; i < 10; i++) await Promise.resolve();
  }

  it("N concurrent requests read the generations fewer than N times: all arriving meanwhile share one read", async () => {
    const state = heldState();
    const generations = new Generations({ state });
    const markers = requestMarkers("acme", "web");
    const requests = Array.from({ length: 20 }, () => generations.read(markers));
    await settle();
    expect(state.reads).toBe(1);
    state.release();
    await settle();
    expect(state.reads).toBe(2);
    state.release();
    await Promise.all(requests);
    expect(state.reads).toBe(2);
    expect(generations.stats.reads).toBe(2);
    expect(generations.stats.sharedReads).toBe(18);
  });

  it("never answers a request from a read that started before it: a write finished meanwhile is seen", async () => {
    const state = heldState();
    const generations = new Generations({ state });
    const early = generations.read(["m"]);
    await settle();
    await state.bumpGeneration("m");
    const late = generations.read(["m"]);
    state.release();
    await early;
    expect(generations.stamp("m").generation).toBe(0);
    await settle();
    state.release();
    await late;
    expect(generations.stamp("m").generation).toBe(1);
    expect(state.reads).toBe(2);
  });

  it("a failed read fails the requests sharing it, and the next request reads again", async () => {
    let fail = true;
    let reads = 0;
    const generations = new Generations({
      state: {
        getGenerations: async (markers) => {
          reads++;
          await Promise.resolve();
          if (fail) throw new Error("state store down");
          return markers.map(() => 4);
        },
        bumpGeneration: async () => 1,
      },
    });
    const first = generations.read(["m"]);
    const shared = [generations.read(["m"]), generations.read(["m"])];
    await expect(first).rejects.toThrow("state store down");
    await expect(Promise.all(shared)).rejects.toThrow("state store down");
    fail = false;
    await generations.read(["m"]);
    expect(generations.stamp("m").generation).toBe(4);
    expect(reads).toBe(3);
  });

  it("reads of different marker sets do not wait for each other", async () => {
    const state = heldState();
    const generations = new Generations({ state });
    const a = generations.read(["a"]);
    const b = generations.read(["b"]);
    await settle();
    expect(state.reads).toBe(2);
    state.release();
    await Promise.all([a, b]);
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
    const lists = await Promise.all(
      [1, 2, 3].map(async () => (await fresh.tools.snapshot("acme", "shop")).tools()),
    );
    expect(lists[1]).toEqual(lists[0]);
    expect(fresh.store.counts.list).toBe(2);

    fresh.store.reset();
    await (await fresh.tools.snapshot("acme", "shop")).tools();
    expect(fresh.store.counts).toEqual({ get: 0, put: 0, delete: 0, list: 0 });

    await tools.put("acme", "_tenant", "two", docTool("two"));
    fresh.store.reset();
    expect((await (await fresh.tools.snapshot("acme", "shop")).tools()).map((tool) => tool.name)).toContain(
      "two",
    );
    expect(fresh.store.counts.list).toBe(1);
  });

  it("a write the store took whose bump failed unexpectedly answers that error; an unreachable state store leaves the bump pending and resent", async () => {
    const state = sqlite();
    const resends: (() => void)[] = [];
    const generations = new Generations({ state, retryLater: (resend) => resends.push(resend) });
    vi.spyOn(state, "bumpGeneration").mockRejectedValueOnce(new Error("invalid marker"));
    const cascade = new DocumentCascade(new MemoryObjectStore(), new Map(), { generations });
    await expect(cascade.upsert("acme", "shop", "documents/a.md", "a", {})).rejects.toThrow("invalid marker");
    expect(await state.getGenerations([layerMarker("acme", "shop")])).toEqual([0]);

    vi.spyOn(state, "bumpGeneration").mockRejectedValueOnce(
      new StoreUnavailableError("state store", "paused"),
    );
    const written = await cascade.upsert("acme", "shop", "documents/b.md", "b", {});
    expect(written.created).toBe(true);
    expect(generations.isPending(layerMarker("acme", "shop"))).toBe(true);
    expect(resends).toHaveLength(1);
    resends.shift()!();
    expect(await generations.settled(10_000)).toBe(true);
    expect(await state.getGenerations([layerMarker("acme", "shop")])).toEqual([1]);
  });
});
