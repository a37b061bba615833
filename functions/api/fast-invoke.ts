import type { ServerToolService, ToolDispatcher } from "@vance/core";
import * as v from "valibot";
import { authenticate, type TokenVerifier } from "./auth";
import { DEFAULT_BODY_BYTES, ROUTE_BODY_LIMITS } from "./body-limits";
import { claimOf, type FastRoute } from "./fast-path";
import { parseJsonBody } from "./http";
import { CalledNameSchema, InvokeBodySchema, invokeAnswer } from "./routes/tools";
import { requireJsonMediaType, validJson } from "./validate";

/** The direct invoke's template, as Hono registers it (app.ts mounts `toolRoutes` under the project). */
export const INVOKE_ROUTE = "/v1/tenants/:tenant/projects/:project/tools/:name/invoke";

/**
 * A path the fast route takes: ids of word characters and `-` (never `.`, `%` or an empty segment,
 * which Hono's URL handling may read otherwise); their rules are the route's schemas'.
 */
const INVOKE_PATH = /^\/v1\/tenants\/([\w-]+)\/projects\/([\w-]+)\/tools\/([\w-]+)\/invoke$/;

/** The limit `limitBodies` (body-limits.ts) applies to this route. */
const MAX_BODY_BYTES = ROUTE_BODY_LIMITS[`POST ${INVOKE_ROUTE}`]?.maxBytes ?? DEFAULT_BODY_BYTES;

const ENCODER = new TextEncoder();

/**
 * `POST …/tools/{name}/invoke`, a tool called by its name over HTTP (issue 39: a `scripted` tool's
 * every call), answered before Hono's middleware (`fast-path.ts`) with what its Hono route runs:
 * `need("read")`, the JSON body read once and validated by the route's schema (`json`), and
 * `invokeAnswer`. Hono keeps bodies of no stated length (chunked: `limitBodies` counts them) and
 * over the limit (its 413), paths its schemas refuse, and a query (the route reads none, but its
 * log line and span are Hono's to name).
 */
export function fastInvoke(
  tools: Pick<ServerToolService, "snapshot">,
  dispatcher: Pick<ToolDispatcher, "invoke">,
  verifier: TokenVerifier,
): FastRoute {
  return (request, env) => {
    if (request.method !== "POST") return undefined;
    const url = request.url;
    // Where Hono's `getPath` finds the path: the first `/` after the scheme's `://`.
    const start = url.indexOf("/", url.indexOf(":") + 4);
    if (url.indexOf("?", start) >= 0) return undefined;
    const path = url.slice(start);
    const match = INVOKE_PATH.exec(path);
    if (!match) return undefined;
    const headers = request.headers;
    if (headers.has("transfer-encoding")) return undefined;
    const length = headers.get("content-length");
    if (length === null || !/^\d{1,9}$/.test(length) || Number(length) > MAX_BODY_BYTES) return undefined;
    const ids = v.safeParse(CalledNameSchema, { tenant: match[1], project: match[2], name: match[3] });
    if (!ids.success) return undefined;
    const { tenant, project } = ids.output;
    return claimOf(INVOKE_ROUTE, tenant, async () => {
      await authenticate(
        verifier,
        headers.get("authorization") ?? undefined,
        { env, path, tenant, project },
        "read",
        {},
      );
      requireJsonMediaType(headers.get("content-type"));
      const input = validJson(InvokeBodySchema, await parseJsonBody(request));
      const result = await invokeAnswer(tools, dispatcher, ids.output, input);
      // `c.json` states no length: the Node server counts it as it writes.
      const body = ENCODER.encode(JSON.stringify(result));
      return { status: 200, contentType: "application/json", body, sized: false };
    });
  };
}
