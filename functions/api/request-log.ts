import { ServerResponse } from "node:http";
import {
  type Context,
  context,
  isSpanContextValid,
  propagation,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { type Logger, serverSpanUnder, TraceAttributes } from "@vance/core";
import type { Context as HonoContext } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";

/** An incoming `x-request-id` is kept when it is this plain (a load balancer's or an engine's id). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Hono variables this middleware sets. */
export type RequestEnv = { Variables: { requestId: string } };

/** A request's headers as its telemetry reads them: by lower-case name, and their names. */
export interface HeaderReader {
  get(name: string): string | undefined;
  keys(): string[];
}

/**
 * The headers of a Web `Request`, read as {@link HeaderReader}: one object, its methods shared
 * (two closures a request were two more functions whose names the bundles' `keepNames` defines).
 */
export function webHeaders(headers: Headers): HeaderReader {
  return new WebHeaderReader(headers);
}

class WebHeaderReader implements HeaderReader {
  constructor(private readonly headers: Headers) {}

  get(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }

  keys(): string[] {
    return [...this.headers.keys()];
  }
}

/**
 * One request's id, span and log line (see {@link requestTelemetry}): begun when the request
 * arrives, named after the route that answered, ended once its body has been sent. Hono's
 * middleware and the fast routes (`fast-path.ts`) both keep their requests' telemetry with it,
 * so the two cannot drift apart.
 */
export class RequestTrace {
  /** The caller's `x-request-id` when it is sane, else a new UUID. */
  readonly requestId: string;
  readonly #logger: Logger;
  readonly #method: string;
  readonly #started = performance.now();
  /** The request's span; null when untraced (no SDK, no incoming trace): then nothing is made. */
  readonly #span: Span | null;
  readonly #active: Context;

  constructor(logger: Logger, method: string, headers: HeaderReader) {
    this.#logger = logger;
    this.#method = method;
    const incoming = headers.get("x-request-id");
    this.requestId =
      incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    const parent = propagation.extract(context.active(), headers, HEADER_GETTER);
    const span = serverSpanUnder(parent, method);
    this.#span = span;
    // A span that records nothing and names no trace (a provider's sampler said no) changes nothing
    // anything reads when active: no context is made for it either.
    this.#active =
      span !== null && (span.isRecording() || isSpanContextValid(span.spanContext()))
        ? trace.setSpan(parent, span)
        : parent;
  }

  /** Runs `fn` (the route) with the request's span active. */
  within<T>(fn: () => T): T {
    return this.#span === null ? fn() : context.with(this.#active, fn);
  }

  /** Names the span after the route template that answered, with its status and tenant. */
  answered(route: string, tenant: string | undefined, status: number): void {
    const span = this.#span;
    if (span === null) return;
    span.updateName(`${this.#method} ${route}`);
    span.setAttributes({
      "http.route": route,
      "http.response.status_code": status,
      ...(tenant !== undefined ? { [TraceAttributes.tenant]: tenant } : {}),
    });
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }

  /** Ends the span and writes the `http.request` line: the answer's body (`bytes`) has been sent. */
  done(route: string, tenant: string | undefined, status: number, bytes: number | null): void {
    if (this.#span === null) this.#line(route, tenant, status, bytes);
    else context.with(this.#active, this.#ended, this, route, tenant, status, bytes);
  }

  #ended(route: string, tenant: string | undefined, status: number, bytes: number | null): void {
    this.#span!.end();
    this.#line(route, tenant, status, bytes);
  }

  #line(route: string, tenant: string | undefined, status: number, bytes: number | null): void {
    this.#logger.info("http.request", {
      requestId: this.requestId,
      method: this.#method,
      route,
      ...(tenant !== undefined ? { tenant } : {}),
      status,
      durationMs: Math.round((performance.now() - this.#started) * 10) / 10,
      bytes,
    });
  }
}

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
    const request = new RequestTrace(logger, c.req.method, webHeaders(c.req.raw.headers));
    const { requestId } = request;
    c.set("requestId", requestId);
    await request.within(next);

    const route = routeOf(c);
    const tenant = paramOf(route, c.req.path, ":tenant");
    request.answered(route, tenant, c.res.status);
    if (isProblem(c.res)) c.res = await withRequestId(c.res, requestId);
    setHeader(c, "x-request-id", requestId);

    const done = (bytes: number | null) => request.done(route, tenant, c.res.status, bytes);
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
function setHeader(c: HonoContext<RequestEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/** The Node response behind the request (`@hono/node-server` bindings), when there is one. */
function nodeResponseOf(c: HonoContext<RequestEnv>): ServerResponse | undefined {
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
  get: (headers: HeaderReader, key: string) => headers.get(key),
  keys: (headers: HeaderReader) => headers.keys(),
};

/** The template of the route that answered (`/v1/tenants/:tenant/…`), or `unmatched`. */
function routeOf(c: HonoContext<RequestEnv>): string {
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
export async function withRequestId(response: Response, requestId: string): Promise<Response> {
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
