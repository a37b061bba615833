/**
 * Bench: how fast `vance-tools` starts (issue 28). Times whole processes, as a user waits for
 * them — `--help` and `lint` of a folder of ten tool documents — for the CLI as it ran before
 * (TypeScript compiled by tsx on every run, the old bin) and as the bin runs it now (the plain
 * JavaScript bundle `npm install` builds), beside `node -e 0` measured in the same rounds, so a
 * noisy machine shows in every column alike. Prints medians, each one's ratio to `node -e 0`, and
 * before/after. Goal (printed, not asserted): ≤ 200 ms for both commands.
 *
 * Run: `npm run bench -- cli` (or `npx tsx bench/cli.ts`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { buildCli } from "../packages/cli/build";
import { formatMs, formatNumber, median, renderTable, runIfMain } from "./support/report";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = 15;
const GOAL_MS = 200;

/** One way of running a command: the program and its leading arguments. */
interface Runner {
  readonly name: string;
  readonly argv: readonly string[];
}

const NODE: Runner = { name: "node -e 0", argv: [process.execPath, "-e", "0"] };
/** What the bin did before: tsx compiled the TypeScript sources on every run. */
const BEFORE: Runner = {
  name: "before (tsx)",
  argv: [process.execPath, "--import", "tsx", join(ROOT, "packages/cli/src/main.ts")],
};
/** The bin `npm install` links, running the bundle. */
const AFTER: Runner = { name: "after (bundle)", argv: [join(ROOT, "node_modules/.bin/vance-tools")] };

function timeOnce(argv: readonly string[]): number {
  const started = performance.now();
  const result = spawnSync(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    stdio: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const ms = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${argv.join(" ")} exited ${result.status}: ${result.stderr.toString()}`);
  }
  return ms;
}

/** Ten tool documents, as `lint` of a configuration repository meets them. */
function tenDocuments(): string {
  const dir = mkdtempSync(join(tmpdir(), "vance-bench-cli-"));
  mkdirSync(join(dir, "server-tools"));
  for (let i = 0; i < 10; i++) {
    writeFileSync(
      join(dir, "server-tools", `tool_${i}.yaml`),
      `type: doc_lookup\ndescription: Tool ${i}\nlabels: [bench]\nparameters: { path: documents/guide_${i}.md }\n`,
    );
  }
  return dir;
}

export async function main(): Promise<void> {
  await buildCli();
  const dir = tenDocuments();
  try {
    const commands = [
      { name: "--help", args: ["--help"] },
      { name: "lint (10 files)", args: ["lint", dir] },
    ];
    const cases = [
      { key: "node", argv: NODE.argv },
      ...commands.flatMap((command) =>
        [BEFORE, AFTER].map((runner) => ({
          key: `${command.name}|${runner.name}`,
          argv: [...runner.argv, ...command.args],
        })),
      ),
    ];
    for (const bench of cases) timeOnce(bench.argv);
    const samples = new Map(cases.map((bench) => [bench.key, [] as number[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const bench of cases) samples.get(bench.key)!.push(timeOnce(bench.argv));
    }
    const nodeMs = median(samples.get("node")!);
    const rows = commands.map((command) => {
      const before = median(samples.get(`${command.name}|${BEFORE.name}`)!);
      const after = median(samples.get(`${command.name}|${AFTER.name}`)!);
      return [
        command.name,
        formatMs(before),
        `${formatNumber(before / nodeMs, 1)}×`,
        formatMs(after),
        `${formatNumber(after / nodeMs, 1)}×`,
        `${formatNumber(before / after, 1)}×`,
        after <= GOAL_MS ? "yes" : "NO",
      ];
    });
    console.log(
      `Whole processes, medians of ${ROUNDS} interleaved rounds; node -e 0 in the same rounds: ${formatMs(nodeMs)}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "command" },
          { title: "before (tsx)", right: true },
          { title: "÷ node", right: true },
          { title: "after (bundle)", right: true },
          { title: "÷ node", right: true },
          { title: "before ÷ after", right: true },
          { title: `≤ ${GOAL_MS} ms` },
        ],
        rows,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
