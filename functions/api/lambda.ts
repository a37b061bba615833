import { loadLazyEngines, VanceError } from "@vance/core";
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { bundledFiles, loadFunctionConfig } from "../settings";
import { startFunction } from "../start";
import { createApp } from "./app";
import { problemResponse } from "./problem";
import { buildServices, lazyScriptPool, VERSION } from "./services";
import { startTelemetry } from "./telemetry";

/**
 * The Lambda entry (built to dist/functions/api/lambda.mjs, which infra deploys): the same Hono
 * app as the local server, over S3 and DynamoDB, its buckets, table and secrets linked by infra.
 * A function URL is no socket bound to `HOST`, so the MCP endpoints' loopback `Host` check does not apply.
 * This is production: `/v1` takes tokens of the trusted issuers (`VANCE_TOKEN_ISSUERS`), and the
 * service's own HS256 tokens only when `VANCE_LOCAL_TOKENS=true` says so.
 */
export const handler = await startFunction(
  "api",
  async () => {
    const config = loadFunctionConfig({
      defaults: {
        VANCE_STORE: "s3",
        VANCE_STATE: "dynamodb",
        VANCE_LOCAL_TOKENS: "false",
        ...bundledFiles(import.meta.url, [
          "VANCE_SCRIPT_WORKER",
          "VANCE_PARSE_WORKER",
          "VANCE_SCRIPT_WASM",
          "VANCE_DEFAULTS_DIR",
        ]),
      },
      // Never generated here: the next instance could not verify the tokens or read the secrets.
      require: ["VANCE_JWT_SECRET", "VANCE_SECRETS_KEY"],
    });
    // Before the services: their instruments bind to the meter provider registered now.
    // Off unless configured; infra/api.ts sets OTEL_METRICS_EXPORTER=emf (CloudWatch EMF lines)
    // in every deploy. The SDK is imported only then, a chunk outside the start bundle.
    const telemetry = await startTelemetry(process.env, VERSION);
    const services = await buildServices(config, config.VANCE_JWT_SECRET!, {
      // Most first events run no script: QuickJS and the workers start at the first that does.
      scripts: lazyScriptPool(config),
      // Ajv, RE2, acorn and the YAML parser load at the first event that may read a document or
      // check a schema or a script: any but a health check (`loadLazyEngines` below).
      lazyEngines: true,
      // A function URL's own domain, from the event, unless VANCE_PUBLIC_URL names another.
      defaultPublicUrl: "event",
    });
    const handler = handle(createApp({ ...services, mcp: { ...services.mcp, loopbackOnly: false } }));
    // A sandbox is frozen between invocations and may be reaped frozen: the uses counted by each
    // answer are acknowledged by DynamoDB before the invocation answers, and what a telemetry
    // batch holds is sent. A store that does not acknowledge within USAGE_FLUSH_MS delays the
    // answer no longer: those uses stay held with their tokens and are resent when the instance
    // thaws (inside the token window), and lost with the instance if it never does — reported
    // now, as `usage.flush_incomplete`.
    return async (...args: Parameters<typeof handler>) => {
      if (!isHealthCheck(args[0])) await loadLazyEngines();
      try {
        return await handler(...args);
      } finally {
        // A write's generation bump that DynamoDB did not take is resent until it lands: before
        // answering too, so a frozen instance does not keep other instances on the old document.
        const [counted] = await Promise.all([
          services.usage.flush({ withinMs: USAGE_FLUSH_MS }),
          services.generations.settled(USAGE_FLUSH_MS),
        ]);
        if (!counted) services.logger.warn("usage.flush_incomplete", { tools: services.usage.backlog });
        if (telemetry.traces !== "off" || telemetry.metrics !== "off") await telemetry.flush();
      }
    };
  },
  (_error, log) =>
    handle(
      new Hono().all("*", () => {
        log();
        return problemResponse(
          new VanceError("start_failed", "the service could not start; its log names the cause"),
          () => {},
        );
      }),
    ),
);

/** How long an invocation's answer waits for DynamoDB to acknowledge its usage counts. */
const USAGE_FLUSH_MS = 5_000;

/** A function URL's health check: the one event that never checks a JSON Schema or a script. */
function isHealthCheck(event: { readonly rawPath?: string; readonly requestContext?: unknown }): boolean {
  const http = (event.requestContext as { http?: { method?: string } } | undefined)?.http;
  return event.rawPath === "/v1/health" && (http?.method === "GET" || http?.method === "HEAD");
}
