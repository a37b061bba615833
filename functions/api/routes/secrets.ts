import {
  assertSecretName,
  assertTenantId,
  SECRET_NAME_PATTERN,
  type SecretService,
  TenantIdSchema,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate, type TokenVerifier } from "../auth";
import { jsonBody } from "../json-body";
import { describe, jsonRequest, jsonResponse, type Operation, pathParam } from "../openapi";
import { pathParams } from "../params";
import { SecretListSchema } from "../responses";

// Messages name the problem, never the received value: a wrong-shaped body may still hold a secret.
const PutSecretBodySchema = v.strictObject(
  { value: v.string("value must be a string") },
  'the body must be { "value": "…" } and nothing else',
);

const TENANT_PARAMS = [pathParam("tenant", TenantIdSchema)];
const SECRET_PARAMS = [
  ...TENANT_PARAMS,
  pathParam("name", { type: "string", pattern: SECRET_NAME_PATTERN.source }),
];

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  list: {
    summary: "The tenant's secrets: names and write times, never values (admin)",
    tag: "secrets",
    parameters: TENANT_PARAMS,
    responses: { 200: jsonResponse("The secrets", SecretListSchema) },
  },
  put: {
    summary:
      "Create or replace a secret for ${secret:NAME} in this tenant's documents (admin; value at most 8 KiB)",
    tag: "secrets",
    parameters: SECRET_PARAMS,
    body: jsonRequest(PutSecretBodySchema),
    responses: { 204: { description: "Stored, encrypted; the value is never returned" } },
  },
  delete: {
    summary: "Delete a secret (admin)",
    tag: "secrets",
    parameters: SECRET_PARAMS,
    responses: { 204: { description: "Deleted" } },
    problems: { 404: ["secret_not_found"] },
  },
} satisfies Record<string, Operation>;

/**
 * Tenant secrets under `/v1/tenants/{tenant}/secrets` (API.md "Secrets"): admin only, and
 * write-only: no answer carries a value.
 */
export function secretRoutes(secrets: SecretService, verifier: TokenVerifier) {
  const app = new Hono<AuthEnv>();

  app.get("/", describe(DOCS.list), authenticate(verifier, "admin"), async (c) => {
    const { tenant } = pathParams(c, "tenant");
    return c.json({ secrets: await secrets.list(tenant) });
  });

  app.put("/:name", describe(DOCS.put), authenticate(verifier, "admin"), async (c) => {
    const { tenant, name } = pathParams(c, "tenant", "name");
    // Ids first, so a bad path is 400 before the body is read.
    assertTenantId(tenant);
    assertSecretName(name);
    const body = await jsonBody(c, PutSecretBodySchema);
    await secrets.put(tenant, name, body.value);
    return c.body(null, 204);
  });

  app.delete("/:name", describe(DOCS.delete), authenticate(verifier, "admin"), async (c) => {
    const { tenant, name } = pathParams(c, "tenant", "name");
    await secrets.delete(tenant, name);
    return c.body(null, 204);
  });

  return app;
}
