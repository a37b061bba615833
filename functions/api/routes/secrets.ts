import { SecretNameSchema, type SecretService } from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, need } from "../auth";
import { describe, jsonResponse, type Operation } from "../openapi";
import { SecretListSchema } from "../responses";
import { json, params, TenantPathSchema } from "../validate";

// Messages name the problem, never the received value: a wrong-shaped body may still hold a secret.
const PutSecretBodySchema = v.strictObject(
  { value: v.string("value must be a string") },
  'the body must be { "value": "…" } and nothing else',
);

const SecretPathSchema = v.object({
  ...TenantPathSchema.entries,
  name: SecretNameSchema,
});

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  list: {
    summary: "The tenant's secrets: names and write times, never values (admin)",
    tag: "secrets",
    responses: { 200: jsonResponse("The secrets", SecretListSchema) },
  },
  put: {
    summary:
      "Create or replace a secret for ${secret:NAME} in this tenant's documents (admin; value at most 8 KiB)",
    tag: "secrets",
    responses: { 204: { description: "Stored, encrypted; the value is never returned" } },
  },
  delete: {
    summary: "Delete a secret (admin)",
    tag: "secrets",
    responses: { 204: { description: "Deleted" } },
    problems: { 404: ["secret_not_found"] },
  },
} satisfies Record<string, Operation>;

/**
 * Tenant secrets under `/v1/tenants/{tenant}/secrets` (API.md "Secrets"): admin only, and
 * write-only: no answer carries a value.
 */
export function secretRoutes(secrets: SecretService) {
  const app = new Hono<AuthEnv>();
  const admin = need("admin");

  app.get("/", describe(DOCS.list), admin, params(TenantPathSchema), async (c) => {
    const { tenant } = c.req.valid("param");
    return c.json({ secrets: await secrets.list(tenant) });
  });

  // Ids first, so a bad path is 400 before the body is read.
  app.put(
    "/:name",
    describe(DOCS.put),
    admin,
    params(SecretPathSchema),
    json(PutSecretBodySchema),
    async (c) => {
      const { tenant, name } = c.req.valid("param");
      await secrets.put(tenant, name, c.req.valid("json").value);
      return c.body(null, 204);
    },
  );

  app.delete("/:name", describe(DOCS.delete), admin, params(SecretPathSchema), async (c) => {
    const { tenant, name } = c.req.valid("param");
    await secrets.delete(tenant, name);
    return c.body(null, 204);
  });

  return app;
}
