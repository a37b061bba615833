import { describe, expect, it } from "vitest";
import type { Logger } from "../ports/logger";
import { ByteCache } from "./byte-cache";
import { TenantByteCache, THRASH_WINDOW_MS } from "./tenant-byte-cache";

const value = (bytes: number) => ({ bytes });

describe("TenantByteCache: each tenant at most its share", () => {
  it("shares the entries as it shares the bytes: tenant A's flood of small entries keeps B's", () => {
    const cache = new TenantByteCache<{ bytes: number }>({
      maxBytes: 1024 * 1024,
      maxEntries: 8,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
    });
    cache.set("tenant-b", "mine", value(1));
    for (let i = 0; i < 20; i++) cache.set("tenant-a", `k${i}`, value(1));
    expect(cache.get("tenant-b", "mine")).toEqual(value(1));
    expect(cache.report()).toMatchObject({ hits: 1, entries: 3, maxEntries: 8 });
    // A kept its two most recent entries (its share of 8 is 2), not its first.
    expect(cache.peek("tenant-a", "k19")).toBeDefined();
    expect(cache.peek("tenant-a", "k0")).toBeUndefined();
  });

  it("evicts a tenant's least recently used entry: a read or a touch keeps an old entry, in the order of use", () => {
    const cache = new TenantByteCache<{ bytes: number }>({
      maxBytes: 400,
      tenantShare: 1,
      sizeOf: (entry) => entry.bytes,
    });
    for (const key of ["k0", "k1", "k2", "k3"]) cache.set("tenant-a", key, value(100));
    expect(cache.get("tenant-a", "k0")).toEqual(value(100));
    expect(cache.touch("tenant-a", "k1")).toBe(true);
    expect(cache.touch("tenant-a", "gone")).toBe(false);
    cache.set("tenant-a", "k4", value(100));
    cache.set("tenant-a", "k5", value(100));
    // k2 and k3 were the least recently used; k0 (read) and k1 (touched) stay.
    expect(["k0", "k1", "k2", "k3", "k4", "k5"].filter((key) => cache.peek("tenant-a", key))).toEqual([
      "k0",
      "k1",
      "k4",
      "k5",
    ]);
    cache.set("tenant-a", "k6", value(100));
    expect(cache.peek("tenant-a", "k0")).toBeUndefined();
    // A touch counts no read: one hit (the get), no miss.
    expect(cache.report()).toMatchObject({ hits: 1, misses: 0, entries: 4, bytes: 400 });
  });

  it("charges a value kept by its key alone to the tenant that set it; any tenant reads it", () => {
    const cache = new TenantByteCache<{ bytes: number }>({
      maxBytes: 400,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
    });
    expect(cache.setCharged("tenant-a", "shared", value(60))).toBe(true);
    expect(cache.bytesOf("tenant-a")).toBe(60);
    expect(cache.getShared("shared")).toEqual(value(60));
    // Larger than a share (100 bytes): not kept.
    expect(cache.setCharged("tenant-b", "large", value(101))).toBe(false);
    // B's flood of its own keys evicts only B's entries.
    for (let i = 0; i < 10; i++) cache.setCharged("tenant-b", `b${i}`, value(50));
    expect(cache.bytesOf("tenant-b")).toBe(100);
    expect(cache.readShared("shared")).toEqual(value(60));
  });
});

describe("TenantByteCache: a full cache evicts the tenant holding the most, never one under its fair share", () => {
  const cacheOf = (options: { maxEntries?: number } = {}) =>
    new TenantByteCache<{ bytes: number }>({
      maxBytes: 1000,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
      ...options,
    });

  it("five tenants filling it to their shares in turn: the small tenant's entries all survive", () => {
    const cache = cacheOf();
    // The small tenant's two entries are the least recently used of the whole cache.
    cache.set("small", "a", value(25));
    cache.set("small", "b", value(25));
    const big = ["t1", "t2", "t3", "t4", "t5"];
    for (let round = 0; round < 12; round++)
      for (const tenant of big) cache.set(tenant, `k${round}`, value(50));
    expect(cache.peek("small", "a")).toEqual(value(25));
    expect(cache.peek("small", "b")).toEqual(value(25));
    expect(cache.report()).toMatchObject({ bytes: 1000, maxBytes: 1000 });
    // The other 950 bytes are split among the five as evenly as 50-byte entries allow.
    const held = big.map((tenant) => cache.bytesOf(tenant));
    expect(held.reduce((sum, bytes) => sum + bytes, 0)).toBe(950);
    expect(Math.max(...held) - Math.min(...held)).toBeLessThanOrEqual(50);
    // Each big tenant kept its most recent entries, its oldest went.
    for (const tenant of big) {
      expect(cache.peek(tenant, "k11")).toBeDefined();
      expect(cache.peek(tenant, "k0")).toBeUndefined();
    }
  });

  it("a tenant alone may still use its whole share, and four tenants theirs: nobody is evicted", () => {
    const alone = cacheOf();
    for (let i = 0; i < 10; i++) alone.set("solo", `k${i}`, value(25));
    expect(alone.bytesOf("solo")).toBe(250);
    const four = cacheOf();
    for (const tenant of ["a", "b", "c", "d"])
      for (let i = 0; i < 10; i++) four.set(tenant, `k${i}`, value(25));
    for (const tenant of ["a", "b", "c", "d"]) {
      expect(four.bytesOf(tenant)).toBe(250);
      expect(four.peek(tenant, "k0")).toEqual(value(25));
    }
  });

  it("does not keep an entry that only a tenant under its fair share could make room for", () => {
    const cache = cacheOf();
    // Four tenants at 190 bytes each (760), a fifth at 190: 950 held, fair share 200 each.
    for (const tenant of ["a", "b", "c", "d", "e"]) cache.set(tenant, "k", value(190));
    // A sixth tenant's 240-byte entry: the fair share falls to 166, every other tenant holds 190,
    // so the newcomer (240 with its entry) holds the most and gives way itself.
    expect(cache.set("f", "k", value(240))).toBe(false);
    expect(cache.bytesOf("f")).toBe(0);
    // A 50-byte one fits once the largest (all tied at 190: the oldest of them) gives one entry.
    expect(cache.set("f", "k", value(50))).toBe(true);
    expect(cache.report().bytes).toBeLessThanOrEqual(1000);
    expect(cache.peek("f", "k")).toEqual(value(50));
  });

  it("shares a full count of entries the same way", () => {
    const cache = cacheOf({ maxEntries: 8 });
    cache.set("small", "mine", value(1));
    for (let round = 0; round < 6; round++)
      for (const tenant of ["t1", "t2", "t3", "t4", "t5"]) cache.set(tenant, `k${round}`, value(1));
    expect(cache.peek("small", "mine")).toEqual(value(1));
    expect(cache.report()).toMatchObject({ entries: 8, maxEntries: 8 });
  });
});

