/**
 * Traces through the OpenTelemetry API only: without an SDK registered (the composition root
 * registers one when an exporter is configured) every span here is a no-op. Attributes carry
 * who called what and how it ended — never params, results or secrets.
 */
import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";

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

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === "string") return code;
    if (typeof name === "string") return name;
  }
  return "error";
}
