import type { ToolUsage } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, authenticate, type TokenVerifier } from "../auth";
import { describe, jsonResponse, type Operation, PROJECT_PARAMS } from "../openapi";
import { pathParams } from "../params";
import { ToolUsageSchema } from "../responses";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  toolUsage: {
    summary: "Tool usage per role: calls, tool_description look-ups, last use",
    tag: "insights",
    parameters: PROJECT_PARAMS,
    responses: { 200: jsonResponse("Usage per role", ToolUsageSchema) },
  },
} satisfies Record<string, Operation>;

/** Read-only insights under `T/insights`: tool usage per role (spec §14.4). */
export function insightRoutes(usage: ToolUsage, verifier: TokenVerifier) {
  const app = new Hono<AuthEnv>();
  app.get("/tool-usage", describe(DOCS.toolUsage), authenticate(verifier, "read"), async (c) => {
    const { tenant, project } = pathParams(c, "tenant", "project");
    return c.json(await usage.byRole(tenant, project));
  });
  return app;
}
