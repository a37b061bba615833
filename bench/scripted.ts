/**
 * Bench: a `scripted` tool (`a + b`) invoked over HTTP against `GET /v1/health` on the same
 * server, and the sandbox's own cost per run.
 *
 * Over HTTP: the server is `functions/api/node.ts` (what `npm start` runs) in its own process on
 * an empty data dir; the load client is autocannon, each measurement in a process of its own,
 * the same client and settings for both rows. Rounds interleave health and invoke (the order
 * flips every round) at 1 and at 10 requests in flight; each round's invoke is divided by the
 * same round's health, and the medians of those ratios are the figures. The machine's load is
 * printed with every round.
 * Goals: at c=1 the invoke adds ≤ 1 ms of median latency over health; at c=10 it serves ≥ 0.4×
 * health's requests per second.
 *
 * In this process (the library, no HTTP): `pool.run` of `a + b` on a worker thread (the hop to
 * the thread included), with one sibling call answered by this thread, and node:vm (a new
 * context plus runInContext, not a sandbox) as the floor, in interleaved rounds.
 * Goals: `a + b` ≤ 0.3 ms median; a sibling call adds ≤ 0.2 ms.
 *
 * Run: `npm run bench -- scripted`. `SCRIPTED_BENCH_BASELINE=<checkout>` serves that checkout's API
 * too, in the same interleaved rounds (its own process, the same client and cases), and prints this
 * tree's invoke rate and serving-thread CPU against it; `SCRIPTED_BENCH_PROFILE=<dir>` writes this
 * tree's server's CPU profile there; `SCRIPTED_BENCH_HTTP_ONLY=1` skips the in-process part.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createContext, runInContext } from "node:vm";
import { type CallTool, ScriptPool, type ScriptRequest } from "@vance/sandbox";
import { mintToken } from "../functions/api/auth";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import { type BenchCase, interleavedRounds } from "./support/rounds";

const SECRET = "bench-secret-0123456789";
/** Interleaved rounds over HTTP (`SCRIPTED_BENCH_ROUNDS` for a quick look). */
const ROUNDS = Number(process.env.SCRIPTED_BENCH_ROUNDS ?? 7);
/** Seconds each autocannon measurement lasts, after one unrecorded pass of every case. */
const SECONDS = { c1: 2, c10: 3, warmup: 2 } as const;
const IN_PROCESS = { rounds: 6, perRound: 500, warmup: 300, flood: 4_000 } as const;

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const AUTOCANNON = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

/** One HTTP case: what autocannon sends, to which tree's server. */
interface HttpCase {
  readonly tree: Served["tree"];
  readonly name: "health" | "invoke";
  readonly connections: 1 | 10;
  readonly args: readonly string[];
}

/** What one autocannon process measured, and the server's CPU time per request meanwhile. */
interface Measured {
  readonly perSecond: number;
  readonly meanMs: number;
  /** The server process's CPU (all its threads, from /proc), per request answered; NaN without /proc. */
  readonly cpuMs: number;
  /** The serving thread's share of `cpuMs`: what the HTTP and API path costs, the scripts' threads not counted. */
  readonly mainCpuMs: number;
}

/** Runs the bench and prints its tables. */
export async function main(): Promise<void> {
  console.log(`scripted: ${cpus().length} CPUs, load average ${loads()} at the start\n`);
  await overHttp();
  if (process.env.SCRIPTED_BENCH_HTTP_ONLY !== "1") await inProcess();
}

/** A server under measurement: this checkout's, or the baseline checkout's (`SCRIPTED_BENCH_BASELINE`). */
interface Served {
  readonly tree: "this" | "baseline";
  readonly process: ChildProcess;
  readonly pid: number;
  readonly dataDir: string;
  readonly health: readonly string[];
  readonly invoke: readonly string[];
}

