/**
 * Traces through the OpenTelemetry API only: without an SDK registered (the composition root
 * registers one when an exporter is configured) every span here is a no-op. Attributes carry
 * who called what and how it ended — never params, results or secrets.
 */
import {
  type Attributes,
  type Context,
  type Counter,
  context,
  type Histogram,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  type Meter,
  metrics,
  ProxyTracerProvider,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { HttpExchange, HttpFetch, ScriptRunner } from "../ports/tool-runtime";

/** The instrumentation scope of every span this service starts. */
export const TRACER_NAME = "vance-server-tools";

/** Attribute names, one place: a collector's queries depend on them. */
export const TraceAttributes = {
  tenant: "vance.tenant",
  project: "vance.project",
  process: "vance.process",
  tool: "vance.tool",
  type: "vance.tool.type",
  outcome: "vance.outcome",
  nested: "vance.nested",
  upstream: "vance.upstream",
} as const;

/**
 * Runs `work` inside a child span of the active one, named `name`; the span ends when it
 * settles. A throw ends it with status ERROR and the error's `code` (or name) as outcome —
 * the message stays out, it may quote a param.
 *
 * One `then` and no async wrapper: with a context manager on, every promise a span adds is
 * paid for in hooks (`startActiveSpan` with an async callback added four more per span).
 * Untraced ({@link untracedHere}: the span would record nothing and carry no trace), `work` runs
 * at once with a shared no-op span: no span, context or promise is made for nothing to read.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (untracedHere()) {
    try {
      return work(UNTRACED_SPAN);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const parent = context.active();
  const span = tracer().startSpan(name, { attributes, kind }, parent);
  let running: Promise<T>;
  try {
    running = context.with(trace.setSpan(parent, span), work, undefined, span);
  } catch (error) {
    failed(span, error);
    return Promise.reject(error);
  }
  return running.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(span, error);
      throw error;
    },
  );
}

/**
 * `inSpan` for synchronous work: the span ends when `work` returns or throws, and no promise is
 * made (a call's params check against a schema compiled already).
 */
export function inSyncSpan<T>(name: string, work: (span: Span) => T): T {
  if (untracedHere()) return work(UNTRACED_SPAN);
  const parent = context.active();
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL }, parent);
  let value: T;
  try {
    value = context.with(trace.setSpan(parent, span), work, undefined, span);
  } catch (error) {
    failed(span, error);
    throw error;
  }
  span.end();
  return value;
}

