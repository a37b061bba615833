import { Errors } from "./errors";

/** Tenant and project ids: lowercase, digits, `_` and `-`, at most 63 characters. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** The project id that addresses the tenant layer. */
export const TENANT_PROJECT = "_tenant";
/** Tool names: lowercase snake_case, at most 64 characters. `__` is reserved for pack sub-tools. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const MAX_PATH_LENGTH = 512;

/** Throws `invalid_id` unless `tenant` is a valid tenant id. */
export function assertTenantId(tenant: string): void {
  if (!ID_PATTERN.test(tenant)) throw Errors.invalidId("tenant", tenant);
}

/** Throws `invalid_id` unless `project` is a valid project id or `_tenant`. */
export function assertProjectId(project: string): void {
  if (project !== TENANT_PROJECT && !ID_PATTERN.test(project)) throw Errors.invalidId("project", project);
}

/** Why a configured tool name is unacceptable, or `null` when it is fine. */
export function toolNameProblem(name: string): string | null {
  if (name.includes("@")) return "'@' is reserved for label selectors";
  if (!TOOL_NAME_PATTERN.test(name))
    return "must be lowercase snake_case: [a-z][a-z0-9_]*, at most 64 characters";
  if (name.includes("__")) return "'__' is reserved for pack sub-tools";
  return null;
}

/** Throws `invalid_id` unless `name` is a valid configured tool name. */
export function assertToolName(name: string): void {
  if (toolNameProblem(name) !== null) throw Errors.invalidId("tool name", name);
}

/**
 * Throws `invalid_id` unless `path` is a relative document path whose segments are plain
 * names: no `..`, no empty segments, no leading `/`, no backslashes.
 */
export function assertDocumentPath(path: string): void {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) throw Errors.invalidId("document path", path);
  for (const segment of path.split("/")) {
    if (!PATH_SEGMENT.test(segment) || segment.includes("..")) throw Errors.invalidId("document path", path);
  }
}

/** The document path of a tool configuration. */
export function toolDocumentPath(name: string): string {
  return `server-tools/${name}.yaml`;
}

/** The tool name a document path stands for, or `null` when the path is not a tool document. */
export function toolNameFromPath(path: string): string | null {
  const match = /^server-tools\/([^/]+)\.yaml$/.exec(path);
  return match ? match[1]! : null;
}
