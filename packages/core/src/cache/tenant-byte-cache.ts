import { LRUCache } from "lru-cache";
import { type Logger, silentLogger } from "../ports/logger";
import type { CacheReport } from "./cache-registry";

/** The share of an instance's bytes one tenant may hold by default: a quarter. */
export const DEFAULT_TENANT_SHARE = 0.25;

/**
 * The window in which a tenant's own evictions are summed: more than its share evicted by its
 * own entries within one is a `cache_thrash` (its working set does not fit its share).
 */
export const THRASH_WINDOW_MS = 60_000;

export interface TenantByteCacheOptions<V> {
  /** Bytes the instance keeps in this cache, across tenants. */
  readonly maxBytes: number;
  /** The part of `maxBytes` one tenant may hold (0 < share ≤ 1); `DEFAULT_TENANT_SHARE` by default. */
  readonly tenantShare?: number;
  /** What one entry costs, in bytes; at least 1. `key` is the key the entry was set under. */
  readonly sizeOf: (value: V, key: string) => number;
  /** The largest entry kept; a share (the largest a tenant may hold) unless smaller. */
  readonly maxEntryBytes?: number;
  /** Entries the instance keeps, across tenants, when they are bounded by count too; each tenant at most its share of them. */
  readonly maxEntries?: number;
  /** The cache's name in `/v1/metrics`, for its `cache_thrash` lines. */
  readonly name?: string;
  /** Where `cache_thrash` lines go; none by default (they are counted all the same). */
  readonly logger?: Logger;
  /** The clock of the thrash windows (ms); `Date.now` by default. */
  readonly now?: () => number;
}

interface Held<V> {
  readonly tenant: string;
  readonly value: V;
  readonly bytes: number;
}

/** What one tenant holds, and its own evictions in the current thrash window. */
interface TenantPart {
  /** The tenant's keys, least recently used first, with their bytes. */
  readonly keys: Recency;
  bytes: number;
  windowStart: number;
  /** Bytes of its own entries its inserts evicted since `windowStart`. */
  evicted: number;
  /** Whether this window's `cache_thrash` line was written. */
  logged: boolean;
}

/**
 * A least-recently-used cache bounded by bytes per instance, in which no tenant can evict
 * everyone else (issue 35 §3). Each tenant holds at most its share: an entry that would take a
 * tenant past it evicts that tenant's own least recently used entries, never another tenant's.
 * And when the cache is full (five tenants at a quarter each fill it), the tenant holding the most
 * gives way first — counting the entry being set, so the inserting tenant when it holds the most —
 * which is always one over its fair share (the bound over the tenants holding entries): a tenant
 * under its fair share is never evicted by others' entries. An entry that could only be kept by
 * evicting such a tenant, or larger than a share, is not kept. With `maxEntries`, the count of
 * entries is shared the same way.
 *
 * A tenant whose own entries evict more than its share of its own within `THRASH_WINDOW_MS`
 * thrashes (its working set does not fit): one WARN line `cache_thrash` per tenant and window,
 * counted in the report (`thrashes`).
 *
 * Two ways to key it, not to be mixed in one cache: `get`/`set` by tenant and key (each tenant's
 * entries apart), or `getShared`/`setCharged` by key alone, the entry charged to the tenant that
 * set it (a value any tenant may read, such as a compiled schema by its text). `ByteCache` is the
 * keyed form for caches whose keys name their tenant.
 */
export class TenantByteCache<V extends object> {
  readonly #entries: LRUCache<string, Held<V>>;
  readonly #parts = new Map<string, TenantPart>();
  readonly #sizeOf: (value: V, key: string) => number;
  readonly #maxBytes: number;
  readonly #share: number;
  readonly #maxEntryBytes: number;
  readonly #entryShare: number;
  readonly #maxEntries: number | undefined;
  readonly #name: string;
  readonly #logger: Logger;
  readonly #now: () => number;
  #hits = 0;
  #misses = 0;
  #thrashes = 0;

