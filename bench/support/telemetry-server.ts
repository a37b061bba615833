/**
 * One server of `bench/telemetry.ts`, in its own process: the composition root's order
 * (`startTelemetry` with the environment it was given, then the services), on 127.0.0.1 at a
 * free port. It tells its parent the port over IPC, then answers `cpu` messages with its
 * `process.cpuUsage()` (every thread: the script workers' share is the same in every mode), so
 * the bench reads the server's CPU time alone — not the client's, whose own promises would pay
 * the context manager's hooks in a shared process — and `stop` by shutting down.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { silentLogger } from "@vance/core";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../../functions/api/app";
import { loadConfig } from "../../functions/api/config";
import { buildServices } from "../../functions/api/services";
import { startTelemetry } from "../../functions/api/telemetry";

/** What the parent sends. */
export type ServerRequest = { readonly cpu: number } | { readonly stop: true };
/** What this process answers. */
export type ServerAnswer =
  | { readonly port: number; readonly traces: string; readonly context: string; readonly node: string }
  | { readonly cpu: number; readonly micros: number };

async function main(): Promise<void> {
  const secret = process.env.BENCH_SECRET;
  if (!secret || !process.send) throw new Error("start this through bench/telemetry.ts (IPC, BENCH_SECRET)");
  const telemetry = await startTelemetry(process.env, "bench");
  const pool = await ScriptPool.create();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-telemetry-"));
  const services = await buildServices(loadConfig({ VANCE_DATA_DIR: dataDir }), secret, {
    logger: silentLogger,
    scripts: pool,
    env: {},
  });
  const server = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const send = (answer: ServerAnswer) => process.send?.(answer);
  process.on("message", async (message: ServerRequest) => {
    if ("cpu" in message) {
      const used = process.cpuUsage();
      send({ cpu: message.cpu, micros: used.user + used.system });
      return;
    }
    await telemetry.shutdown();
    server.close();
    await pool.close();
    rmSync(dataDir, { recursive: true, force: true });
    process.disconnect();
  });
  send({
    port: (server.address() as AddressInfo).port,
    traces: telemetry.traces,
    context: telemetry.context,
    node: process.version,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
