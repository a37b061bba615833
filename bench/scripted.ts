/**
 * Bench: per-invocation time of a `scripted` tool (`a + b`) in the QuickJS sandbox, against
 * node:vm (a new context plus runInContext of the same expression) as a baseline.
 *
 * Cases, measured interleaved in rounds so that machine load hits them alike:
 * - sync: the synchronous QuickJS build (what a script without `vance` takes),
 * - asyncify: the asyncify build, no sibling call,
 * - asyncify + 1 sibling call: `vance.tools.call` with a callTool that answers at once,
 * - node:vm: baseline (not a sandbox: shares the host's process and has no limits).
 * Goal: under 0.5 ms median for `a + b`.
 *
 * Run: `npx tsx bench/scripted.ts` or `npm run bench -- scripted`.
 */
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createContext, runInContext } from "node:vm";
import { type CallTool, type ScriptRequest, ScriptSandbox } from "@vance/sandbox";
import { median, percentile, renderTable, runIfMain } from "./support/report";

const WARMUP_PER_CASE = 300;
const ROUNDS = 6;
const PER_ROUND = 500;
const GOAL_MS = 0.5;

interface Case {
  readonly name: string;
  readonly once: () => Promise<unknown> | unknown;
}

/** Runs the bench and prints a table: median, p95 and their ratio to node:vm per case. */
export async function main(): Promise<void> {
  const sandbox = await ScriptSandbox.create();
  try {
    const callTool: CallTool = async () => ({ value: 2 });
    const request = (extra: Partial<ScriptRequest>): ScriptRequest => ({
      source: "a + b",
      inputs: { a: 1, b: 2 },
      timeoutMs: 1_000,
      ...extra,
    });
    const expectThree = async (pending: Promise<unknown>) => {
      const outcome = await pending;
      if (!(typeof outcome === "object" && outcome !== null && "value" in outcome && outcome.value === 3)) {
        throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
      }
    };
    const cases: Case[] = [
      { name: "sync", once: () => expectThree(sandbox.run(request({ variant: "sync" }))) },
      { name: "asyncify", once: () => expectThree(sandbox.run(request({ variant: "asyncify" }))) },
      {
        name: "asyncify + 1 sibling call",
        once: () =>
          expectThree(
            sandbox.run(request({ source: "a + vance.tools.call('two', {})", inputs: { a: 1 }, callTool })),
          ),
      },
      {
        name: "node:vm (baseline)",
        once: () => {
          if (runInContext("a + b", createContext({ a: 1, b: 2 })) !== 3)
            throw new Error("node:vm miscounted");
        },
      },
    ];

    for (const bench of cases) for (let i = 0; i < WARMUP_PER_CASE; i++) await bench.once();

    const samples = new Map<string, number[]>(cases.map((bench) => [bench.name, []]));
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (const bench of cases) {
        const times = samples.get(bench.name)!;
        for (let i = 0; i < PER_ROUND; i++) {
          const t0 = performance.now();
          await bench.once();
          times.push(performance.now() - t0);
        }
      }
    }
    const elapsed = (performance.now() - started) / 1000;

    const baseline = summarize(samples.get("node:vm (baseline)")!);
    const rows = cases.map((bench) => {
      const stats = summarize(samples.get(bench.name)!);
      return [
        bench.name,
        stats.median.toFixed(3),
        stats.p95.toFixed(3),
        `${(stats.median / baseline.median).toFixed(2)}x`,
        `${(stats.p95 / baseline.p95).toFixed(2)}x`,
      ];
    });
    console.log(
      `scripted sandbox: \`a + b\`, ${ROUNDS * PER_ROUND} invocations per case in ${ROUNDS} interleaved rounds ` +
        `(${elapsed.toFixed(1)} s); ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "median vs vm", right: true },
          { title: "p95 vs vm", right: true },
        ],
        rows,
      ),
    );
    const sync = summarize(samples.get("sync")!);
    console.log(
      `\ngoal: median under ${GOAL_MS} ms for \`a + b\` (sync path): ${sync.median < GOAL_MS ? "met" : "NOT met"} ` +
        `(${sync.median.toFixed(3)} ms)`,
    );
  } finally {
    sandbox.dispose();
  }
}

function summarize(times: readonly number[]): { median: number; p95: number } {
  return { median: median(times), p95: percentile(times, 0.95) };
}

runIfMain(import.meta.url, main);
