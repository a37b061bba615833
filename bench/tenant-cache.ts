/**
 * Bench: what the per-tenant share costs a byte-bounded cache (issue 35 §3). The documents cache
 * (`ByteCache`, each tenant at most a quarter) against its floor, `lru-cache` bounded by bytes
 * alone (what `ByteCache` was before), on the same workload (`support/tenant-cache-worker.ts`:
 * 400,000 reads, a write after each miss, 8 tenants, twice the bound's worth of keys). Each
 * round runs each cache in a fresh process of its own, in turn, so a noisy moment falls on both.
 *
 * Run: `npm run bench -- tenant-cache`.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { formatNumber, median, runIfMain } from "./support/report";

const ROUNDS = 7;
const OPS = 400_000;
const WORKER = fileURLToPath(new URL("./support/tenant-cache-worker.ts", import.meta.url));

function once(kind: "shared" | "floor"): { ms: number; hits: number } {
  const out = execFileSync(process.execPath, ["--import", "tsx", WORKER, kind, String(OPS)], {
    encoding: "utf8",
  });
  return JSON.parse(out.trim()) as { ms: number; hits: number };
}

export async function main(): Promise<void> {
  const samples = { shared: [] as number[], floor: [] as number[] };
  const ratios: number[] = [];
  const hits = { shared: 0, floor: 0 };
  const loadBefore = loadavg();
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always follows the other.
    const order: ("shared" | "floor")[] = round % 2 === 0 ? ["shared", "floor"] : ["floor", "shared"];
    const times: Record<string, number> = {};
    for (const kind of order) {
      const result = once(kind);
      times[kind] = result.ms;
      samples[kind].push(result.ms);
      hits[kind] = result.hits;
    }
    ratios.push(times.shared! / times.floor!);
  }
  const loadAfter = loadavg();
  const perOp = (ms: number) => `${formatNumber((ms * 1e6) / OPS, 0)} ns/op`;
  console.log(
    `tenant-cache: ${OPS.toLocaleString("en")} reads per round, ${ROUNDS} interleaved rounds, each cache in its own process`,
  );
  console.log(`  ByteCache (tenant share 25%): median ${perOp(median(samples.shared))}, hits ${hits.shared}`);
  console.log(`  floor (lru-cache, bytes only): median ${perOp(median(samples.floor))}, hits ${hits.floor}`);
  console.log(
    `  ratio shared/floor: median ${formatNumber(median(ratios), 2)} (rounds: ${ratios.map((r) => formatNumber(r, 2)).join(", ")})`,
  );
  console.log(
    `  load (1 min) before ${formatNumber(loadBefore[0]!, 2)}, after ${formatNumber(loadAfter[0]!, 2)}`,
  );
}

runIfMain(import.meta.url, main);
