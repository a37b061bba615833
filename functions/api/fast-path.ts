import type { Logger } from "@vance/core";
import { problemResponse } from "./problem";
import { RequestTrace, webHeaders, withRequestId } from "./request-log";

/**
 * Fast routes: a few hot requests answered before Hono's middleware chain — the same answer, headers,
 * problems, span and log line as their Hono route, without its per-request work (the context, the
 * `Headers` objects, the chain of middleware and validators around one call of a service). The Hono
 * route stays the declaration (`/openapi.json`) and answers everything a fast route does not claim.
 *
 * A fast route is a function of the request: it claims it (a {@link FastClaim}) only when it knows
 * the Hono route would take it the same way — the method, a plain path, the path ids and the query
 * valid by the route's own schemas — and otherwise passes it on (`undefined`) having read and
 * counted nothing, so Hono answers whatever is unusual (a bad id, a repeated parameter, an encoded
 * path) exactly as before. What runs after the claim (the token, the service) throws as the route
 * would; the throw is answered as `app.onError` answers it. A parity test sends the same requests
 * to both (`fast-manifest.test.ts`).
 */

/** A request a fast route answers. */
export interface FastClaim {
  /** The route's template as Hono registers it: the log line's `route`, the span's name. */
  readonly route: string;
  /** The path's tenant, for the log line and the span. */
  readonly tenant?: string | undefined;
  /**
   * Headers every answer of the claim carries, its problems too: what the route's own middleware
   * sets after its handler (the MCP endpoints' CORS headers), set over the others.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** The answer; a throw is answered as a problem, as Hono's `onError` answers it. */
  answer(): Promise<FastAnswer>;
}

/** A fast route's answer: what its Hono handler sends, `content-length` the body's unless `sized` is false. */
export interface FastAnswer {
  readonly status: number;
  /** The body's media type; none for an answer without a body (`body: null`). */
  readonly contentType: string;
  readonly body: Uint8Array<ArrayBuffer> | null;
  /**
   * Whether the answer states its length (default true), as `c.body` does; a `Response` a Hono
   * handler builds itself (the MCP SDK's) states none, and the Node server counts it as it writes.
   */
  readonly sized?: boolean;
  /** The handler's own headers besides its content type (the SDK's `cache-control` of a stream). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A claim of `route` answered by `answer`. The answer is passed in, not written as a method of an
 * object literal: the bundles' `keepNames` names such a function with `Object.defineProperty` on
 * every request (~0.3 µs measured under tsx), an argument it leaves as it is.
 */
export function claimOf(
  route: string,
  tenant: string | undefined,
  answer: () => Promise<FastAnswer>,
  headers?: Readonly<Record<string, string>>,
): FastClaim {
  return headers === undefined ? { route, tenant, answer } : { route, tenant, headers, answer };
}

/** Claims a request it answers exactly as its Hono route would, or passes it on (`undefined`). */
export type FastRoute = (request: Request, env: unknown) => FastClaim | undefined;

/**
 * An answer's headers: what `secureHeaders()` (app.ts) adds to every answer, the request id, and
 * the content type and length when the answer has them (the parity test compares every header with
 * the Hono route's). One literal, which V8 builds at once, then at most two properties added: a
 * spread of a constant of the secure headers took 18 µs a request, more than the rest of the fast
 * route around the service, and a `delete` turns the object into a slow dictionary for every
 * later use.
 */
function answerHeaders(
  contentType: string | undefined,
  contentLength: string | undefined,
  requestId: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "origin-agent-cluster": "?1",
    "referrer-policy": "no-referrer",
    "strict-transport-security": "max-age=15552000; includeSubDomains",
    "x-content-type-options": "nosniff",
    "x-dns-prefetch-control": "off",
    "x-download-options": "noopen",
    "x-frame-options": "SAMEORIGIN",
    "x-permitted-cross-domain-policies": "none",
    "x-xss-protection": "0",
    "x-request-id": requestId,
  };
  if (contentType) headers["content-type"] = contentType;
  if (contentLength !== undefined) headers["content-length"] = contentLength;
  return headers;
}

type Fetch = (request: Request, env?: unknown, executionCtx?: never) => Response | Promise<Response>;

/**
 * Puts `routes` in front of `app.fetch` — the one entry of the Node server, Lambda (`handle(app)`)
 * and `app.request` alike. The first route that claims a request answers it.
 */
export function serveFastRoutes(app: { fetch: Fetch }, routes: readonly FastRoute[], logger: Logger): void {
  const hono = app.fetch;
  app.fetch = (request, env, executionCtx) => {
    for (const route of routes) {
      const claim = route(request, env);
      if (claim) return answer(claim, request, logger);
    }
    return hono(request, env, executionCtx);
  };
}

/** The claim's answer with what `requestTelemetry` and `secureHeaders` add, or its problem. */
async function answer(claim: FastClaim, request: Request, logger: Logger): Promise<Response> {
  const trace = new RequestTrace(logger, request.method, webHeaders(request.headers));
  let response: Response;
  let bytes: number;
  try {
    const answered = await trace.within(() => claim.answer());
    bytes = answered.body?.byteLength ?? 0;
    const headers = answerHeaders(
      answered.body === null ? undefined : answered.contentType,
      answered.sized === false ? undefined : String(bytes),
      trace.requestId,
    );
    Object.assign(headers, answered.headers, claim.headers);
    response = new Response(answered.body, { status: answered.status, headers });
  } catch (error) {
    ({ response, bytes } = await problem(error, trace, logger, claim.headers));
  }
  trace.answered(claim.route, claim.tenant, response.status);
  trace.done(claim.route, claim.tenant, response.status, bytes);
  return response;
}

/**
 * The problem Hono answers for `error` (`app.onError`, then `requestTelemetry` adds the request id):
 * its status, content type and challenge headers; no `content-length`, which Hono's answer lacks
 * (the Node server adds it as it writes either).
 */
async function problem(
  error: unknown,
  trace: RequestTrace,
  logger: Logger,
  claimed: Readonly<Record<string, string>> | undefined,
): Promise<{ response: Response; bytes: number }> {
  const answered = await withRequestId(
    trace.within(() => problemResponse(error, (fields) => logger.warn("http.error", fields))),
    trace.requestId,
  );
  const headers = answerHeaders(
    answered.headers.get("content-type") ?? undefined,
    undefined,
    trace.requestId,
  );
  for (const [name, value] of answered.headers) headers[name] ??= value;
  Object.assign(headers, claimed);
  const body = await answered.text();
  return {
    response: new Response(body, { status: answered.status, headers }),
    bytes: new TextEncoder().encode(body).byteLength,
  };
}
