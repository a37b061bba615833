import { builtFunction } from "./bundles";
import { diagnosticWebhook, jwtSecret, secretsKey } from "./secrets";
import { catalog, documents, state } from "./storage";

/**
 * The identity settings (README "Identity"), passed on from the deploying shell when set: issuers
 * are configuration, not secrets, and a stage without them refuses to start (unless local tokens
 * are turned on) rather than accept no token.
 */
const IDENTITY_SETTINGS = ["VANCE_TOKEN_ISSUERS", "VANCE_LOCAL_TOKENS", "VANCE_PUBLIC_URL"] as const;

/**
 * Telemetry the deploying shell may set (README "Operating"): an OTLP collector's endpoint (an
 * ADOT collector on the function, which holds any credentials) and which exporters run. Not
 * `OTEL_EXPORTER_OTLP_HEADERS`: it carries API keys, which a function's settings would show.
 */
const TELEMETRY_SETTINGS = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_TRACES_EXPORTER",
  "OTEL_SERVICE_NAME",
] as const;

/**
 * Metrics are on in every deploy, as CloudWatch EMF lines (no collector needed): the metrics SDK
 * is a chunk of its own, loaded by the first invocation's start, never part of the start bundle.
 * `OTEL_METRICS_EXPORTER=otlp` (with an endpoint) or `none` from the deploying shell replaces it.
 */
const METRICS_EXPORTER = process.env.OTEL_METRICS_EXPORTER ?? "emf";

/**
 * The HTTP API: one Hono app behind a function URL. Its settings come from the links (buckets,
 * table, secrets, the diagnostics webhook: functions/settings.ts reads them through `Resource`).
 */
export const api = new sst.aws.Function("Api", {
  ...builtFunction("api"),
  memory: "2048 MB",
  timeout: "30 seconds",
  url: true,
  link: [documents, catalog, state, jwtSecret, secretsKey, diagnosticWebhook],
  environment: {
    ...Object.fromEntries(
      [...IDENTITY_SETTINGS, ...TELEMETRY_SETTINGS].flatMap((name) => {
        const value = process.env[name];
        return value ? [[name, value] as const] : [];
      }),
    ),
    OTEL_METRICS_EXPORTER: METRICS_EXPORTER,
    // Node 22's AsyncLocalStorage without async_hooks: `VANCE_OTEL_CONTEXT=auto` then takes it as
    // the trace context manager, at ~0.3 µs per 50 awaits instead of ~8 µs (bench/context-hooks).
    NODE_OPTIONS: "--experimental-async-context-frame",
  },
});
