import { LRUCache } from "lru-cache";
import { describe, expect, it } from "vitest";
import { lruExtent } from "./cache-registry";
import { CountedLru } from "./counted-lru";

describe("CountedLru", () => {
  it("keeps and evicts exactly what lru-cache's own `max` does, over a mixed sequence of reads and writes", () => {
    const counted = new CountedLru<string, number>({ max: 16 });
    const reference = new LRUCache<string, number>({ max: 16 });
    // A fixed pseudo-random walk over 40 keys: reads refresh recency, writes insert or replace.
    let seed = 7;
    for (let step = 0; step < 2_000; step++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      const key = `k${Math.floor(seed / 65_536) % 40}`;
      if (seed % 3 === 0) expect(counted.get(key)).toBe(reference.get(key));
      else {
        counted.set(key, step);
        reference.set(key, step);
      }
    }
    expect(counted.size).toBe(16);
    expect([...counted.entries()]).toEqual([...reference.entries()]);
  });

  it("reads as a cache bounded by its entries in /v1/metrics, as one made with `max` does", () => {
    const counted = new CountedLru<string, string>({ max: 4 });
    counted.set("a", "12345");
    expect(lruExtent(counted)).toEqual({ entries: 1, maxEntries: 4 });
    expect(lruExtent(counted)).toEqual(lruExtent(new LRUCache<string, string>({ max: 4 }).set("a", "12345")));
  });

  it("keeps lru-cache's ttl", () => {
    expect(new CountedLru<string, true>({ max: 4, ttl: 500 }).ttl).toBe(500);
  });
});
