import type { Logger } from "../ports/logger";
import { TenantByteCache } from "./tenant-byte-cache";

/** One cache's counters, as `/v1/metrics` shows them. */
export interface CacheStats {
  /** Reads answered from the cache, without a store request. */
  readonly hits: number;
  /** Reads that went to the store (absent, evicted, or its generation moved). */
  readonly misses: number;
  readonly entries: number;
  /** The cache's own accounting of what it holds (see `sizeOf`). */
  readonly bytes: number;
  readonly maxBytes: number;
  /** Windows in which one tenant's own entries evicted more than its share (`cache_thrash`). */
  readonly thrashes: number;
}

/** Bytes per MiB, for settings given in MiB. */
export const MIB = 1024 * 1024;

/**
 * An upper bound of what a string costs on the heap: V8 keeps a string in one byte per
 * character when it can, two otherwise; the header is small against a document.
 */
export function stringBytes(value: string): number {
  return 2 * value.length;
}

/** The length of `value` in UTF-8, as a store keeps it (a lone surrogate counts as U+FFFD, 3 bytes). */
export function utf8Bytes(value: string): number {
  let bytes = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

export interface ByteCacheOptions<V> {
  readonly maxBytes: number;
  /** What one entry costs, in bytes; at least 1. */
  readonly sizeOf: (value: V, key: string) => number;
  /** The largest entry kept; an eighth of `maxBytes` unless given (and never more than a tenant's share). */
  readonly maxEntryBytes?: number;
  /** The tenant whose data an entry is, from its key: its bytes count against that tenant's share. */
  readonly tenantOf: (key: string) => string;
  /** The part of `maxBytes` one tenant may hold (0 < share ≤ 1); `DEFAULT_TENANT_SHARE` by default. */
  readonly tenantShare?: number;
  /** The cache's name in `/v1/metrics`, for its `cache_thrash` lines. */
  readonly name?: string;
  /** Where `cache_thrash` lines go; none by default. */
  readonly logger?: Logger;
  /** The clock of the thrash windows (ms). */
  readonly now?: () => number;
}

/**
 * A least-recently-used cache bounded by bytes, not entries, so a warm instance's memory has a
 * ceiling whatever the documents weigh, keyed by keys that name their tenant (`tenantOf`): the
 * rule of `TenantByteCache` (each tenant at most its share; a tenant's entry evicts only its own
 * entries while it is over), with reads counted by the owner (`hit`, `miss`). One entry may take
 * only part of the bound: a single large document cannot flush everything else.
 */
export class ByteCache<V extends object> {
  readonly #entries: TenantByteCache<V>;
  readonly #tenantOf: (key: string) => string;
  #hits = 0;
  #misses = 0;

  constructor(options: ByteCacheOptions<V>) {
    this.#tenantOf = options.tenantOf;
    this.#entries = new TenantByteCache<V>({
      maxBytes: Math.max(1, options.maxBytes),
      sizeOf: options.sizeOf,
      maxEntryBytes: Math.max(1, Math.floor(options.maxEntryBytes ?? options.maxBytes / 8)),
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  get(key: string): V | undefined {
    return this.#entries.readShared(key);
  }

  /**
   * Stores `value`, charged to its key's tenant; one too large for the cache (or for a tenant's
   * share) is not stored (and an older entry of the key is dropped).
   */
  set(key: string, value: V): void {
    this.#entries.setCharged(this.#tenantOf(key), key, value);
  }

  delete(key: string): void {
    this.#entries.deleteShared(key);
  }

  /** The bytes `tenant` holds now. */
  bytesOf(tenant: string): number {
    return this.#entries.bytesOf(tenant);
  }

  /** Counts a read answered from the cache. */
  hit(): void {
    this.#hits++;
  }

  /** Counts a read that needed the store. */
  miss(): void {
    this.#misses++;
  }

  get stats(): CacheStats {
    const { entries, bytes, maxBytes, thrashes } = this.#entries.report();
    return {
      hits: this.#hits,
      misses: this.#misses,
      entries: entries!,
      bytes: bytes!,
      maxBytes: maxBytes!,
      thrashes: thrashes!,
    };
  }
}
