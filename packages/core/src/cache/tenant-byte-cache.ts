import { LRUCache } from "lru-cache";
import type { CacheReport } from "./cache-registry";

/** The share of an instance's bytes one tenant may hold by default: a quarter. */
export const DEFAULT_TENANT_SHARE = 0.25;

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
}

interface Held<V> {
  readonly tenant: string;
  readonly value: V;
  readonly bytes: number;
}

/**
 * A least-recently-used cache bounded by bytes per instance, in which each tenant holds at most
 * its share (issue 35 §3): an entry that would take a tenant past its share evicts that tenant's
 * own least recently used entries, never another tenant's, so one tenant loading many large
 * packs cannot push everyone else's entries out. An entry larger than a share is not kept. With
 * `maxEntries`, the count of entries is shared the same way.
 *
 * Two ways to key it, not to be mixed in one cache: `get`/`set` by tenant and key (each tenant's
 * entries apart), or `getShared`/`setCharged` by key alone, the entry charged to the tenant that
 * set it (a value any tenant may read, such as a compiled schema by its text). `ByteCache` is the
 * keyed form for caches whose keys name their tenant.
 */
export class TenantByteCache<V extends object> {
  readonly #entries: LRUCache<string, Held<V>>;
  /** Each tenant's keys, least recently used first, with their bytes. */
  readonly #byTenant = new Map<string, Map<string, number>>();
  readonly #tenantBytes = new Map<string, number>();
  readonly #sizeOf: (value: V, key: string) => number;
  readonly #share: number;
  readonly #maxEntryBytes: number;
  readonly #entryShare: number;
  readonly #maxEntries: number | undefined;
  #hits = 0;
  #misses = 0;

  constructor(options: TenantByteCacheOptions<V>) {
    const maxBytes = Math.max(1, Math.floor(options.maxBytes));
    this.#share = Math.max(1, Math.floor(maxBytes * (options.tenantShare ?? DEFAULT_TENANT_SHARE)));
    this.#sizeOf = options.sizeOf;
    this.#maxEntryBytes = Math.min(this.#share, Math.max(1, Math.floor(options.maxEntryBytes ?? maxBytes)));
    this.#maxEntries =
      options.maxEntries === undefined ? undefined : Math.max(1, Math.floor(options.maxEntries));
    this.#entryShare =
      this.#maxEntries === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(1, Math.floor(this.#maxEntries * (options.tenantShare ?? DEFAULT_TENANT_SHARE)));
    this.#entries = new LRUCache<string, Held<V>>({
      ...(this.#maxEntries === undefined ? {} : { max: this.#maxEntries }),
      maxSize: maxBytes,
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
    const keys = this.#byTenant.get(held.tenant)!;
    keys.delete(key);
    keys.set(key, held.bytes);
    return held.value;
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
   * least recently used entries while it would exceed its share. Answers whether it was kept.
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
    const keys = this.#byTenant.get(tenant);
    while (
      keys &&
      keys.size > 0 &&
      ((this.#tenantBytes.get(tenant) ?? 0) + bytes > this.#share || keys.size + 1 > this.#entryShare)
    ) {
      const oldest = keys.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    let own = this.#byTenant.get(tenant);
    if (!own) {
      own = new Map();
      this.#byTenant.set(tenant, own);
    }
    own.set(composed, bytes);
    this.#tenantBytes.set(tenant, (this.#tenantBytes.get(tenant) ?? 0) + bytes);
    this.#entries.set(composed, { tenant, value, bytes });
    return true;
  }

  delete(tenant: string, key: string): void {
    this.#entries.delete(compose(tenant, key));
  }

  /** The bytes `tenant` holds now. */
  bytesOf(tenant: string): number {
    return this.#tenantBytes.get(tenant) ?? 0;
  }

  /** Hits, misses, entries and bytes, for `/v1/metrics`. */
  report(): CacheReport {
    return {
      hits: this.#hits,
      misses: this.#misses,
      entries: this.#entries.size,
      ...(this.#maxEntries === undefined ? {} : { maxEntries: this.#maxEntries }),
      bytes: this.#entries.calculatedSize,
      maxBytes: this.#entries.maxSize,
    };
  }

  #forget(tenant: string, key: string, bytes: number): void {
    const keys = this.#byTenant.get(tenant);
    if (!keys?.delete(key)) return;
    const left = (this.#tenantBytes.get(tenant) ?? 0) - bytes;
    if (keys.size === 0) {
      this.#byTenant.delete(tenant);
      this.#tenantBytes.delete(tenant);
    } else this.#tenantBytes.set(tenant, left);
  }
}

function compose(tenant: string, key: string): string {
  return `${tenant}\n${key}`;
}