function failed(span: Span, error: unknown): void {
  const code = errorCode(error);
  span.setAttribute(TraceAttributes.outcome, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.end();
}

/**
 * The service's tracer, asked of the global provider each time (a test or bench may register
 * another); the provider caches it by name.
 */
function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** Marks how a span's work ended; anything but `ok` is an error status. */
export function endedWith(span: Span, outcome: string): void {
  span.setAttribute(TraceAttributes.outcome, outcome);
  if (outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
}

/**
 * `fn` bound to the context active now: a callback that runs later from another event (a
 * sandbox worker's message asking for a sibling call) still starts its spans under this one.
 */
export function bindActiveContext<F extends (...args: never[]) => unknown>(fn: F): F {
  return context.bind(context.active(), fn);
}

/**
 * `fetch` with a CLIENT span per upstream request (`upstream` names the kind: `http` for REST,
 * OpenAPI, spec and model calls, `mcp` for MCP servers) and the W3C `traceparent` injected, so
 * the upstream's own spans join the trace. The span names the method and host only: paths and
 * queries may carry params, headers carry credentials.
 */
export function tracedFetch(fetch: HttpFetch, upstream: string, measured?: ServiceMetrics): HttpFetch {
  return (input, init) => {
    const started = performance.now();
    const method = (init.method ?? "GET").toUpperCase();
    const attributes = {
      [TraceAttributes.upstream]: upstream,
      "http.request.method": method,
      "server.address": hostOf(input),
    };
    return inSpan(
      `${upstream} ${method}`,
      attributes,
      async (span) => {
        // Without a propagator registered there is nothing to inject: the request goes as it came.
        let request = init;
        if (propagation.fields().length > 0) {
          const headers = new Headers(init.headers);
          propagation.inject(context.active(), headers, HEADER_SETTER);
          request = { ...init, headers };
        }
        const response = await fetch(input, request);
        span.setAttribute("http.response.status_code", response.status);
        const outcome = response.status < 400 ? "ok" : `http_${response.status}`;
        endedWith(span, outcome);
        measured?.upstreamDuration.record(performance.now() - started, {
          [TraceAttributes.upstream]: upstream,
          "server.address": attributes["server.address"],
          [TraceAttributes.outcome]: outcome,
        });
        return response;
      },
      SpanKind.CLIENT,
    );
  };
}

/**
 * {@link tracedFetch} for an {@link HttpExchange}: the same CLIENT span (ended when the answer's
 * head has arrived), `traceparent` and upstream duration. The host is read once per URL.
 */
export function tracedExchange(
  exchange: HttpExchange,
  upstream: string,
  measured?: ServiceMetrics,
): HttpExchange {
  let lastUrl = "";
  let lastHost = "";
  return (url, request) => {
    const started = performance.now();
    if (url !== lastUrl) {
      lastHost = hostOf(url);
      lastUrl = url;
    }
    const host = lastHost;
    const method = request.method.toUpperCase();
    if (untracedHere()) {
      // Nothing would record the span or carry its trace: no span, no context, no traceparent.
      return exchange(url, request).then((answer) => {
        measured?.upstreamDuration.record(performance.now() - started, {
          [TraceAttributes.upstream]: upstream,
          "server.address": host,
          [TraceAttributes.outcome]: answer.status < 400 ? "ok" : `http_${answer.status}`,
        });
        return answer;
      });
    }
    return inSpan(
      `${upstream} ${method}`,
      { [TraceAttributes.upstream]: upstream, "http.request.method": method, "server.address": host },
      async (span) => {
        let sent = request;
        if (propagation.fields().length > 0) {
          const headers: Record<string, string> = { ...request.headers };
          propagation.inject(context.active(), headers, RECORD_SETTER);
          sent = { ...request, headers };
        }
        const answer = await exchange(url, sent);
        span.setAttribute("http.response.status_code", answer.status);
        const outcome = answer.status < 400 ? "ok" : `http_${answer.status}`;
        endedWith(span, outcome);
        measured?.upstreamDuration.record(performance.now() - started, {
          [TraceAttributes.upstream]: upstream,
          "server.address": host,
          [TraceAttributes.outcome]: outcome,
        });
        return answer;
      },
      SpanKind.CLIENT,
    );
  };
}

/**
 * A script runner whose sibling calls start their spans under the span active when the run was
 * asked for (`script.run` for a scripted tool): a sandbox asks for them from worker messages,
 * whose callbacks would otherwise run in whatever context the worker was started in.
 */
export function tracedScripts(runner: ScriptRunner): ScriptRunner {
  return {
    run: (request) =>
      runner.run(request.callTool ? { ...request, callTool: bindActiveContext(request.callTool) } : request),
  };
}

/**
 * Whether the work running now is untraced: inside a span that neither records nor carries a
 * trace (the dispatcher's call span of an untraced request), or in no span with no SDK
 * registered — where a span made here would be a no-op and its `traceparent` empty. Outside any
 * span with an SDK registered, a root span may record: false.
 */
function untracedHere(): boolean {
  const active = trace.getActiveSpan();
  if (active) return !active.isRecording() && !isSpanContextValid(active.spanContext());
  // No span active (no context manager either, without an SDK): untraced when no SDK is registered.
  return noSdk();
}

/**
 * A request's SERVER span (`HTTP {method}`) under `parent`, the context its incoming headers were
 * extracted into; or null when it would be untraced: no SDK is registered and `parent` names no
 * trace — the span would record nothing and carry no trace, so nothing is made, not even its name
 * or attributes (the API's span and its checks cost ~25 µs a request on Node 20).
 */
export function serverSpanUnder(parent: Context, method: string): Span | null {
  if (noSdk() && trace.getSpanContext(parent) === undefined) return null;
  return tracer().startSpan(
    `HTTP ${method}`,
    { kind: SpanKind.SERVER, attributes: { "http.request.method": method } },
    parent,
  );
}

function noSdk(): boolean {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegate() === NO_SDK;
}

/** The tracer provider the API answers with while no SDK is registered (its no-op one). */
const NO_SDK = new ProxyTracerProvider().getDelegate();

/** What an untraced span is: records nothing, names no trace (the API's no-op span). */
const UNTRACED_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const HEADER_SETTER = { set: (headers: Headers, key: string, value: string) => headers.set(key, value) };
const RECORD_SETTER = {
  set: (headers: Record<string, string>, key: string, value: string) => {
    headers[key.toLowerCase()] = value;
  },
};

function hostOf(input: string): string {
  try {
    return new URL(input).host;
  } catch {
    return "invalid";
  }
}

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === "string") return code;
    if (typeof name === "string") return name;
  }
  return "error";
}

