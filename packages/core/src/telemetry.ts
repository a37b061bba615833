/**
 * Traces through the OpenTelemetry API only: without an SDK registered (the composition root
 * registers one when an exporter is configured) every span here is a no-op. Attributes carry
 * who called what and how it ended — never params, results or secrets.
 */
import {
  type Attributes,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { HttpFetch } from "./ports/tool-runtime";

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
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes, kind }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      const code = errorCode(error);
      span.setAttribute(TraceAttributes.outcome, code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      throw error;
    } finally {
      span.end();
    }
  });
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
export function tracedFetch(fetch: HttpFetch, upstream: string): HttpFetch {
  return (input, init) => {
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
        const headers = new Headers(init.headers);
        propagation.inject(context.active(), headers, HEADER_SETTER);
        const response = await fetch(input, { ...init, headers });
        span.setAttribute("http.response.status_code", response.status);
        endedWith(span, response.status < 400 ? "ok" : `http_${response.status}`);
        return response;
      },
      SpanKind.CLIENT,
    );
  };
}

const HEADER_SETTER = { set: (headers: Headers, key: string, value: string) => headers.set(key, value) };

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
