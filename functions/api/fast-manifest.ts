import type { ProcessService } from "@vance/core";
import * as v from "valibot";
import { authenticate, ENGINE, type TokenVerifier } from "./auth";
import { claimOf, type FastRoute } from "./fast-path";
import { ManifestQuerySchema, manifestAnswer, ProcessPathSchema } from "./routes/processes";

/** The manifest route's template, as Hono registers it (app.ts mounts `processRoutes` under the project). */
export const MANIFEST_ROUTE = "/v1/tenants/:tenant/projects/:project/processes/:id/manifest";

/**
 * A path the fast route takes: ids of word characters and `-` (never `.`, `%` or an empty
 * segment, which Hono's URL handling may read otherwise); their rules are the route's schemas'.
 */
const MANIFEST_PATH = /^\/v1\/tenants\/([\w-]+)\/projects\/([\w-]+)\/processes\/([\w-]+)\/manifest$/;

/** The query parameters the route reads; another one is Hono's to judge. */
const PARAMETERS = new Set(["format", "with", "names"]);

/**
 * `GET …/processes/{id}/manifest`, an engine's every turn, answered before Hono's middleware
 * (`fast-path.ts`): the route's own schemas, `need("read", ENGINE)` and `manifestAnswer`.
 */
export function fastManifest(
  processes: Pick<ProcessService, "manifestBody">,
  verifier: TokenVerifier,
): FastRoute {
  return (request, env) => {
    // A HEAD is Hono's: it answers the GET's headers without the body.
    if (request.method !== "GET") return undefined;
    const url = request.url;
    // Where Hono's `getPath` finds the path: the first `/` after the scheme's `://`.
    const start = url.indexOf("/", url.indexOf(":") + 4);
    const mark = url.indexOf("?", start);
    const path = mark < 0 ? url.slice(start) : url.slice(start, mark);
    const match = MANIFEST_PATH.exec(path);
    if (!match) return undefined;
    const ids = v.safeParse(ProcessPathSchema, { tenant: match[1], project: match[2], id: match[3] });
    if (!ids.success) return undefined;
    const fields = queryFields(mark < 0 ? "" : url.slice(mark + 1));
    if (!fields) return undefined;
    const query = v.safeParse(ManifestQuerySchema, fields);
    if (!query.success) return undefined;
    const { tenant, project } = ids.output;
    return claimOf(MANIFEST_ROUTE, tenant, async () => {
      await authenticate(
        verifier,
        request.headers.get("authorization") ?? undefined,
        { env, path, tenant, project },
        "read",
        ENGINE,
      );
      const body = await manifestAnswer(processes, ids.output, query.output);
      return { status: 200, contentType: "application/json", body };
    });
  };
}

/**
 * The query's parameters when Hono would read each as this plain text: each known parameter at most
 * once (twice is an array, which the schema refuses), `name=value`, nothing to decode.
 */
function queryFields(text: string): Record<string, string> | undefined {
  const fields: Record<string, string> = {};
  if (text === "") return fields;
  if (text.includes("%") || text.includes("+")) return undefined;
  for (const part of text.split("&")) {
    const equals = part.indexOf("=");
    if (equals < 0) return undefined;
    const name = part.slice(0, equals);
    if (!PARAMETERS.has(name) || name in fields) return undefined;
    fields[name] = part.slice(equals + 1);
  }
  return fields;
}
