/**
 * Bench: what tracing costs a request — the same requests with tracing off, on with spans made
 * and dropped (`OTEL_TRACES_EXPORTER=noop`: the instrumentation's own cost), and on with an
 * OTLP/HTTP exporter sending to a receiver on 127.0.0.1 (batched, as in production).
 *
 * Cases, each in the three modes, measured interleaved in rounds so machine load hits them alike:
 * - `invoke`: `POST …/tools/summary/invoke`, a scripted tool making one sibling call (a second
 *   scripted tool): request, two tool spans, cascade reads, validations and two script runs;
 * - `manifest`: `GET …/processes/{id}/manifest` of a process over 50 tools.
 * The mode is switched between batches through `startTelemetry`, the composition root's own code.
 * Goal: ≤ 5% added to the median with the no-op exporter. Beside the wall-clock median, the CPU
 * time of the process per request (`process.cpuUsage`, every thread: the script workers' share is
 * the same in every mode): on a loaded machine it moves far less than the wall clock, which
 * counts the time the request waited for a core.
 *
 * Run: `npm run bench -- telemetry`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { silentLogger } from "@vance/core";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { startTelemetry, type Telemetry } from "../functions/api/telemetry";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import { type BenchCase, interleavedRounds } from "./support/rounds";

const WARMUP_PER_CASE = 100;
const ROUNDS = 6;
const PER_ROUND = 150;
const TOOLS = 50;
const SECRET = "bench-secret-0123456789";
const MODES = ["off", "noop", "otlp"] as const;
type Mode = (typeof MODES)[number];

/** Runs the bench and prints median, p95 and the ratio to tracing off per case. */
export async function main(): Promise<void> {
  const receiver = await startReceiver();
  const pool = await ScriptPool.create();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-telemetry-"));
  const services = await buildServices(loadConfig({ VANCE_DATA_DIR: dataDir }), SECRET, {
    logger: silentLogger,
    scripts: pool,
    env: {},
  });
  const server = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let telemetry: Telemetry | undefined;
  let current: Mode | undefined;
  const use = async (mode: Mode) => {
    if (mode === current) return;
    await telemetry?.shutdown();
    telemetry = undefined;
    current = mode;
    if (mode === "off") return;
    telemetry = await startTelemetry(
      mode === "noop"
        ? { OTEL_TRACES_EXPORTER: "noop", OTEL_METRICS_EXPORTER: "none" }
        : { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: "none" },
      "bench",
    );
  };
  try {
    const token = await mintToken(SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
    const auth = { authorization: `Bearer ${token}` };
    const project = `${base}/v1/tenants/bench/projects/p`;
    const put = async (name: string, body: string) => {
      const res = await fetch(`${project}/tools/${name}`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/yaml" },
        body,
      });
      if (!res.ok) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    };
    await put(
      "add",
      "type: scripted\ndescription: a + b\nlabels: [bench]\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
    );
    await put(
      "summary",
      `type: scripted\ndescription: one sibling call\nlabels: [bench]\nparameters:\n  inputs:\n    - { name: a, type: number }\n  source: ${JSON.stringify('vance.tools.call("add", { a, b: 1 })')}\n`,
    );
    for (let i = 0; i < TOOLS - 2; i++) {
      await put(
        `tool_${i}`,
        `type: scripted\ndescription: Tool ${i} of the bench\nlabels: [bench]\nparameters:\n  inputs: []\n  source: "${i}"\n`,
      );
    }
    const spawned = await fetch(`${project}/processes`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ models: ["openai/gpt-4.1"], allowedToolsAdd: ["@bench"] }),
    });
    if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
    const { processId } = (await spawned.json()) as { processId: string };

    const invoke = async () => {
      const res = await fetch(`${project}/tools/summary/invoke`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ params: { a: 2 } }),
      });
      const body = (await res.json()) as { value?: unknown };
      if (body.value !== 3) throw new Error(`invoke: ${res.status} ${JSON.stringify(body)}`);
    };
    const manifest = async () => {
      const res = await fetch(`${project}/processes/${processId}/manifest`, { headers: auth });
      if (res.status !== 200) throw new Error(`manifest: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const cpu = new Map<string, { micros: number; ops: number }>();
    const counted = (name: string, run: () => Promise<void>) => async () => {
      const before = process.cpuUsage();
      await run();
      const used = process.cpuUsage(before);
      const sum = cpu.get(name) ?? { micros: 0, ops: 0 };
      cpu.set(name, { micros: sum.micros + used.user + used.system, ops: sum.ops + 1 });
    };
    const cases: BenchCase[] = MODES.flatMap((mode) => [
      {
        name: `invoke, tracing ${mode}`,
        perRound: PER_ROUND,
        once: counted(`invoke, tracing ${mode}`, () => use(mode).then(invoke)),
      },
      {
        name: `manifest, tracing ${mode}`,
        perRound: PER_ROUND,
        once: counted(`manifest, tracing ${mode}`, () => use(mode).then(manifest)),
      },
    ]);
    const { samples, elapsedSeconds } = await interleavedRounds(cases, {
      rounds: ROUNDS,
      warmup: WARMUP_PER_CASE,
    });
    await use("off");
    const stats = (name: string) => {
      const times = samples.get(name)!;
      const used = cpu.get(name)!;
      return { median: median(times), p95: percentile(times, 0.95), cpu: used.micros / used.ops };
    };
    const rows = cases.map((bench) => {
      const own = stats(bench.name);
      const off = stats(bench.name.replace(/tracing \w+$/, "tracing off"));
      return [
        bench.name,
        own.median.toFixed(3),
        own.p95.toFixed(3),
        `${(own.median / off.median).toFixed(3)}x`,
        own.cpu.toFixed(0),
        `${(own.cpu / off.cpu).toFixed(3)}x`,
      ];
    });
    console.log(
      `telemetry: ${ROUNDS} interleaved rounds (${elapsedSeconds.toFixed(1)} s); ${cpus().length} CPUs, ` +
        `load average ${loadavg()[0]?.toFixed(2)}; the receiver got ${receiver.spans()} spans in ${receiver.posts()} posts\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "vs tracing off", right: true },
          { title: "CPU µs", right: true },
          { title: "CPU vs off", right: true },
        ],
        rows,
      ),
    );
    const added = (what: string, of: "median" | "cpu") =>
      stats(`${what}, tracing noop`)[of] / stats(`${what}, tracing off`)[of] - 1;
    const verdict = (share: number) => `${(share * 100).toFixed(1)}% (${share <= 0.05 ? "met" : "NOT met"})`;
    for (const of of ["median", "cpu"] as const) {
      console.log(
        `${of === "median" ? "\n" : ""}goal ≤ 5% added with the no-op exporter (${of === "cpu" ? "CPU time" : "median"}): ` +
          `invoke ${verdict(added("invoke", of))}, manifest ${verdict(added("manifest", of))}`,
      );
    }
  } finally {
    await telemetry?.shutdown();
    server.close();
    await pool.close();
    await receiver.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
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
