import { resolve } from "node:path";
import { serve } from "@hono/node-server";
import { createJsonLogger, type LogLevel } from "@vance/adapters";
import { createApp } from "./app";
import { mintToken } from "./auth";
import { type Config, DEFAULT_DATA_DIR, loadConfig } from "./config";
import { closeWhenBodyUnread } from "./keep-alive";
import { localJwtSecret } from "./local-secret";
import { AsyncLineSink } from "./log-sink";
import { buildServices, type Services, VERSION } from "./services";
import { startTelemetry } from "./telemetry";
import { projectHref } from "./ui/pages/common";

/**
 * The project the banner's examples open: a fresh server has only the bundled layer there, which
 * every project sees. The listing link opens it too (the platform token names no tenant of its
 * own, so the start page would wait for one to be typed).
 */
const TOUR = { tenant: "demo", project: "hello" } as const;

/** How long a stopping server waits for the store to acknowledge the usage counts it holds. */
const SHUTDOWN_FLUSH_MS = 8_000;
/** How long a stopping server waits for its log lines to be written (a reader that is gone never reads). */
const LOG_FLUSH_MS = 2_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const secret = localJwtSecret(config);
  // A terminal reads one short line per event; a pipe or a log shipper gets JSON, written off the
  // serving thread (log-sink.ts: a lagging reader of a pipe would stop it).
  const sinks = process.stdout.isTTY ? undefined : { out: new AsyncLineSink(1), err: new AsyncLineSink(2) };
  const logger = createJsonLogger({
    trace: config.VANCE_LOG_LEVEL === "trace",
    pretty: process.stdout.isTTY,
    ...(sinks
      ? { write: (line: string, level: LogLevel) => (level === "WARN" ? sinks.err : sinks.out).write(line) }
      : {}),
  });
  await startTelemetry(process.env, VERSION);
  const services = await buildServices(config, secret, { logger });
  const app = createApp(services);
  // Compile catalog.json once, so each manifest reads the catalog with one GET instead of listing it.
  const synced = await services.syncCatalog();
  scanStoresPeriodically(services, config.VANCE_STORE_SCAN_SECONDS);
  const token = await mintToken(secret, { tenant: "*", roles: ["read", "write", "admin"] }, 30 * 24 * 3600);
  const base = `http://${config.HOST}:${config.PORT}`;
  const server = serve(
    { fetch: closeWhenBodyUnread(app.fetch), port: config.PORT, hostname: config.HOST },
    () => {
      console.log(`Vance Server Tools listening on ${base}`);
      console.log(
        `  storage: ${config.VANCE_STORE === "fs" ? `embedded, in ${resolve(config.VANCE_DATA_DIR)}` : "S3"}`,
      );
      console.log(
        `  model catalog: ${synced.providers} providers, ${synced.models} models (npm run catalog:sync after edits)`,
      );
      console.log(`  API overview: ${base}/docs  (OpenAPI: ${base}/openapi.json)`);
      if (config.VANCE_LOCAL_TOKENS) {
        console.log("\nDevelopment token (all tenants, roles read,write,admin, valid 30 days):\n");
        console.log(`  export TOKEN=${token}\n`);
        console.log(
          `More tokens (this server's secret): ${tokenCommand(config)} -- --tenant acme --roles read,write\n`,
        );
        console.log(
          `Web listing (read only; the token stays in the URL fragment): ${base}${projectHref(TOUR)}#token=${token}\n`,
        );
      } else {
        const issuers = config.VANCE_TOKEN_ISSUERS.map((issuer) => issuer.issuer).join(", ");
        console.log(`\nTokens: from ${issuers} only (VANCE_LOCAL_TOKENS is off: no development token)\n`);
      }
      console.log("Try:\n");
      const project = `${base}/v1/tenants/${TOUR.tenant}/projects/${TOUR.project}`;
      console.log(`  curl -s -H "Authorization: Bearer $TOKEN" ${project}/tools`);
      console.log(`  curl -s -H "Authorization: Bearer $TOKEN" ${project}/tools/doc_getting_started\n`);
    },
  );
  // Usage is written behind the answers: what is still queued is written before the process ends.
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      // Counts written behind answers, and layer indexes a write scheduled, land before the exit;
      // counts the store has not acknowledged by then are reported lost (`usage.write_failed`).
      void Promise.allSettled([
        services.usage.close(SHUTDOWN_FLUSH_MS),
        services.generations.settled(SHUTDOWN_FLUSH_MS),
        services.compiledLayers.settled(),
      ])
        .then(() => Promise.all([sinks?.out.settled(LOG_FLUSH_MS), sinks?.err.settled(LOG_FLUSH_MS)]))
        .finally(() => process.exit(code));
    });
  }
  server.once("error", (error: NodeJS.ErrnoException) => {
    console.error(listenProblem(error, config));
    process.exit(1);
  });
}

/** `npm run token` with the settings that make it find this server's secret. */
function tokenCommand(config: Config): string {
  if (config.VANCE_JWT_SECRET) return "VANCE_JWT_SECRET=… npm run token";
  return config.VANCE_DATA_DIR === DEFAULT_DATA_DIR
    ? "npm run token"
    : `VANCE_DATA_DIR=${config.VANCE_DATA_DIR} npm run token`;
}

/** One line for a server that cannot listen, saying what to change. */
function listenProblem(error: NodeJS.ErrnoException, config: Config): string {
  const at = `${config.HOST}:${config.PORT}`;
  if (error.code === "EADDRINUSE") {
    return `cannot listen on ${at}: the port is in use (another npm start?); stop that server or start with PORT=<another port>`;
  }
  if (error.code === "EACCES")
    return `cannot listen on ${at}: not permitted (ports below 1024 need privileges); choose PORT=8787`;
  if (error.code === "EADDRNOTAVAIL")
    return `cannot listen on ${at}: HOST=${config.HOST} is not an address of this machine`;
  return `cannot listen on ${at}: ${error.message}`;
}

/**
 * Files edited in the data directory (or objects written into a local S3 look-alike) reach warm
 * caches through this scan, as bucket events do in AWS: a changed layer's generation is bumped.
 */
function scanStoresPeriodically(services: Services, seconds: number): void {
  if (seconds === 0) return;
  const scan = () =>
    services.scanStores().catch((error: unknown) => {
      services.logger.warn("store_scan.failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    });
  void scan();
  let running = false;
  setInterval(async () => {
    if (running) return;
    running = true;
    await scan();
    running = false;
  }, seconds * 1000).unref();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
