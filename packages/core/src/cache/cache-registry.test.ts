import { LRUCache } from "lru-cache";
import { describe, expect, it } from "vitest";
import { CacheCounters, CacheRegistry, lruExtent } from "./cache-registry";

describe("CacheRegistry", () => {
  it("lists every registered cache by name, sorted, a service's caches under its prefix", () => {
    const registry = new CacheRegistry();
    const counters = new CacheCounters();
    registry.register("zeta", () => counters.report({ entries: 2 }));
    registry.registerAll("alpha", {
      cacheReports: () => ({ b: { hits: 1, misses: 0 }, a: { hits: 0, misses: 3 } }),
    });
    counters.read("found");
    counters.read(undefined);
    expect(registry.list()).toEqual([
      { name: "alpha.a", hits: 0, misses: 3 },
      { name: "alpha.b", hits: 1, misses: 0 },
      { name: "zeta", hits: 1, misses: 1, entries: 2 },
    ]);
  });

  it("refuses a name registered twice, as a cache or as a prefix", () => {
    const registry = new CacheRegistry();
    registry.register("documents", () => ({ hits: 0, misses: 0 }));
    expect(() => registry.register("documents", () => ({ hits: 0, misses: 0 }))).toThrow(/twice/);
    expect(() => registry.registerAll("documents", { cacheReports: () => ({}) })).toThrow(/twice/);
  });

  it("reports an lru-cache's entries, and its bytes only when it is bounded by size", () => {
    const byCount = new LRUCache<string, string>({ max: 4 });
    byCount.set("a", "1");
    expect(lruExtent(byCount)).toEqual({ entries: 1, maxEntries: 4 });
    const bySize = new LRUCache<string, string>({ maxSize: 100, sizeCalculation: (value) => value.length });
    bySize.set("a", "12345");
    expect(lruExtent(bySize)).toEqual({ entries: 1, bytes: 5, maxBytes: 100 });
    expect(lruExtent(bySize, false)).toEqual({ entries: 1 });
  });
});
