import { Errors } from "../errors";
import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** The project id that addresses the tenant layer. */
export const TENANT_PROJECT = "_tenant";

const PROJECT_RULE = `${ID_RULE}; or ${TENANT_PROJECT}`;

/** Whether `project` is a project id or `_tenant`: the one rule the schema and the checks test. */
export function isProjectId(project: string): boolean {
  return project === TENANT_PROJECT || ID_PATTERN.test(project);
}

/** A project id, or `_tenant` for the tenant layer. */
export const ProjectIdSchema = ruleSchema("project id", (project) =>
  isProjectId(project) ? null : PROJECT_RULE,
);

/** Throws `invalid_id` unless `project` is a valid project id or `_tenant`. */
export function assertProjectId(project: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every request asserts its ids.
  if (typeof project !== "string" || !isProjectId(project))
    throw Errors.invalidId("project", project, PROJECT_RULE);
}
