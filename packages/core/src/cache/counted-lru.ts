import { LRUCache } from "lru-cache";

/**
 * An `LRUCache` bounded by its number of entries that allocates nothing up front. lru-cache's own
 * `max` fills arrays of `max` slots in the constructor (about 1 ms for 10,000 on Node 22: a dozen
 * caches of the composition root were ~10 ms of every cold start, bench/cold-start). Here the
 * bound is kept through `maxSize` with every entry of size 1, so the cache grows as it fills and
 * evicts the same least recently used entry at the same count; it reads as the entry-bounded
 * cache it is (`max` is the bound, `maxSize` 0), so `lruExtent` and `/v1/metrics` list it as before.
 */
export class CountedLru<K extends {}, V extends {}> extends LRUCache<K, V> {
  readonly #entries: number;

  /**
   * `ttl` and `ttlResolution` in ms, as lru-cache's own options. `ttlResolution` is how long
   * lru-cache trusts its clock: each refresh sets a timer, every millisecond by default (a cache
   * read on every request under load then schedules a timer every few requests).
   */
  constructor(options: { readonly max: number; readonly ttl?: number; readonly ttlResolution?: number }) {
    super({ ...options, max: 0, maxSize: options.max, sizeCalculation: () => 1 });
    this.#entries = options.max;
  }

  override get max(): number {
    return this.#entries;
  }

  override get maxSize(): number {
    return 0;
  }
}
