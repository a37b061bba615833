import { assertSecretName, assertTenantId, type SecretService } from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate } from "../auth";
import { jsonBody } from "../json-body";

// Messages name the problem, never the received value: a wrong-shaped body may still hold a secret.
const PutSecretBodySchema = v.strictObject(
  { value: v.string("value must be a string") },
  'the body must be { "value": "…" } and nothing else',
);

/**
 * Tenant secrets under `/v1/tenants/{tenant}/secrets` (API.md "Secrets"): admin only, and
 * write-only: no answer carries a value.
 */
export function secretRoutes(secrets: SecretService, secret: string) {
  const app = new Hono<AuthEnv>();

  app.get("/", authenticate(secret, "admin"), async (c) => {
    const { tenant } = c.req.param() as { tenant: string };
    return c.json({ secrets: await secrets.list(tenant) });
  });

  app.put("/:name", authenticate(secret, "admin"), async (c) => {
    const { tenant, name } = c.req.param() as { tenant: string; name: string };
    // Ids first, so a bad path is 400 before the body is read.
    assertTenantId(tenant);
    assertSecretName(name);
    const body = await jsonBody(c, PutSecretBodySchema);
    await secrets.put(tenant, name, body.value);
    return c.body(null, 204);
  });

  app.delete("/:name", authenticate(secret, "admin"), async (c) => {
    const { tenant, name } = c.req.param() as { tenant: string; name: string };
    await secrets.delete(tenant, name);
    return c.body(null, 204);
  });

  return app;
}
