import { type DocumentService, TenantIdSchema } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, authenticate, type TokenVerifier } from "../auth";
import { describe, jsonResponse, type Operation, pathParam } from "../openapi";
import { pathParams } from "../params";
import { ProjectListSchema } from "../responses";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  list: {
    summary:
      "The tenant's projects that hold documents, sorted, and whether its tenant layer holds any (read; the web listing's picker)",
    tag: "documents",
    parameters: [pathParam("tenant", TenantIdSchema)],
    responses: { 200: jsonResponse("The projects", ProjectListSchema) },
    problems: { 400: ["invalid_id"] },
  },
} satisfies Record<string, Operation>;

/** `GET /v1/tenants/{tenant}/projects`: tenant-scoped, like every route under the tenant. */
export function projectRoutes(documents: DocumentService, verifier: TokenVerifier) {
  const app = new Hono<AuthEnv>();
  app.get("/", describe(DOCS.list), authenticate(verifier, "read"), async (c) => {
    const { tenant } = pathParams(c, "tenant");
    return c.json(await documents.projects(tenant));
  });
  return app;
}
