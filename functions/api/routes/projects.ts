import type { DocumentService } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, need } from "../auth";
import { describe, jsonResponse, type Operation } from "../openapi";
import { ProjectListSchema } from "../responses";
import { params, TenantPathSchema } from "../validate";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  list: {
    summary:
      "The tenant's projects that hold documents, sorted, and whether its tenant layer holds any (read; the web listing's picker)",
    tag: "documents",
    responses: { 200: jsonResponse("The projects", ProjectListSchema) },
    problems: { 400: ["invalid_id"] },
  },
} satisfies Record<string, Operation>;

/** `GET /v1/tenants/{tenant}/projects`: tenant-scoped, like every route under the tenant. */
export function projectRoutes(documents: DocumentService) {
  const app = new Hono<AuthEnv>();
  app.get("/", describe(DOCS.list), need("read"), params(TenantPathSchema), async (c) => {
    const { tenant } = c.req.valid("param");
    return c.json(await documents.projects(tenant));
  });
  return app;
}
