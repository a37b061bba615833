import { LRUCache } from "lru-cache";
import type { CacheReport } from "./cache-registry";

/** The share of an instance's bytes one tenant may hold by default: a quarter. */
export const DEFAULT_TENANT_SHARE = 0.25;

export interface TenantByteCacheOptions<V> {
  /** Bytes the instance keeps in this cache, across tenants. */
  readonly maxBytes: number;
  /** The part of `maxBytes` one tenant may hold (0 < share ≤ 1); `DEFAULT_TENANT_SHARE` by default. */
  readonly tenantShare?: number;
  /** What one entry costs, in bytes; at least 1. */
  readonly sizeOf: (value: V) => number;
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
 * packs cannot push everyone else's entries out. An entry larger than a share is not kept.
 */
export class TenantByteCache<V extends object> {
  readonly #entries: LRUCache<string, Held<V>>;
  /** Each tenant's keys, least recently used first, with their bytes. */
  readonly #byTenant = new Map<string, Map<string, number>>();
  readonly #tenantBytes = new Map<string, number>();
  readonly #sizeOf: (value: V) => number;
  readonly #share: number;
  #hits = 0;
  #misses = 0;

  constructor(options: TenantByteCacheOptions<V>) {
    const maxBytes = Math.max(1, Math.floor(options.maxBytes));
    this.#share = Math.max(1, Math.floor(maxBytes * (options.tenantShare ?? DEFAULT_TENANT_SHARE)));
    this.#sizeOf = options.sizeOf;
    this.#entries = new LRUCache<string, Held<V>>({
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
    const composed = compose(tenant, key);
    const held = this.#entries.get(composed);
    if (held === undefined || (current && !current(held.value))) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    const keys = this.#byTenant.get(tenant)!;
    keys.delete(composed);
    keys.set(composed, held.bytes);
    return held.value;
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
    const composed = compose(tenant, key);
    const bytes = Math.max(1, Math.ceil(this.#sizeOf(value)));
    this.#entries.delete(composed);
    if (bytes > this.#share) return false;
    const keys = this.#byTenant.get(tenant);
    while (keys && keys.size > 0 && (this.#tenantBytes.get(tenant) ?? 0) + bytes > this.#share) {
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
