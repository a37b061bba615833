/**
 * Bench: per-invocation time of a `scripted` tool (`a + b`) in the worker-thread QuickJS pool,
 * against node:vm (a new context plus runInContext of the same expression) as a baseline, and
 * the same tool over HTTP against `/v1/health`.
 *
 * Cases, measured interleaved in rounds so that machine load hits them alike:
 * - pool: `a + b` on a worker thread (fresh QuickJS runtime and context, the postMessage hop),
 * - pool + 1 sibling call: `vance.tools.call` answered by the main thread (Atomics.wait hop),
 * - node:vm: baseline (not a sandbox: shares the host's thread and has no limits),
 * - HTTP: `POST …/tools/add_numbers/invoke` and `GET /v1/health` on a local server, keep-alive.
 * - HTTP, c=10: requests per second of the invoke and of health with 10 in flight (keep-alive
 *   `node:http`), alternating rounds.
 * Goals: `a + b` ≤ 0.3 ms median; a sibling call adds ≤ 0.2 ms; over HTTP the invocation adds
 * ≤ 1 ms median over health; at c=10 the invoke serves ≥ 0.3× health's requests per second.
 *
 * Run: `npm run bench -- scripted`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createContext, runInContext } from "node:vm";
import { serve } from "@hono/node-server";
import { silentLogger } from "@vance/core";
import { type CallTool, ScriptPool, type ScriptRequest } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import { type BenchCase, interleavedRounds } from "./support/rounds";

const WARMUP_PER_CASE = 300;
const ROUNDS = 6;
const PER_ROUND = 500;
const HTTP_PER_ROUND = 200;
const SECRET = "bench-secret-0123456789";
const CONCURRENCY = 10;
const THROUGHPUT_REQUESTS = 1_000;

/** Runs the bench and prints a table: median, p95 and their ratio to the case's baseline. */
export async function main(): Promise<void> {
  const pool = await ScriptPool.create();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-scripted-"));
  const services = await buildServices(loadConfig({ VANCE_DATA_DIR: dataDir }), SECRET, {
    logger: silentLogger,
    scripts: pool,
    env: {},
  });
  const server = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const token = await mintToken(SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
    const auth = { authorization: `Bearer ${token}` };
    const tools = `${base}/v1/tenants/bench/projects/p/tools`;
    const put = await fetch(`${tools}/add_numbers`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/yaml" },
      body: "type: scripted\ndescription: a + b\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
    });
    if (!put.ok) throw new Error(`PUT add_numbers: ${put.status} ${await put.text()}`);

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
        perRound: PER_ROUND,
        once: async () => expectThree(await pool.run(request({}))),
      },
      {
        name: "pool: a + 1 sibling call",
        perRound: PER_ROUND,
        once: async () =>
          expectThree(
            await pool.run(
              request({ source: "a + vance.tools.call('two', {})", inputs: { a: 1 }, callTool }),
            ),
          ),
      },
      {
        name: "node:vm (baseline)",
        perRound: PER_ROUND,
        once: () => {
          if (runInContext("a + b", createContext({ a: 1, b: 2 })) !== 3)
            throw new Error("node:vm miscounted");
        },
      },
      {
        name: "HTTP: invoke add_numbers",
        perRound: HTTP_PER_ROUND,
        once: async () => {
          const response = await fetch(`${tools}/add_numbers/invoke`, {
            method: "POST",
            headers: { ...auth, "content-type": "application/json" },
            body: '{"params":{"a":1,"b":2}}',
          });
          expectThree(await response.json());
        },
      },
      {
        name: "HTTP: GET /v1/health",
        perRound: HTTP_PER_ROUND,
        once: async () => {
          const response = await fetch(`${base}/v1/health`);
          if (!response.ok) throw new Error(`health ${response.status}`);
          await response.arrayBuffer();
        },
      },
    ];

    const { samples, elapsedSeconds: elapsed } = await interleavedRounds(cases, {
      rounds: ROUNDS,
      warmup: WARMUP_PER_CASE,
    });
    const stats = (name: string) => summarize(samples.get(name)!);
    const baselineOf = (name: string) =>
      name.startsWith("HTTP") ? "HTTP: GET /v1/health" : "node:vm (baseline)";

    const rows = cases.map((bench) => {
      const own = stats(bench.name);
      const baseline = stats(baselineOf(bench.name));
      return [
        bench.name,
        own.median.toFixed(3),
        own.p95.toFixed(3),
        `${(own.median / baseline.median).toFixed(2)}x`,
        baselineOf(bench.name) === "node:vm (baseline)" ? "node:vm" : "health",
      ];
    });
    console.log(
      `scripted: \`a + b\`, ${ROUNDS} interleaved rounds (${elapsed.toFixed(1)} s); ` +
        `${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)}; pool ${JSON.stringify(pool.stats().workers)}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "median ratio", right: true },
          { title: "vs" },
        ],
        rows,
      ),
    );
    const plain = stats("pool: a + b").median;
    const sibling = stats("pool: a + 1 sibling call").median - plain;
    const http = stats("HTTP: invoke add_numbers").median - stats("HTTP: GET /v1/health").median;
    const verdict = (met: boolean) => (met ? "met" : "NOT met");
    console.log(
      `\ngoals: a + b ≤ 0.3 ms median: ${verdict(plain <= 0.3)} (${plain.toFixed(3)} ms); ` +
        `one sibling call adds ≤ 0.2 ms: ${verdict(sibling <= 0.2)} (${sibling.toFixed(3)} ms); ` +
        `HTTP invoke adds ≤ 1 ms over health: ${verdict(http <= 1)} (${http.toFixed(3)} ms)`,
    );

    // Throughput with 10 requests in flight (keep-alive `node:http`, which adds less per request
    // than fetch): the invoke against health, alternating rounds.
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const invokeOnce = async () =>
      expectThree(
        JSON.parse(await httpPost(agent, `${tools}/add_numbers/invoke`, auth, '{"params":{"a":1,"b":2}}')),
      );
    const healthOnce = () => httpGet(agent, `${base}/v1/health`);
    const perSecond = { invoke: [] as number[], health: [] as number[] };
    await throughput(invokeOnce, THROUGHPUT_REQUESTS);
    for (let round = 0; round < ROUNDS; round++) {
      perSecond.invoke.push(await throughput(invokeOnce, THROUGHPUT_REQUESTS));
      perSecond.health.push(await throughput(healthOnce, THROUGHPUT_REQUESTS));
    }
    agent.destroy();
    const invokeRate = median(perSecond.invoke);
    const healthRate = median(perSecond.health);
    console.log(
      `
c=${CONCURRENCY}, ${THROUGHPUT_REQUESTS} requests a round, medians of ${ROUNDS} rounds; load average ${loadavg()[0]?.toFixed(2)}: ` +
        `invoke add_numbers ${invokeRate.toFixed(0)} req/s, GET /v1/health ${healthRate.toFixed(0)} req/s ` +
        `(${(invokeRate / healthRate).toFixed(2)}× health; goal ≥ 0.3×: ${verdict(invokeRate / healthRate >= 0.3)})`,
    );
  } finally {
    server.close();
    await pool.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Requests per second of `once`, `total` times with {@link CONCURRENCY} in flight. */
async function throughput(once: () => Promise<unknown>, total: number): Promise<number> {
  let started = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started < total) {
        started++;
        await once();
      }
    }),
  );
  return total / ((performance.now() - begin) / 1000);
}

function httpGet(agent: Agent, url: string): Promise<string> {
  return httpCall(agent, url, "GET", {}, undefined);
}

function httpPost(agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<string> {
  return httpCall(agent, url, "POST", { ...headers, "content-type": "application/json" }, body);
}

function httpCall(
  agent: Agent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method, agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if ((response.statusCode ?? 0) >= 300)
          reject(new Error(`${method} ${url}: ${response.statusCode} ${text}`));
        else resolve(text);
      });
      response.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

function summarize(times: readonly number[]): { median: number; p95: number } {
  return { median: median(times), p95: percentile(times, 0.95) };
}

runIfMain(import.meta.url, main);