describe("TenantByteCache: a tenant thrashing its share", () => {
  function recorder() {
    const lines: { event: string; fields: Readonly<Record<string, unknown>> | undefined }[] = [];
    const logger: Logger = {
      info: () => {},
      warn: (event, fields) => lines.push({ event, fields }),
    };
    return { logger, lines };
  }

  it("writes one cache_thrash line per tenant and window when its own entries evict more than its share", () => {
    const { logger, lines } = recorder();
    let now = 1_000;
    const cache = new TenantByteCache<{ bytes: number }>({
      maxBytes: 1000,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
      name: "sources.lists",
      logger,
      now: () => now,
    });
    // Tenant A cycles through 20 entries of 50 bytes: from the sixth on, each evicts its own oldest.
    for (let i = 0; i < 20; i++) cache.set("tenant-a", `k${i}`, value(50));
    // Tenant B's working set fits its share: it evicts nothing.
    for (let i = 0; i < 20; i++) cache.set("tenant-b", `k${i % 5}`, value(50));
    expect(lines).toEqual([
      {
        event: "cache_thrash",
        fields: {
          tenant: "tenant-a",
          cache: "sources.lists",
          evictedBytes: 300,
          shareBytes: 250,
          windowSeconds: THRASH_WINDOW_MS / 1000,
        },
      },
    ]);
    expect(cache.report().thrashes).toBe(1);
    // Still thrashing in the same window: no second line.
    for (let i = 20; i < 40; i++) cache.set("tenant-a", `k${i}`, value(50));
    expect(lines).toHaveLength(1);
    // The next window: one more line once it evicted more than its share again.
    now += THRASH_WINDOW_MS;
    for (let i = 40; i < 45; i++) cache.set("tenant-a", `k${i}`, value(50));
    expect(lines).toHaveLength(1);
    cache.set("tenant-a", "k45", value(50));
    expect(lines).toHaveLength(2);
    expect(cache.report().thrashes).toBe(2);
  });

  it("does not count evictions by other tenants' entries as the evicted tenant's thrash", () => {
    const { logger, lines } = recorder();
    const cache = new TenantByteCache<{ bytes: number }>({
      maxBytes: 1000,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
      logger,
      now: () => 0,
    });
    for (let round = 0; round < 5; round++)
      for (const tenant of ["t1", "t2", "t3", "t4", "t5"]) cache.set(tenant, `k${round}`, value(50));
    expect(lines).toEqual([]);
    expect(cache.report().thrashes).toBe(0);
  });
});

describe("ByteCache: keys that name their tenant", () => {
  it("charges each entry to its key's tenant: tenant A's flood keeps tenant B's entry", () => {
    const cache = new ByteCache<{ bytes: number }>({
      maxBytes: 1000,
      maxEntryBytes: 1000,
      tenantShare: 0.25,
      sizeOf: (entry) => entry.bytes,
      tenantOf: (key) => key.slice(0, key.indexOf("/")),
    });
    cache.set("tenant-b/doc", value(100));
    for (let i = 0; i < 40; i++) cache.set(`tenant-a/doc-${i}`, value(100));
    expect(cache.get("tenant-b/doc")).toEqual(value(100));
    expect(cache.bytesOf("tenant-a")).toBe(200);
    expect(cache.stats).toMatchObject({ entries: 3, bytes: 300, maxBytes: 1000 });
  });
});
