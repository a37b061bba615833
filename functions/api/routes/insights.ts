import type { ToolUsage } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, need } from "../auth";
import { describe, jsonResponse, type Operation } from "../openapi";
import { ToolUsageSchema } from "../responses";
import { ProjectPathSchema, params } from "../validate";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  toolUsage: {
    summary: "Tool usage per role: calls, tool_description look-ups, last use",
    tag: "insights",
    responses: { 200: jsonResponse("Usage per role", ToolUsageSchema) },
  },
} satisfies Record<string, Operation>;

/** Read-only insights under `T/insights`: tool usage per role (spec §14.4). */
export function insightRoutes(usage: ToolUsage) {
  const app = new Hono<AuthEnv>();
  app.get("/tool-usage", describe(DOCS.toolUsage), need("read"), params(ProjectPathSchema), async (c) => {
    const { tenant, project } = c.req.valid("param");
    return c.json(await usage.byRole(tenant, project));
  });
  return app;
}
