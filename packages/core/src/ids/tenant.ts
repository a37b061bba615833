import { Errors } from "../errors";
import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** Whether `tenant` is a tenant id (API.md "Ids"): the one rule the schema and the checks test. */
export function isTenantId(tenant: string): boolean {
  return ID_PATTERN.test(tenant);
}

/** A tenant id (API.md "Ids"). */
export const TenantIdSchema = ruleSchema("tenant id", (tenant) => (isTenantId(tenant) ? null : ID_RULE));

/** Throws `invalid_id` unless `tenant` is a valid tenant id. */
export function assertTenantId(tenant: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every request asserts its ids.
  if (typeof tenant !== "string" || !isTenantId(tenant)) throw Errors.invalidId("tenant", tenant, ID_RULE);
}
