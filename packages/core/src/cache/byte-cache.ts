import { LRUCache } from "lru-cache";

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
  /** The largest entry kept; an eighth of `maxBytes` unless given. */
  readonly maxEntryBytes?: number;
}

/**
 * A least-recently-used cache bounded by bytes, not entries (`lru-cache` with `maxSize`), so
 * a warm instance's memory has a ceiling whatever the documents weigh. One entry may take only
 * part of the bound: a single large document cannot flush everything else.
 */
export class ByteCache<V extends object> {
  readonly #entries: LRUCache<string, V>;
  readonly #maxBytes: number;
  #hits = 0;
  #misses = 0;

  constructor(options: ByteCacheOptions<V>) {
    this.#maxBytes = options.maxBytes;
    this.#entries = new LRUCache<string, V>({
      maxSize: Math.max(1, options.maxBytes),
      maxEntrySize: Math.max(1, Math.floor(options.maxEntryBytes ?? options.maxBytes / 8)),
      sizeCalculation: (value, key) => Math.max(1, Math.ceil(options.sizeOf(value, key))),
    });
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Stores `value`; one too large for the cache is not stored (and an older entry of the key is dropped). */
  set(key: string, value: V): void {
    this.#entries.set(key, value);
  }

  delete(key: string): void {
    this.#entries.delete(key);
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
    return {
      hits: this.#hits,
      misses: this.#misses,
      entries: this.#entries.size,
      bytes: this.#entries.calculatedSize,
      maxBytes: this.#maxBytes,
    };
  }
}