/** Starts one tree's server on an empty data dir and puts `add_numbers` in its project. */
async function serve(tree: Served["tree"], root: string, profileDir: string | undefined): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-scripted-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = startServer(root, port, dataDir, profileDir);
  await untilHealthy(base, server);
  const token = await mintToken(SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
  const tool = `${base}/v1/tenants/bench/projects/p/tools/add_numbers`;
  const put = await fetch(tool, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/yaml" },
    body: "type: scripted\ndescription: a + b\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
  });
  if (!put.ok) throw new Error(`${tree}: PUT add_numbers: ${put.status} ${await put.text()}`);
  const body = '{"params":{"a":1,"b":2}}';
  const answer = await fetch(`${tool}/invoke`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  const answered = (await answer.json()) as { value?: unknown };
  if (answered.value !== 3) throw new Error(`${tree}: invoke answered ${JSON.stringify(answered)}`);
  return {
    tree,
    process: server,
    pid: server.pid!,
    dataDir,
    health: [`${base}/v1/health`],
    invoke: [
      ...["-m", "POST", "-H", `authorization=Bearer ${token}`, "-H", "content-type=application/json"],
      ...["-b", body, `${tool}/invoke`],
    ],
  };
}

async function overHttp(): Promise<void> {
  const baselineDir = process.env.SCRIPTED_BENCH_BASELINE;
  const servers: Served[] = [];
  try {
    servers.push(await serve("this", ROOT, process.env.SCRIPTED_BENCH_PROFILE));
    if (baselineDir) servers.push(await serve("baseline", resolve(baselineDir), undefined));
    const cases: HttpCase[] = servers.flatMap((server) =>
      ([1, 10] as const).flatMap((connections) => [
        { tree: server.tree, name: "health" as const, connections, args: server.health },
        { tree: server.tree, name: "invoke" as const, connections, args: server.invoke },
      ]),
    );
    const pidOf = (item: HttpCase) => servers.find((server) => server.tree === item.tree)!.pid;
    const measure = async (item: HttpCase, seconds: number): Promise<Measured> => {
      const pid = pidOf(item);
      const before = cpuMs(pid);
      const mainBefore = cpuMs(pid, pid);
      const { perSecond, meanMs, total } = await autocannon(item, seconds);
      return {
        perSecond,
        meanMs,
        cpuMs: (cpuMs(pid) - before) / total,
        mainCpuMs: (cpuMs(pid, pid) - mainBefore) / total,
      };
    };
    for (const item of cases) await measure(item, SECONDS.warmup);
    const results = new Map<string, Measured[]>(cases.map((item) => [key(item), []]));
    const at = (tree: string, name: string, c: number, round: number) =>
      results.get(`${tree} ${name} c=${c}`)![round]!;
    const roundLines: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? cases : [...cases].reverse();
      for (const item of order) {
        const seconds = item.connections === 1 ? SECONDS.c1 : SECONDS.c10;
        results.get(key(item))!.push(await measure(item, seconds));
      }
      for (const { tree } of servers) {
        const invoke = at(tree, "invoke", 10, round);
        const health = at(tree, "health", 10, round);
        roundLines.push(
          `round ${round + 1}, ${tree}: c=10 invoke ${invoke.perSecond.toFixed(0)} / health ${health.perSecond.toFixed(0)} req/s = ` +
            `${(invoke.perSecond / health.perSecond).toFixed(2)}×, server CPU ${invoke.cpuMs.toFixed(3)} / ${health.cpuMs.toFixed(3)} ms a request (serving thread ${invoke.mainCpuMs.toFixed(3)} / ${health.mainCpuMs.toFixed(3)}); c=1 mean ${at(tree, "invoke", 1, round).meanMs.toFixed(2)} / ${at(tree, "health", 1, round).meanMs.toFixed(2)} ms; load ${loads()}`,
        );
      }
    }

    /** Per round, `name` at `c` of `tree` divided by the same round's `over` (by default its health). */
    const perRound = (tree: string, c: number, over = (round: number) => at(tree, "health", c, round)) =>
      results.get(`${tree} invoke c=${c}`)!.map((own, round) => own.perSecond / over(round).perSecond);
    const added = (tree: string) =>
      median(
        results
          .get(`${tree} invoke c=1`)!
          .map((own, round) => own.meanMs - at(tree, "health", 1, round).meanMs),
      );
    const rows = cases.map((item) => {
      const own = results.get(key(item))!;
      const rates = own.map((m) => m.perSecond);
      return [
        item.tree,
        `${item.name === "health" ? "GET /v1/health" : "POST …/add_numbers/invoke"}`,
        String(item.connections),
        median(rates).toFixed(0),
        `${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}`,
        median(own.map((m) => m.meanMs)).toFixed(2),
        median(own.map((m) => m.cpuMs)).toFixed(3),
        median(own.map((m) => m.mainCpuMs)).toFixed(3),
        item.name === "health" ? "1×" : `${median(perRound(item.tree, item.connections)).toFixed(2)}×`,
      ];
    });
    console.log(
      `Over HTTP: each server (functions/api/node.ts, as npm start runs it${baselineDir ? `; the baseline's from ${baselineDir}` : ""}) in its own process, autocannon in a process per measurement; ` +
        `${ROUNDS} interleaved rounds of ${SECONDS.c1} s (c=1) and ${SECONDS.c10} s (c=10)\n`,
    );
    console.log(
      renderTable(
        [
          { title: "tree" },
          { title: "request" },
          { title: "in flight", right: true },
          { title: "median req/s", right: true },
          { title: "range", right: true },
          { title: "mean latency ms", right: true },
          { title: "server CPU ms/request", right: true },
          { title: "of it serving thread", right: true },
          { title: "× health (median of rounds)", right: true },
        ],
        rows,
      ),
    );
    console.log(`\n${roundLines.join("\n")}`);
    const cpu = (tree: string, name: string, field: "cpuMs" | "mainCpuMs") =>
      median(results.get(`${tree} ${name} c=10`)!.map((m) => m[field]));
    for (const { tree } of servers) {
      console.log(
        `\n${tree}: server CPU a request at c=10: health ${cpu(tree, "health", "cpuMs").toFixed(3)} ms, invoke ${cpu(tree, "invoke", "cpuMs").toFixed(3)} ms ` +
          `(health / invoke ${(cpu(tree, "health", "cpuMs") / cpu(tree, "invoke", "cpuMs")).toFixed(2)}: the share of health's rate a server bound by its own CPU would reach); ` +
          `the serving thread's part: health ${cpu(tree, "health", "mainCpuMs").toFixed(3)} ms, invoke ${cpu(tree, "invoke", "mainCpuMs").toFixed(3)} ms (${(cpu(tree, "health", "mainCpuMs") / cpu(tree, "invoke", "mainCpuMs")).toFixed(2)})`,
      );
    }
    if (baselineDir) {
      const ab = perRound("this", 10, (round) => at("baseline", "invoke", 10, round));
      const abCpu = results
        .get("this invoke c=10")!
        .map((own, round) => own.mainCpuMs / at("baseline", "invoke", 10, round).mainCpuMs);
      console.log(
        `\nthis tree against the baseline, the same rounds: c=10 invoke ${median(ab).toFixed(2)}× the baseline's req/s (rounds ${ab.map((r) => r.toFixed(2)).join(", ")}); ` +
          `serving-thread CPU an invoke ${median(abCpu).toFixed(2)}× the baseline's (rounds ${abCpu.map((r) => r.toFixed(2)).join(", ")}); ` +
          `c=10 invoke ÷ health: this ${median(perRound("this", 10)).toFixed(2)}×, baseline ${median(perRound("baseline", 10)).toFixed(2)}×`,
      );
    }
    const c10 = perRound("this", 10);
    const ratio = median(c10);
    console.log(
      `\ngoals (this tree): c=10 invoke ≥ 0.4× health: ${verdict(ratio >= 0.4)} (${ratio.toFixed(2)}×, rounds ${c10
        .map((r) => r.toFixed(2))
        .join(", ")}); ` +
        `c=1 invoke adds ≤ 1 ms of median latency: ${verdict(added("this") <= 1)} (${added("this").toFixed(2)} ms); load ${loads()}\n`,
    );
  } finally {
    for (const server of servers) {
      await stop(server.process);
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  }
}

