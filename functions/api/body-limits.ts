import { MAX_OPENAPI_SPEC_BYTES, SPEC_DOCUMENTS_DIR, VanceError } from "@vance/core";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";

/** Request bodies of every route not in {@link ROUTE_BODY_LIMITS} (documents, tools, invokes, spawns). */
export const DEFAULT_BODY_BYTES = 256 * 1024;

/** A route's own limit, and what its 413 tells the sender to do instead. */
interface BodyLimit {
  readonly maxBytes: number;
  readonly hint?: string;
}

/**
 * The routes whose bodies may be larger than {@link DEFAULT_BODY_BYTES}, by method and route as
 * registered (never by the request's path, which a tenant chooses: a document may be named
 * `…/diagnostics/empty-response`). A diagnosis report carries the whole conversation.
 */
export const ROUTE_BODY_LIMITS: Readonly<Record<string, BodyLimit>> = {
  "POST /v1/tenants/:tenant/projects/:project/diagnostics/empty-response": {
    maxBytes: 4 * 1024 * 1024,
    hint: "send the conversation's text parts only",
  },
};

/** The route that writes documents: its `specs/` folder has a limit of its own. */
const DOCUMENT_PUT = "PUT /v1/tenants/:tenant/projects/:project/documents/*";

/**
 * Spec documents (`T/documents/specs/…`, OpenAPI documents that packs name): GitHub's whole API is
 * 13 MB. The text is only stored on the serving thread; it is parsed on the task worker, once
 * per ETag, under the same cap (`MAX_OPENAPI_SPEC_BYTES`).
 */
export const SPEC_DOCUMENT_BODY: BodyLimit = {
  maxBytes: MAX_OPENAPI_SPEC_BYTES,
  hint: "a spec larger than this cannot be a pack's source; select fewer operations in a smaller document",
};

/**
 * The limit of the route this request reached: the last route Hono matched is its handler's. A
 * document write into `specs/` takes the spec limit: the folder is the tenant's choice, and what
 * it buys is a larger bounded body, read the same way and parsed only off the serving thread.
 */
export function bodyLimitOf(c: Context): BodyLimit {
  const route = `${c.req.method} ${routePath(c, -1)}`;
  if (route === DOCUMENT_PUT) {
    const marker = "/documents/";
    const at = c.req.path.indexOf(marker);
    if (c.req.path.startsWith(SPEC_DOCUMENTS_DIR, at + marker.length)) return SPEC_DOCUMENT_BODY;
  }
  return ROUTE_BODY_LIMITS[route] ?? { maxBytes: DEFAULT_BODY_BYTES };
}

/**
 * Refuses a body over its route's limit with 413 before it is read whole. Judged from the headers
 * where they suffice: touching the body stream (as `bodyLimit` does first) makes
 * @hono/node-server build a full Request for every request, which costs more than a warm
 * manifest's own work; Node's parser reads exactly `content-length` bytes. Chunked bodies are
 * counted as they stream in.
 */
export function limitBodies(): MiddlewareHandler {
  const counters = new Map<number, MiddlewareHandler>();
  return (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return next();
    const limit = bodyLimitOf(c);
    const tooLarge = () => {
      throw new VanceError(
        "payload_too_large",
        `request bodies of this route are limited to ${limit.maxBytes} bytes${limit.hint ? `; ${limit.hint}` : ""}`,
      );
    };
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number(length) > limit.maxBytes ? tooLarge() : next();
    }
    let counter = counters.get(limit.maxBytes);
    if (!counter) {
      counter = bodyLimit({ maxSize: limit.maxBytes, onError: () => tooLarge() });
      counters.set(limit.maxBytes, counter);
    }
    return counter(c, next);
  };
}