  constructor(options: TenantByteCacheOptions<V>) {
    this.#maxBytes = Math.max(1, Math.floor(options.maxBytes));
    this.#share = Math.max(1, Math.floor(this.#maxBytes * (options.tenantShare ?? DEFAULT_TENANT_SHARE)));
    this.#sizeOf = options.sizeOf;
    this.#maxEntryBytes = Math.min(
      this.#share,
      Math.max(1, Math.floor(options.maxEntryBytes ?? this.#maxBytes)),
    );
    this.#maxEntries =
      options.maxEntries === undefined ? undefined : Math.max(1, Math.floor(options.maxEntries));
    this.#entryShare =
      this.#maxEntries === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(1, Math.floor(this.#maxEntries * (options.tenantShare ?? DEFAULT_TENANT_SHARE)));
    this.#name = options.name ?? "cache";
    this.#logger = options.logger ?? silentLogger;
    this.#now = options.now ?? (() => Date.now());
    this.#entries = new LRUCache<string, Held<V>>({
      ...(this.#maxEntries === undefined ? {} : { max: this.#maxEntries }),
      maxSize: this.#maxBytes,
      sizeCalculation: (held) => held.bytes,
      dispose: (held, key) => this.#forget(held.tenant, key, held.bytes),
    });
  }

  /** Bytes one tenant may hold. */
  get tenantShareBytes(): number {
    return this.#share;
  }

  /**
   * The value of `key` in `tenant`'s part, counted as a hit or a miss; one that `current` refuses
   * (a version that no longer holds) is a miss.
   */
  get(tenant: string, key: string, current?: (value: V) => boolean): V | undefined {
    return this.getShared(compose(tenant, key), current);
  }

  /** The value of `key` (a key alone names it: `setCharged`), counted as `get` counts. */
  getShared(key: string, current?: (value: V) => boolean): V | undefined {
    const value = this.readShared(key);
    if (value === undefined || (current && !current(value))) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    return value;
  }

  /** The value of `key` (a key alone names it), its recency refreshed but no read counted. */
  readShared(key: string): V | undefined {
    const held = this.#entries.get(key);
    if (held === undefined) return undefined;
    this.#parts.get(held.tenant)!.keys.touch(key);
    return held.value;
  }

  /** Refreshes the recency of `tenant`'s `key`, no read counted; answers whether it is kept. */
  touch(tenant: string, key: string): boolean {
    return this.readShared(compose(tenant, key)) !== undefined;
  }

  /** Whether `key` (a key alone names it) is kept, without counting or refreshing it. */
  hasShared(key: string): boolean {
    return this.#entries.has(key);
  }

  /** The value of `key` without counting a read or refreshing its recency. */
  peek(tenant: string, key: string): V | undefined {
    return this.#entries.peek(compose(tenant, key))?.value;
  }

  /**
   * Keeps `value` (again: a value whose size changed is set again), first evicting this tenant's
   * least recently used entries while it would exceed its share, then, while the cache is full,
   * the least recently used entries of the tenant holding the most. Answers whether it was kept.
   */
  set(tenant: string, key: string, value: V): boolean {
    return this.#keep(tenant, compose(tenant, key), value, key);
  }

  /**
   * Keeps `value` under `key` alone (any tenant reads it: `getShared`), charged to `tenant`: what
   * `set` does, the tenant's share counting it wherever another tenant set it before.
   */
  setCharged(tenant: string, key: string, value: V): boolean {
    return this.#keep(tenant, key, value, key);
  }

  /** Drops `key` (a key alone names it). */
  deleteShared(key: string): void {
    this.#entries.delete(key);
  }