async function inProcess(): Promise<void> {
  // Thousands of runs a minute: the tenant's worker-time allowance is not what is measured here.
  const pool = await ScriptPool.create({ workerSecondsPerMinute: 100_000 });
  const fresh = await ScriptPool.create({ workerSecondsPerMinute: 100_000, reuseContexts: false });
  try {
    const callTool: CallTool = async () => ({ value: 2 });
    const request = (extra: Partial<ScriptRequest>): ScriptRequest => ({
      source: "a + b",
      inputs: { a: 1, b: 2 },
      timeoutMs: 1_000,
      ...extra,
    });
    const expectThree = (outcome: unknown) => {
      if (!(typeof outcome === "object" && outcome !== null && "value" in outcome && outcome.value === 3)) {
        throw new Error(`unexpected outcome ${JSON.stringify(outcome)}`);
      }
    };
    const cases: BenchCase[] = [
      {
        name: "pool: a + b",
        perRound: IN_PROCESS.perRound,
        once: async () => expectThree(await pool.run(request({}))),
      },
      {
        name: "pool: a + 1 sibling call",
        perRound: IN_PROCESS.perRound,
        once: async () =>
          expectThree(
            await pool.run(
              request({ source: "a + vance.tools.call('two', {})", inputs: { a: 1 }, callTool }),
            ),
          ),
      },
      {
        name: "pool: a + b, a new runtime and context per run",
        perRound: IN_PROCESS.perRound,
        once: async () => expectThree(await fresh.run(request({}))),
      },
      {
        name: "node:vm (floor)",
        perRound: IN_PROCESS.perRound,
        once: () => {
          if (runInContext("a + b", createContext({ a: 1, b: 2 })) !== 3)
            throw new Error("node:vm miscounted");
        },
      },
    ];
    const { samples, elapsedSeconds } = await interleavedRounds(cases, {
      rounds: IN_PROCESS.rounds,
      warmup: IN_PROCESS.warmup,
    });
    const stats = (name: string) => {
      const times = samples.get(name)!;
      return { median: median(times), p95: percentile(times, 0.95) };
    };
    const floor = stats("node:vm (floor)").median;
    console.log(
      `In this process (the library, no HTTP): ${IN_PROCESS.rounds} interleaved rounds (${elapsedSeconds.toFixed(1)} s); ` +
        `load ${loads()}; pool ${JSON.stringify(pool.stats().workers)}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "× node:vm", right: true },
        ],
        cases.map((item) => {
          const own = stats(item.name);
          return [
            item.name,
            own.median.toFixed(3),
            own.p95.toFixed(3),
            `${(own.median / floor).toFixed(2)}×`,
          ];
        }),
      ),
    );
    const plain = stats("pool: a + b").median;
    const sibling = stats("pool: a + 1 sibling call").median - plain;
    console.log(
      `\ngoals: a + b ≤ 0.3 ms median: ${verdict(plain <= 0.3)} (${plain.toFixed(3)} ms); ` +
        `one sibling call adds ≤ 0.2 ms: ${verdict(sibling <= 0.2)} (${sibling.toFixed(3)} ms)`,
    );

    // Runs per second with 10 in flight, and this process's CPU per run (both threads and this
    // one), the context kept against a new one per run, alternating rounds.
    const rates = { reused: [] as number[], fresh: [] as number[] };
    const cpu = { reused: [] as number[], fresh: [] as number[] };
    const flood = async (target: ScriptPool, total: number) => {
      let started = 0;
      const cpuBefore = process.cpuUsage();
      const begin = performance.now();
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (started++ < total) expectThree(await target.run(request({})));
        }),
      );
      const used = process.cpuUsage(cpuBefore);
      return {
        perSecond: total / ((performance.now() - begin) / 1000),
        cpuUs: (used.user + used.system) / total,
      };
    };
    await flood(pool, IN_PROCESS.flood);
    await flood(fresh, IN_PROCESS.flood);
    for (let round = 0; round < IN_PROCESS.rounds; round++) {
      for (const [name, target] of [
        ["reused", pool],
        ["fresh", fresh],
      ] as const) {
        const measured = await flood(target, IN_PROCESS.flood);
        rates[name].push(measured.perSecond);
        cpu[name].push(measured.cpuUs);
      }
    }
    console.log(
      `\npool, 10 in flight, ${IN_PROCESS.flood} runs a round, medians of ${IN_PROCESS.rounds} alternating rounds; load ${loads()}: ` +
        `context kept ${median(rates.reused).toFixed(0)} runs/s (${median(cpu.reused).toFixed(0)} µs CPU a run), ` +
        `a new runtime and context per run ${median(rates.fresh).toFixed(0)} runs/s (${median(cpu.fresh).toFixed(0)} µs CPU a run): ` +
        `${(median(rates.reused) / median(rates.fresh)).toFixed(2)}× the runs`,
    );
  } finally {
    await pool.close();
    await fresh.close();
  }
}

function key(item: HttpCase): string {
  return `${item.tree} ${item.name} c=${item.connections}`;
}

function verdict(met: boolean): string {
  return met ? "met" : "NOT met";
}

function loads(): string {
  return loadavg()
    .map((load) => load.toFixed(2))
    .join(" / ");
}

/**
 * CPU time (user + system, ms) a process has used, all its threads, from /proc: what the server
 * spends per request, whatever else the machine runs; with `thread`, that thread's alone (the
 * process's id is its serving thread). NaN where there is no /proc.
 */
function cpuMs(pid: number | undefined, thread?: number): number {
  try {
    const stat = readFileSync(
      thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`,
      "utf8",
    );
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the line, in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** One autocannon process against the server; any error or non-2xx answer fails the bench. */
function autocannon(
  item: HttpCase,
  seconds: number,
): Promise<{ perSecond: number; meanMs: number; total: number }> {
  const args = [AUTOCANNON, "-j", "-c", String(item.connections), "-d", String(seconds), ...item.args];
  return new Promise((done, fail) => {
    execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return fail(new Error(`autocannon ${key(item)}: ${error.message} ${stderr}`));
      const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
        requests: { average: number; total: number };
        latency: { mean: number };
        errors: number;
        timeouts: number;
        non2xx: number;
      };
      if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
        return fail(
          new Error(
            `autocannon ${key(item)}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx`,
          ),
        );
      }
      done({ perSecond: result.requests.average, meanMs: result.latency.mean, total: result.requests.total });
    });
  });
}

