import { isProjectId, isTenantId, type ProcessService } from "@vance/core";
import { authenticate, ENGINE, type TokenVerifier } from "./auth";
import { DEFAULT_BODY_BYTES, ROUTE_BODY_LIMITS } from "./body-limits";
import { claimOf, type FastRoute } from "./fast-path";
import { parseJsonBody } from "./http";
import { browserRefusal } from "./mcp/browser-guard";
import { type McpSettings, mcpServerOf, NO_ORIGIN_CORS, requireJsonRpcMediaType } from "./routes/mcp";

/** The process MCP endpoint's template, as Hono registers it (app.ts mounts `mcpRoutes` under the project). */
export const PROCESS_MCP_ROUTE = "/v1/tenants/:tenant/projects/:project/processes/:id/mcp";

/**
 * A path the fast route takes: ids of word characters and `-` (never `.`, `%` or an empty segment,
 * which Hono's URL handling may read otherwise). The process id is the route's to judge, as it is
 * Hono's route's: it looks the process up as it comes.
 */
const PROCESS_MCP_PATH = /^\/v1\/tenants\/([\w-]+)\/projects\/([\w-]+)\/processes\/([\w-]+)\/mcp$/;

/**
 * What the route's `need` asks of the token, built once: a spread into a literal followed by a
 * property costs V8 (Node 20) ~0.7 µs on every request, the route's copy of `{ ...ENGINE, endpoint: true }`.
 */
const ENDPOINT_AUTH = { ...ENGINE, endpoint: true } as const;

/** The limit `limitBodies` (body-limits.ts) applies to this route. */
const MAX_BODY_BYTES = ROUTE_BODY_LIMITS[`POST ${PROCESS_MCP_ROUTE}`]?.maxBytes ?? DEFAULT_BODY_BYTES;

/**
 * `POST …/processes/{id}/mcp`, every MCP message of an engine's process (issue 39), answered before
 * Hono's middleware (`fast-path.ts`) with what its Hono route runs: the browser guard's `Host` rule,
 * `need("read", { ...ENGINE, endpoint: true })`, the JSON body read once, `ProcessMcpServer.answer`,
 * and the CORS headers the route sets for a request without `Origin`. Hono keeps what a browser
 * sends (an `Origin`: the guard's origin rule and hono's `cors`), other methods (GET and DELETE
 * answer 405), bodies of no stated length (chunked: `limitBodies` counts them) and over the limit
 * (its 413), and paths its schemas refuse.
 */
export function fastProcessMcp(
  processes: ProcessService,
  verifier: TokenVerifier,
  options: { readonly version: string; readonly settings: McpSettings },
): FastRoute {
  const mcpServer = mcpServerOf(processes, options.version);
  return (request, env) => {
    if (request.method !== "POST") return undefined;
    const headers = request.headers;
    if (headers.has("origin") || headers.has("transfer-encoding")) return undefined;
    const length = headers.get("content-length");
    if (length === null || !/^\d{1,9}$/.test(length) || Number(length) > MAX_BODY_BYTES) return undefined;
    const url = request.url;
    // Where Hono's `getPath` finds the path: the first `/` after the scheme's `://`.
    const start = url.indexOf("/", url.indexOf(":") + 4);
    const mark = url.indexOf("?", start);
    const path = mark < 0 ? url.slice(start) : url.slice(start, mark);
    const match = PROCESS_MCP_PATH.exec(path);
    if (!match) return undefined;
    const tenant = match[1]!;
    const project = match[2]!;
    // ProjectPathSchema's rules, tested directly: its `safeParse` cost ~1% of a call's CPU.
    if (!isTenantId(tenant) || !isProjectId(project)) return undefined;
    const processId = match[3]!;
    return claimOf(
      PROCESS_MCP_ROUTE,
      tenant,
      async () => {
        const refusal = browserRefusal(options.settings, headers.get("host") ?? new URL(url).host, undefined);
        if (refusal) throw refusal;
        await authenticate(
          verifier,
          headers.get("authorization") ?? undefined,
          { env, path, tenant, project },
          "read",
          ENDPOINT_AUTH,
        );
        requireJsonRpcMediaType(headers.get("content-type"));
        const message = await parseJsonBody(request);
        const answered = await (await mcpServer()).answerBytes(request, message, {
          tenant,
          project,
          processId,
        });
        // Named field by field: `{ ...answered, sized }` costs V8 ~1 µs (a spread, then a property).
        return {
          status: answered.status,
          contentType: answered.contentType,
          headers: answered.headers,
          body: answered.body,
          sized: false,
        };
      },
      NO_ORIGIN_CORS,
    );
  };
}
