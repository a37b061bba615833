import { assertProjectId, assertTenantId, type StateStore } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, authenticate } from "../auth";

/** Read-only insights under `T/insights`: tool usage per role (spec §14.4). */
export function insightRoutes(state: StateStore, secret: string) {
  const app = new Hono<AuthEnv>();
  app.get("/tool-usage", authenticate(secret, "read"), async (c) => {
    const { tenant, project } = c.req.param() as { tenant: string; project: string };
    assertTenantId(tenant);
    assertProjectId(project);
    const roles = new Map<
      string,
      { name: string; calls: number; discoveryHits: number; lastUsedAt: string }[]
    >();
    for (const row of await state.listToolUsage(tenant, project)) {
      const tools = roles.get(row.role) ?? [];
      tools.push({
        name: row.tool,
        calls: row.calls,
        discoveryHits: row.discoveryHits,
        lastUsedAt: new Date(row.lastUsedAt).toISOString(),
      });
      roles.set(row.role, tools);
    }
    return c.json({ roles: [...roles].map(([role, tools]) => ({ role, tools })) });
  });
  return app;
}
