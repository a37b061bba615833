/**
 * One cache's counters as `/v1/metrics` lists them: hits and misses always; entries where the
 * cache can count them (a `WeakMap` cannot); bytes and bounds where the cache is bounded by them.
 */
export interface CacheReport {
  /** Reads answered from the cache. */
  readonly hits: number;
  /** Reads that had to compute or fetch the value. */
  readonly misses: number;
  readonly entries?: number;
  readonly maxEntries?: number;
  /** The cache's own accounting of what it holds. */
  readonly bytes?: number;
  readonly maxBytes?: number;
  /** Windows in which one tenant's own entries evicted more than its share (each a `cache_thrash` line). */
  readonly thrashes?: number;
}

/** A cache as the registry lists it: its name and its report. */
export type ListedCache = { readonly name: string } & CacheReport;

/** Hit and miss counts of one cache. */
export class CacheCounters {
  hits = 0;
  misses = 0;

  /** Counts one read: a hit when the value was found. Answers `value`, so a read can be wrapped. */
  read<V>(value: V | undefined): V | undefined {
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }

  /** The counts, with what `extra` adds (entries, bytes). */
  report(extra: Omit<CacheReport, "hits" | "misses"> = {}): CacheReport {
    return { hits: this.hits, misses: this.misses, ...extra };
  }
}

/**
 * The counters and extent of a memo that lives inside an adapter the composition root cannot
 * reach until it exists (the DynamoDB store is made at its first call): the root builds this,
 * lists it in `/v1/metrics`, and hands it to the adapter, which counts into it.
 */
export class MemoStats extends CacheCounters {
  /** Entries the memo holds now. */
  entries = 0;
  /** Bytes the memo holds now, where the adapter can tell. */
  bytes: number | undefined;
  maxBytes: number | undefined;

  /** The counts and the extent. */
  override report(extra: Omit<CacheReport, "hits" | "misses"> = {}): CacheReport {
    return super.report({
      entries: this.entries,
      ...(this.bytes === undefined ? {} : { bytes: this.bytes }),
      ...(this.maxBytes === undefined ? {} : { maxBytes: this.maxBytes }),
      ...extra,
    });
  }
}

/**
 * What an `lru-cache` holds: entries and their bound, and bytes and theirs when it is bounded by
 * a size in bytes (`sizeInBytes: false` for one whose size counts something else).
 */
export function lruExtent(
  cache: {
    readonly size: number;
    readonly max: number;
    readonly maxSize: number;
    readonly calculatedSize: number;
  },
  sizeInBytes = true,
): Omit<CacheReport, "hits" | "misses"> {
  return {
    entries: cache.size,
    ...(cache.max > 0 ? { maxEntries: cache.max } : {}),
    ...(sizeInBytes && cache.maxSize > 0 ? { bytes: cache.calculatedSize, maxBytes: cache.maxSize } : {}),
  };
}

/** A service that keeps caches: each by a short name, read when `/v1/metrics` is asked. */
export interface HasCaches {
  cacheReports(): Readonly<Record<string, CacheReport>>;
}

/**
 * Every cache of one instance, by name: the composition root registers each as it builds it, and
 * `/v1/metrics` lists them all. Reports are read on demand, so registering costs nothing per call.
 */
export class CacheRegistry {
  readonly #caches = new Map<string, () => CacheReport>();
  readonly #groups = new Map<string, HasCaches>();

  /** Adds one cache; a name is registered once (a second is a wiring mistake). */
  register(name: string, report: () => CacheReport): void {
    this.#claim(name);
    this.#caches.set(name, report);
  }

  /** Adds a service's caches, each listed as `prefix.name`. */
  registerAll(prefix: string, service: HasCaches): void {
    this.#claim(prefix);
    this.#groups.set(prefix, service);
  }

  /** Every registered cache and its report now, sorted by name. */
  list(): ListedCache[] {
    const listed: ListedCache[] = [...this.#caches].map(([name, report]) => ({ name, ...report() }));
    for (const [prefix, service] of this.#groups) {
      for (const [name, report] of Object.entries(service.cacheReports()))
        listed.push({ name: `${prefix}.${name}`, ...report });
    }
    return listed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #claim(name: string): void {
    if (this.#caches.has(name) || this.#groups.has(name))
      throw new Error(`cache '${name}' is registered twice`);
  }
}
