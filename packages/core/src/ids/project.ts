import { Errors } from "../errors";
import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** The project id that addresses the tenant layer. */
export const TENANT_PROJECT = "_tenant";

const PROJECT_RULE = `${ID_RULE}; or ${TENANT_PROJECT}`;

/** Why `project` is neither a project id nor `_tenant`, or `null`. */
function projectIdProblem(project: string): string | null {
  return project === TENANT_PROJECT || ID_PATTERN.test(project) ? null : PROJECT_RULE;
}

/** A project id, or `_tenant` for the tenant layer. */
export const ProjectIdSchema = ruleSchema("project id", projectIdProblem);

/** Throws `invalid_id` unless `project` is a valid project id or `_tenant`. */
export function assertProjectId(project: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every request asserts its ids.
  if (typeof project !== "string" || projectIdProblem(project) !== null)
    throw Errors.invalidId("project", project, PROJECT_RULE);
}
