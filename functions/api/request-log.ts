import { ServerResponse } from "node:http";
import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { type Logger, TRACER_NAME, TraceAttributes } from "@vance/core";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";

/** An incoming `x-request-id` is kept when it is this plain (a load balancer's or an engine's id). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Hono variables this middleware sets. */
export type RequestEnv = { Variables: { requestId: string } };

/**
 * The request's id, span and log line, one place for every route:
 *
 * - `x-request-id`: the caller's when it is sane, else a new UUID; answered in the header and
 *   inside every problem+json body (`requestId`).
 * - a SERVER span per request, child of an incoming W3C `traceparent`; its attributes are the
 *   route template, status and tenant — never the query or a body.
 * - one `http.request` line when the answer's body has been sent: request id, tenant, route
 *   template, status, duration (ms), bytes of the body, trace id.
 */
export function requestTelemetry(logger: Logger) {
  return createMiddleware<RequestEnv>(async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header("x-request-id");
    const requestId =
      incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", requestId);
    const parent = propagation.extract(context.active(), c.req.raw.headers, HEADER_GETTER);
    const span = trace
      .getTracer(TRACER_NAME)
      .startSpan(
        `HTTP ${c.req.method}`,
        { kind: SpanKind.SERVER, attributes: { "http.request.method": c.req.method } },
        parent,
      );
    const active = trace.setSpan(parent, span);
    await context.with(active, next);

    const route = routeOf(c);
    const tenant = paramOf(route, c.req.path, ":tenant");
    span.updateName(`${c.req.method} ${route}`);
    span.setAttributes({
      "http.route": route,
      "http.response.status_code": c.res.status,
      ...(tenant !== undefined ? { [TraceAttributes.tenant]: tenant } : {}),
    });
    if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (isProblem(c.res)) c.res = await withRequestId(c.res, requestId);
    setHeader(c, "x-request-id", requestId);

    const done = (bytes: number | null) =>
      context.with(active, () => {
        span.end();
        logger.info("http.request", {
          requestId,
          method: c.req.method,
          route,
          ...(tenant !== undefined ? { tenant } : {}),
          status: c.res.status,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          bytes,
        });
      });
    const length = c.res.headers.get("content-length");
    if (length !== null) {
      done(Number(length));
      return;
    }
    // On Node the server writes the answer and knows its size: read it there when it is sent.
    // Re-streaming the body to count it would cost more than the request (@hono/node-server
    // writes a string body in one call, a stream chunk by chunk: 0.8 → 2.1 ms for an MCP call).
    const outgoing = nodeResponseOf(c);
    if (outgoing) {
      const written = countWritten(outgoing);
      outgoing.once("finish", () => done(written()));
      outgoing.once("close", () => {
        if (!outgoing.writableFinished) done(written());
      });
      return;
    }
    if (c.res.body === null) {
      done(0);
      return;
    }
    c.res = new Response(c.res.body.pipeThrough(countBytes(done)), c.res);
  });
}

/**
 * Sets a header of the answer in place. `c.header` on a finished answer copies it into a new
 * `Response` (reading its body as a stream), which on Node also turns @hono/node-server's
 * direct write of a string or byte body into a streamed one: most of a warm manifest's cost.
 * An answer whose headers are immutable (a fetched `Response`) is copied as `c.header` does.
 */
function setHeader(c: Context<RequestEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/** The Node response behind the request (`@hono/node-server` bindings), when there is one. */
function nodeResponseOf(c: Context<RequestEnv>): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/** Counts the body bytes written to `outgoing` from now on (its `write` and `end` calls). */
function countWritten(outgoing: ServerResponse): () => number {
  let bytes = 0;
  const add = (chunk: unknown) => {
    if (typeof chunk === "string") bytes += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) bytes += chunk.byteLength;
  };
  const write = outgoing.write.bind(outgoing) as (...args: unknown[]) => boolean;
  const end = outgoing.end.bind(outgoing) as (...args: unknown[]) => ServerResponse;
  outgoing.write = ((...args: unknown[]) => {
    add(args[0]);
    return write(...args);
  }) as ServerResponse["write"];
  outgoing.end = ((...args: unknown[]) => {
    add(args[0]);
    return end(...args);
  }) as ServerResponse["end"];
  return () => bytes;
}

const HEADER_GETTER = {
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
  keys: (headers: Headers) => [...headers.keys()],
};

/** The template of the route that answered (`/v1/tenants/:tenant/…`), or `unmatched`. */
function routeOf(c: Context<RequestEnv>): string {
  const routes = matchedRoutes(c).filter((route) => route.method !== "ALL" && !route.path.endsWith("*"));
  return routes.at(-1)?.path ?? "unmatched";
}

/** The path segment standing where `template` has `name`. */
function paramOf(template: string, path: string, name: string): string | undefined {
  const at = template.split("/").indexOf(name);
  if (at < 0) return undefined;
  const segment = path.split("/")[at];
  return segment === undefined ? undefined : decodeURIComponent(segment);
}

function isProblem(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").startsWith("application/problem+json");
}

/** The same problem with `requestId` inside, so a caller quoting the body quotes the id. */
async function withRequestId(response: Response, requestId: string): Promise<Response> {
  const body = (await response.json()) as Record<string, unknown>;
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify({ ...body, requestId }), { status: response.status, headers });
}

/** Passes a body through unchanged and reports its size when it has been sent (or was abandoned). */
function countBytes(done: (bytes: number) => void): TransformStream<Uint8Array, Uint8Array> {
  let bytes = 0;
  let reported = false;
  const report = () => {
    if (reported) return;
    reported = true;
    done(bytes);
  };
  return new TransformStream({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
    flush: report,
    cancel: report,
  } as Transformer<Uint8Array, Uint8Array> & { cancel: () => void });
}