/**
 * Starts the API of the checkout at `root` as `npm start` does, on `port`, with nothing but what it
 * needs in its environment; with `profileDir`, it writes a CPU profile there when it stops.
 */
function startServer(
  root: string,
  port: number,
  dataDir: string,
  profileDir: string | undefined,
): ChildProcess {
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${resolve(profileDir)}`] : [];
  const server = spawn(process.execPath, [...profile, "--import", "tsx", "functions/api/node.ts"], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      HOST: "127.0.0.1",
      PORT: String(port),
      VANCE_DATA_DIR: dataDir,
      VANCE_JWT_SECRET: SECRET,
    },
    // The request log goes where a service's stdout goes; nothing reads it here.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  server.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4_000);
  });
  server.on("exit", (code, signal) => {
    // 143: it ended on the bench's SIGTERM.
    if (code !== 0 && code !== 143 && signal !== "SIGTERM")
      console.error(`the server exited with ${code}: ${stderr}`);
  });
  return server;
}

/** Waits until the server answers health; fails if it exits first, or has not started in a minute. */
async function untilHealthy(base: string, server: ChildProcess): Promise<void> {
  const end = performance.now() + 60_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
    if (performance.now() > end) throw new Error("the server did not answer health within a minute");
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stop(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  await exited;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? done(address.port) : fail(new Error("no port")),
      );
    });
  });
}

runIfMain(import.meta.url, main);
