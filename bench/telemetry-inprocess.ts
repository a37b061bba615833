/**
 * Bench: the no-op tracing path's cost in one process, without HTTP — the same app answering
 * `app.request` for the 50-tool warm manifest and the scripted invoke of `bench/telemetry.ts`,
 * with the tracing mode switched between short batches: off; on with the no-op exporter and
 * the promise-hook context manager (the default on Node 20); on with the no-op exporter and
 * AsyncLocalStorage (`VANCE_OTEL_CONTEXT=async-local-storage`); AsyncLocalStorage alone,
 * without a tracer. After each switch 20 requests of each case run unmeasured (the switch
 * re-optimises the request path's code), then 100 measured; the CPU time per request is the
 * median over 40 rounds in an order rotated each round. Without the HTTP stack a request costs
 * a quarter of what it costs over HTTP, so the ratios here are about four times those of
 * `bench/telemetry.ts`; the differences in µs are the same work. It also counts the promises
 * a request makes (each one is what a context manager's hooks pay for).
 *
 * Run: `npx tsx bench/telemetry-inprocess.ts` (not in `npm run bench`: `telemetry` is the bench).
 */
import { createHook } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { silentLogger } from "@vance/core";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { startTelemetry, type Telemetry } from "../functions/api/telemetry";
import { median, renderTable, runIfMain } from "./support/report";
import { telemetryBenchTools } from "./support/telemetry-tools";

const SECRET = "bench-secret-0123456789";
const ROUNDS = 40;
const PER_ROUND = 100;
const WARMUP_AFTER_SWITCH = 20;
const MODES = ["off", "noop", "noop-als", "als-only"] as const;
type Mode = (typeof MODES)[number];

export async function main(): Promise<void> {
  const pool = await ScriptPool.create();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-telemetry-inprocess-"));
  const services = await buildServices(loadConfig({ VANCE_DATA_DIR: dataDir }), SECRET, {
    logger: silentLogger,
    scripts: pool,
    env: {},
  });
  const app = createApp(services);
  let telemetry: Telemetry | undefined;
  let alone: AsyncLocalStorageContextManager | undefined;
  const use = async (mode: Mode) => {
    await telemetry?.shutdown();
    telemetry = undefined;
    if (alone) {
      context.disable();
      alone = undefined;
    }
    if (mode === "als-only") {
      alone = new AsyncLocalStorageContextManager().enable();
      context.setGlobalContextManager(alone);
    } else if (mode !== "off") {
      telemetry = await startTelemetry(
        {
          OTEL_TRACES_EXPORTER: "noop",
          OTEL_METRICS_EXPORTER: "none",
          VANCE_OTEL_CONTEXT: mode === "noop-als" ? "async-local-storage" : "promise-hooks",
        },
        "bench",
      );
    }
  };
  try {
    const token = await mintToken(SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
    const auth = { authorization: `Bearer ${token}` };
    const project = "/v1/tenants/bench/projects/p";
    const put = async (name: string, body: string) => {
      const res = await app.request(`${project}/tools/${name}`, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/yaml" },
        body,
      });
      if (!res.ok) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    };
    for (const [name, body] of telemetryBenchTools(50)) await put(name, body);
    const spawned = await app.request(`${project}/processes`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ models: ["openai/gpt-4.1"], allowedToolsAdd: ["@bench"] }),
    });
    if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
    const { processId } = (await spawned.json()) as { processId: string };
    const cases = {
      manifest: async () => {
        const res = await app.request(`${project}/processes/${processId}/manifest`, { headers: auth });
        if (res.status !== 200) throw new Error(`manifest: ${res.status}`);
        await res.arrayBuffer();
      },
      invoke: async () => {
        const res = await app.request(`${project}/tools/summary/invoke`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ params: { a: 2 } }),
        });
        const body = (await res.json()) as { value?: unknown };
        if (body.value !== 3) throw new Error(`invoke: ${res.status} ${JSON.stringify(body)}`);
      },
    };
    for (let i = 0; i < 300; i++) {
      await cases.manifest();
      await cases.invoke();
    }
    const promises: Record<string, number> = {};
    for (const [name, run] of Object.entries(cases)) {
      let count = 0;
      const hook = createHook({
        init(_id, type) {
          if (type === "PROMISE") count++;
        },
      }).enable();
      for (let i = 0; i < 4; i++) await run();
      hook.disable();
      promises[name] = count / 4;
    }
    const cpu = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < MODES.length; k++) {
        const mode = MODES[(round + k) % MODES.length]!;
        await use(mode);
        for (const [name, run] of Object.entries(cases)) {
          for (let i = 0; i < WARMUP_AFTER_SWITCH; i++) await run();
          const before = process.cpuUsage();
          for (let i = 0; i < PER_ROUND; i++) await run();
          const used = process.cpuUsage(before);
          const key = `${name}, ${mode}`;
          cpu.set(key, [...(cpu.get(key) ?? []), (used.user + used.system) / PER_ROUND]);
        }
      }
    }
    await use("off");
    const rows = Object.keys(cases).flatMap((name) => {
      const off = median(cpu.get(`${name}, off`)!);
      return MODES.map((mode) => {
        const own = median(cpu.get(`${name}, ${mode}`)!);
        return [
          `${name}, ${mode}`,
          own.toFixed(0),
          `${(own - off).toFixed(0)}`,
          `${(own / off).toFixed(3)}x`,
        ];
      });
    });
    const { loadavg } = await import("node:os");
    console.log(
      `telemetry-inprocess: Node ${process.version}, ${ROUNDS} rounds, load average ${loadavg()[0]?.toFixed(2)}; ` +
        `promises per request: manifest ${promises.manifest}, invoke ${promises.invoke}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "CPU µs", right: true },
          { title: "added µs", right: true },
          { title: "vs off", right: true },
        ],
        rows,
      ),
    );
  } finally {
    await use("off");
    await pool.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
