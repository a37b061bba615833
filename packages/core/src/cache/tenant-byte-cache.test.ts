import { describe, expect, it } from "vitest";
import { ByteCache } from "./byte-cache";
import { TenantByteCache } from "./tenant-byte-cache";

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
