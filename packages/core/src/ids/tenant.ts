import { Errors } from "../errors";
import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** A tenant id (API.md "Ids"). */
export const TenantIdSchema = ruleSchema("tenant id", (tenant) => (ID_PATTERN.test(tenant) ? null : ID_RULE));

/** Throws `invalid_id` unless `tenant` is a valid tenant id. */
export function assertTenantId(tenant: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every request asserts its ids.
  if (typeof tenant !== "string" || !ID_PATTERN.test(tenant))
    throw Errors.invalidId("tenant", tenant, ID_RULE);
}
