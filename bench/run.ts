/**
 * `npm run bench` — runs every bench listed below, in sequence, each by importing its `main`.
 * `npm run bench -- cascade` runs only the named benches (several names may be given).
 */
import { performance } from "node:perf_hooks";

interface BenchModule {
  main(): Promise<void>;
}

interface Bench {
  readonly name: string;
  readonly load: () => Promise<BenchModule>;
}

const BENCHES: readonly Bench[] = [
  { name: "cascade", load: () => import("./cascade") },
  { name: "scripted", load: () => import("./scripted") },
  { name: "triage", load: () => import("./triage") },
  { name: "manifest", load: () => import("./manifest") },
  { name: "cold-manifest", load: () => import("./cold-manifest") },
  { name: "mcp", load: () => import("./mcp") },
  { name: "cold-start", load: () => import("./cold-start") },
  { name: "cli", load: () => import("./cli") },
  { name: "code-mode", load: () => import("./code-mode") },
  { name: "telemetry", load: () => import("./telemetry") },
  { name: "discovery", load: () => import("./discovery") },
  { name: "search", load: () => import("./search") },
  { name: "tenant-cache", load: () => import("./tenant-cache") },
];

async function run(): Promise<number> {
  const wanted = process.argv.slice(2).filter((arg) => arg !== "--");
  const unknown = wanted.filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length > 0) {
    console.error(
      `unknown bench: ${unknown.join(", ")}; available: ${BENCHES.map((b) => b.name).join(", ")}`,
    );
    return 2;
  }
  const selected = wanted.length === 0 ? BENCHES : BENCHES.filter((bench) => wanted.includes(bench.name));

  const summary: string[] = [];
  let failed = false;
  for (const [index, bench] of selected.entries()) {
    const title = `bench ${index + 1}/${selected.length}: ${bench.name}`;
    console.log(`\n${"=".repeat(title.length + 8)}\n==  ${title}  ==\n${"=".repeat(title.length + 8)}\n`);
    const started = performance.now();
    try {
      const module = await bench.load();
      await module.main();
      summary.push(`${bench.name}: ok (${seconds(started)})`);
    } catch (error) {
      failed = true;
      console.error(error);
      summary.push(`${bench.name}: FAILED (${seconds(started)})`);
    }
  }
  console.log(`\n${summary.join("\n")}`);
  return failed ? 1 : 0;
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

// Benches clean up after themselves; exiting explicitly keeps a stray handle in one of them
// from keeping `npm run bench` alive.
run().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