/**
 * The service's instruments, made once in the composition root (after the meter provider is
 * registered: the API hands out no-op instruments before). Attributes as in {@link TraceAttributes}.
 */
export class ServiceMetrics {
  /** Calls by tenant, project, tool and outcome (`ok`, a tool error name, or a refusal's code). */
  readonly toolCalls: Counter;
  /** Call durations (ms) by tool type and outcome. */
  readonly toolDuration: Histogram;
  /** Upstream request durations (ms) by upstream kind, host and outcome. */
  readonly upstreamDuration: Histogram;
  /** Manifests built, by tenant and whether the budget demoted tools. */
  readonly manifestBuilds: Counter;
  /** Tools demoted by the budget, summed over manifests. */
  readonly demotedTools: Counter;

  constructor(readonly meter: Meter = metrics.getMeter(TRACER_NAME)) {
    this.toolCalls = meter.createCounter("vance.tool.calls", { description: "Tool calls" });
    this.toolDuration = meter.createHistogram("vance.tool.duration", {
      description: "Tool call duration",
      unit: "ms",
    });
    this.upstreamDuration = meter.createHistogram("vance.upstream.duration", {
      description: "Upstream request duration, until the answer's headers",
      unit: "ms",
    });
    this.manifestBuilds = meter.createCounter("vance.manifest.builds", { description: "Manifests built" });
    this.demotedTools = meter.createCounter("vance.manifest.demoted_tools", {
      description: "Tools the budget demoted, over all manifests",
    });
  }

  /**
   * `vance.packs.sources`: packs by source state (`vance.pack.state`: current, stale, unavailable,
   * invalid), read when a metric reader collects.
   */
  observePackSources(counts: () => Readonly<Record<string, number>>): void {
    this.meter
      .createObservableGauge("vance.packs.sources", {
        description: "Packs by the state of their source, as this instance last saw them",
      })
      .addCallback((result) => {
        for (const [state, count] of Object.entries(counts()))
          result.observe(count, { "vance.pack.state": state });
      });
  }

  /** One finished call. */
  toolCall(
    attributes: { tenant: string; project: string; tool: string; type: string; outcome: string },
    ms: number,
  ) {
    this.toolCalls.add(1, {
      [TraceAttributes.tenant]: attributes.tenant,
      [TraceAttributes.project]: attributes.project,
      [TraceAttributes.tool]: attributes.tool,
      [TraceAttributes.outcome]: attributes.outcome,
    });
    this.toolDuration.record(ms, {
      [TraceAttributes.type]: attributes.type,
      [TraceAttributes.outcome]: attributes.outcome,
    });
  }

  /** One manifest served, with the number of tools its budget demoted. */
  manifestBuilt(tenant: string, demoted: number) {
    this.manifestBuilds.add(1, { [TraceAttributes.tenant]: tenant, "vance.demoted": demoted > 0 });
    if (demoted > 0) this.demotedTools.add(demoted, { [TraceAttributes.tenant]: tenant });
  }
}
