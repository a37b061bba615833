/**
 * The OpenTelemetry SDK, wired only here (the composition root's side): code elsewhere speaks
 * to `@opentelemetry/api` alone, whose calls are no-ops until this registers a provider.
 *
 * Off unless configured, with the standard variables:
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
 *   `…_METRICS_ENDPOINT`): OTLP over HTTP (JSON) to that collector; `OTEL_EXPORTER_OTLP_HEADERS`
 *   for its API key (Honeycomb's `x-honeycomb-team=…`), read by the exporter itself.
 * - `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`: `otlp` (the default once an endpoint is
 *   set), `none` to keep one of them off, `noop` to record spans and drop them (the bench's
 *   baseline of the instrumentation's own cost); metrics `emf`: CloudWatch embedded-metric
 *   lines on stdout (for Lambda, see `emf.ts`).
 * - `OTEL_SERVICE_NAME` (default `vance-server-tools`); `OTEL_METRIC_EXPORT_INTERVAL` (ms).
 * - `VANCE_OTEL_CONTEXT`: how the active span follows the request, `auto` (the default: see
 *   {@link newContextManager}), `promise-hooks`, or `async-local-storage` (also into timers and
 *   emitters, at the cost of async_hooks on Node 20).
 */
import { type ContextManager, context, metrics, propagation, trace } from "@opentelemetry/api";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import * as v from "valibot";

const ExporterSchema = v.optional(v.picklist(["otlp", "none", "noop", "emf"]));

const TelemetryEnvSchema = v.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  OTEL_TRACES_EXPORTER: ExporterSchema,
  OTEL_METRICS_EXPORTER: ExporterSchema,
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.minLength(1)), "vance-server-tools"),
  VANCE_OTEL_CONTEXT: v.optional(v.picklist(["auto", "promise-hooks", "async-local-storage"]), "auto"),
  OTEL_METRIC_EXPORT_INTERVAL: v.optional(
    v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(1_000)),
    "60000",
  ),
});

/** The SDK's state in this process: what it exports, and how to flush and stop it. */
export interface Telemetry {
  readonly traces: "otlp" | "noop" | "off";
  /** The context manager tracing registered (none when traces are off). */
  readonly context: ContextManagerKind | "none";
  readonly metrics: "otlp" | "emf" | "off";
  /** Sends what is buffered (a Lambda invocation ends with this: a frozen sandbox sends nothing). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Settings that fail fast, naming the variable. */
export function parseTelemetryEnv(env: Readonly<Record<string, string | undefined>>) {
  const picked = Object.fromEntries(
    Object.keys(TelemetryEnvSchema.entries).flatMap((key) =>
      env[key] === undefined ? [] : [[key, env[key]]],
    ),
  );
  const result = v.safeParse(TelemetryEnvSchema, picked);
  if (!result.success) {
    const issue = result.issues[0];
    const key = issue.path?.[0]?.key;
    throw new Error(`telemetry setting ${String(key ?? "")} is invalid: ${issue.message}`);
  }
  return result.output;
}

/**
 * Registers the tracer and meter providers the environment asks for (nothing when it asks for
 * none) with the W3C trace-context propagator and a context manager ({@link newContextManager}). The SDK
 * is imported only then: a function without telemetry does not load it at a cold start.
 */
export async function startTelemetry(
  env: Readonly<Record<string, string | undefined>>,
  version: string,
): Promise<Telemetry> {
  const settings = parseTelemetryEnv(env);
  const tracesEndpoint = settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  const metricsEndpoint =
    settings.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? settings.OTEL_EXPORTER_OTLP_ENDPOINT;
  const traces =
    settings.OTEL_TRACES_EXPORTER === "noop"
      ? "noop"
      : settings.OTEL_TRACES_EXPORTER !== "none" && tracesEndpoint !== undefined
        ? "otlp"
        : "off";
  const metricsMode =
    settings.OTEL_METRICS_EXPORTER === "emf"
      ? "emf"
      : settings.OTEL_METRICS_EXPORTER !== "none" && metricsEndpoint !== undefined
        ? "otlp"
        : "off";
  if (traces === "off" && metricsMode === "off") {
    return { traces, context: "none", metrics: metricsMode, flush: async () => {}, shutdown: async () => {} };
  }
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const resource = resourceFromAttributes({
    "service.name": settings.OTEL_SERVICE_NAME,
    "service.version": version,
  });

  let contextKind: ContextManagerKind | undefined;
  let tracerProvider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;
  if (traces !== "off") {
    const [{ W3CTraceContextPropagator }, sdk, contextManager] = await Promise.all([
      import("@opentelemetry/core"),
      import("@opentelemetry/sdk-trace-base"),
      newContextManager(settings.VANCE_OTEL_CONTEXT),
    ]);
    const exporter: SpanExporter =
      traces === "noop"
        ? new DroppingExporter()
        : new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter({
            url: tracesUrl(tracesEndpoint!, env),
          });
    const provider = new sdk.BasicTracerProvider({
      resource,
      spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
    });
    tracerProvider = provider;
    contextKind = contextManager.kind;
    // Registration is global by the API's design; a second start in one process (tests) replaces the first.
    trace.disable();
    context.disable();
    propagation.disable();
    context.setGlobalContextManager(contextManager.manager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
  }
  let meterProvider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;
  if (metricsMode !== "off") {
    const { MeterProvider, PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
    const provider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter:
            metricsMode === "emf"
              ? new (await import("./emf")).EmfMetricExporter()
              : new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter({
                  url: metricsUrl(metricsEndpoint!, env),
                }),
          exportIntervalMillis: settings.OTEL_METRIC_EXPORT_INTERVAL,
        }),
      ],
    });
    meterProvider = provider;
    metrics.disable();
    metrics.setGlobalMeterProvider(provider);
  }
  return {
    traces,
    context: contextKind ?? "none",
    metrics: metricsMode,
    async flush() {
      await Promise.all([tracerProvider?.forceFlush(), meterProvider?.forceFlush()]);
    },
    async shutdown() {
      await Promise.all([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
      if (tracerProvider) {
        trace.disable();
        context.disable();
        propagation.disable();
      }
      if (meterProvider) metrics.disable();
    },
  };
}

type ContextManagerKind = "promise-hooks" | "async-local-storage";

/**
 * `auto`: AsyncLocalStorage where it runs without async_hooks (Node 24; 22 with
 * `--experimental-async-context-frame`), else the promise-hook manager: on Node 20
 * AsyncLocalStorage's hooks cost every promise of the process far more (see `promise-context.ts`).
 */
async function newContextManager(
  wanted: "auto" | ContextManagerKind,
): Promise<{ kind: ContextManagerKind; manager: ContextManager }> {
  const { asyncContextFrameOn, PromiseContextManager } = await import("./promise-context");
  if (wanted === "async-local-storage" || (wanted === "auto" && asyncContextFrameOn())) {
    const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
    return { kind: "async-local-storage", manager: new AsyncLocalStorageContextManager() };
  }
  return { kind: "promise-hooks", manager: new PromiseContextManager() };
}

/** The base endpoint gets the signal's path; a per-signal endpoint is used as given (the spec's rule). */
function tracesUrl(endpoint: string, env: Readonly<Record<string, string | undefined>>): string {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${endpoint.replace(/\/$/, "")}/v1/traces`;
}

function metricsUrl(endpoint: string, env: Readonly<Record<string, string | undefined>>): string {
  return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? `${endpoint.replace(/\/$/, "")}/v1/metrics`;
}

/** Records nothing: spans are made, batched and dropped — the instrumentation's cost alone. */
class DroppingExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}