  #keep(tenant: string, composed: string, value: V, key: string): boolean {
    const bytes = Math.max(1, Math.ceil(this.#sizeOf(value, key)));
    this.#entries.delete(composed);
    if (bytes > this.#maxEntryBytes) return false;
    // The part outlives its last entry's eviction below: its thrash window is kept with it.
    const part = this.#parts.get(tenant) ?? {
      keys: new Recency(),
      bytes: 0,
      windowStart: Number.NEGATIVE_INFINITY,
      evicted: 0,
      logged: false,
    };
    while (part.keys.size > 0 && (part.bytes + bytes > this.#share || part.keys.size + 1 > this.#entryShare))
      this.#evictOwn(tenant, part);
    if (!this.#makeRoom(tenant, part, bytes)) return false;
    this.#parts.set(tenant, part);
    part.keys.set(composed, bytes);
    part.bytes += bytes;
    this.#entries.set(composed, { tenant, value, bytes });
    return true;
  }

  /**
   * While the cache has no room for `bytes` more (or one more entry), evicts the least recently
   * used entry of the tenant holding the most — bytes, or entries when the count is what is full
   * — the inserting tenant counted with its new entry and chosen on a tie. Answers false when that
   * tenant is the inserting one and it has nothing left to give: the entry is not kept.
   */
  #makeRoom(tenant: string, part: TenantPart, bytes: number): boolean {
    for (;;) {
      const byBytes = this.#entries.calculatedSize + bytes > this.#maxBytes;
      const byCount = this.#maxEntries !== undefined && this.#entries.size + 1 > this.#maxEntries;
      if (!byBytes && !byCount) return true;
      const weight = (held: TenantPart) => (byBytes ? held.bytes : held.keys.size);
      let victim = tenant;
      let victimPart = part;
      let most = weight(part) + (byBytes ? bytes : 1);
      for (const [other, held] of this.#parts) {
        if (other !== tenant && weight(held) > most) {
          victim = other;
          victimPart = held;
          most = weight(held);
        }
      }
      if (victim !== tenant) this.#entries.delete(victimPart.keys.oldest()!.key);
      else if (part.keys.size === 0) return false;
      else this.#evictOwn(tenant, part);
    }
  }

  /** Evicts `tenant`'s least recently used entry for its own insert, counting it in its thrash window. */
  #evictOwn(tenant: string, part: TenantPart): void {
    const { key: oldest, bytes } = part.keys.oldest()!;
    this.#entries.delete(oldest);
    const now = this.#now();
    if (now - part.windowStart >= THRASH_WINDOW_MS) {
      part.windowStart = now;
      part.evicted = 0;
      part.logged = false;
    }
    part.evicted += bytes;
    if (part.logged || part.evicted <= this.#share) return;
    part.logged = true;
    this.#thrashes++;
    this.#logger.warn("cache_thrash", {
      tenant,
      cache: this.#name,
      evictedBytes: part.evicted,
      shareBytes: this.#share,
      windowSeconds: THRASH_WINDOW_MS / 1000,
    });
  }

  delete(tenant: string, key: string): void {
    this.#entries.delete(compose(tenant, key));
  }

  /** The bytes `tenant` holds now. */
  bytesOf(tenant: string): number {
    return this.#parts.get(tenant)?.bytes ?? 0;
  }

  /** Hits, misses, entries, bytes and thrash windows, for `/v1/metrics`. */
  report(): CacheReport {
    return {
      hits: this.#hits,
      misses: this.#misses,
      entries: this.#entries.size,
      ...(this.#maxEntries === undefined ? {} : { maxEntries: this.#maxEntries }),
      bytes: this.#entries.calculatedSize,
      maxBytes: this.#entries.maxSize,
      thrashes: this.#thrashes,
    };
  }

  #forget(tenant: string, key: string, bytes: number): void {
    const part = this.#parts.get(tenant);
    if (!part?.keys.delete(key)) return;
    part.bytes -= bytes;
    if (part.keys.size === 0) this.#parts.delete(tenant);
  }
}

function compose(tenant: string, key: string): string {
  return `${tenant}\n${key}`;
}

/** A key of a {@link Recency}: a link of its list, least recently used first. */
interface Link {
  readonly key: string;
  readonly bytes: number;
  older: Link | null;
  newer: Link | null;
}

/**
 * A tenant's keys, least recently used first, with their bytes: a map to links of a list, so that
 * a read moves its key to the end without changing the map. (Deleting and setting the key again,
 * as a read did before, costs V8's `Map` a time that grows with its size: 2.5 µs at 2,000 keys,
 * 13 µs at 10,000, with a few keys read in turn — several reads a warm manifest.)
 */
class Recency {
  readonly #links = new Map<string, Link>();
  #oldest: Link | null = null;
  #newest: Link | null = null;

  get size(): number {
    return this.#links.size;
  }

  /** The least recently used key and its bytes. */
  oldest(): Link | undefined {
    return this.#oldest ?? undefined;
  }

  /** Adds `key` as the most recently used (again, with its new bytes, if it was there). */
  set(key: string, bytes: number): void {
    this.delete(key);
    const link: Link = { key, bytes, older: this.#newest, newer: null };
    if (this.#newest) this.#newest.newer = link;
    else this.#oldest = link;
    this.#newest = link;
    this.#links.set(key, link);
  }

  /** Makes `key` the most recently used. */
  touch(key: string): void {
    const link = this.#links.get(key);
    if (link === undefined || link === this.#newest) return;
    this.#unlink(link);
    link.older = this.#newest;
    link.newer = null;
    this.#newest!.newer = link;
    this.#newest = link;
  }

  /** Drops `key`; answers whether it was there. */
  delete(key: string): boolean {
    const link = this.#links.get(key);
    if (link === undefined) return false;
    this.#links.delete(key);
    this.#unlink(link);
    return true;
  }

  #unlink(link: Link): void {
    if (link.older) link.older.newer = link.newer;
    else this.#oldest = link.newer;
    if (link.newer) link.newer.older = link.older;
    else this.#newest = link.older;
  }
}
