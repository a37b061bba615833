import type { IncomingHttpHeaders } from "node:http";
import type { Http2Bindings, HttpBindings } from "@hono/node-server";

type FetchHandler = (request: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>;

/**
 * Wraps the app's `fetch` for `@hono/node-server`: an answer sent before the request body was
 * read to its end — 413 for an announced size over the limit, 415, 401 and 403 before the body,
 * any route that ignores its body — carries `Connection: close`. Without it a keep-alive client
 * reuses the socket while the server drains or drops the unread rest, and its next request on
 * that socket fails (`UND_ERR_SOCKET` in Node's fetch).
 */
export function closeWhenBodyUnread(fetch: FetchHandler): FetchHandler {
  return async (request, env) => {
    const response = await fetch(request, env);
    if (!hasBody(env.incoming) || env.incoming.readableEnded) return response;
    const headers = new Headers(response.headers);
    headers.set("connection", "close");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

/** Whether the request announced a body (RFC 9112 §6.3: a length, or chunked transfer coding). */
function hasBody(incoming: { readonly headers: IncomingHttpHeaders }): boolean {
  const length = incoming.headers["content-length"];
  return (length !== undefined && length !== "0") || incoming.headers["transfer-encoding"] !== undefined;
}
