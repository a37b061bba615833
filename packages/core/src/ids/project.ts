import * as v from "valibot";
import { Errors } from "../errors";
import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** The project id that addresses the tenant layer. */
export const TENANT_PROJECT = "_tenant";

const PROJECT_RULE = `${ID_RULE}; or ${TENANT_PROJECT}`;

/** A project id, or `_tenant` for the tenant layer. */
export const ProjectIdSchema = ruleSchema("project id", (project) =>
  project === TENANT_PROJECT || ID_PATTERN.test(project) ? null : PROJECT_RULE,
);

/** Throws `invalid_id` unless `project` is a valid project id or `_tenant`. */
export function assertProjectId(project: string): void {
  if (!v.is(ProjectIdSchema, project)) throw Errors.invalidId("project", project, PROJECT_RULE);
}
