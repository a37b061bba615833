/**
 * One round of `bench/tenant-cache.ts` in its own process: `ops` reads and writes of a
 * documents-cache workload (8 tenants, entries of 16 KiB as counted, a 64 MiB bound, one write
 * per 10 reads, twice the bound's worth of distinct keys so entries are evicted), on the cache
 * named by argv[2]: `shared` (`ByteCache`, each tenant at most a quarter) or `floor` (`lru-cache`
 * bounded by bytes alone, what `ByteCache` was before the tenant share). Prints its ms as JSON.
 */
import { performance } from "node:perf_hooks";
import { LRUCache } from "lru-cache";
import { ByteCache } from "../../packages/core/src/cache/byte-cache";

const MIB = 1024 * 1024;
const TENANTS = 8;
const ENTRY_BYTES = 16 * 1024;
const MAX_BYTES = 64 * MIB;
const KEYS = (2 * MAX_BYTES) / ENTRY_BYTES;

interface Entry {
  readonly bytes: number;
}

function cacheOf(kind: string): {
  get(key: string): Entry | undefined;
  set(key: string, value: Entry): void;
} {
  if (kind === "shared") {
    return new ByteCache<Entry>({
      maxBytes: MAX_BYTES,
      sizeOf: (entry) => entry.bytes,
      tenantOf: (key) => key.slice(0, key.indexOf("/")),
      tenantShare: 0.25,
    });
  }
  return new LRUCache<string, Entry>({
    maxSize: MAX_BYTES,
    maxEntrySize: MAX_BYTES / 8,
    sizeCalculation: (entry) => entry.bytes,
  });
}

const kind = process.argv[2] ?? "floor";
const ops = Number(process.argv[3] ?? "400000");
const cache = cacheOf(kind);
const keys = Array.from({ length: KEYS }, (_, i) => `tenant-${i % TENANTS}/docs/page-${i}.md`);
const entry: Entry = { bytes: ENTRY_BYTES };
// A deterministic sequence: the same keys in the same order in every process.
let seed = 12345;
const next = () => {
  // xorshift32
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
let hits = 0;
const started = performance.now();
for (let i = 0; i < ops; i++) {
  const key = keys[next() % KEYS]!;
  if (cache.get(key) === undefined) cache.set(key, entry);
  else hits++;
}
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ kind, ms, hits })}\n`);
