import { Errors } from "../errors";
import { PACK_SEPARATOR, packOf } from "./pack";
import { ruleSchema } from "./rule-schema";

/** Tool names: lowercase snake_case, at most 64 characters. `__` is reserved for pack sub-tools. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** Why a configured tool name is unacceptable, or `null` when it is fine. */
export function toolNameProblem(name: string): string | null {
  if (name.includes("@")) return "'@' is reserved for label selectors";
  if (!TOOL_NAME_PATTERN.test(name))
    return "must be lowercase snake_case: [a-z][a-z0-9_]*, at most 64 characters";
  if (packOf(name) !== null) return "'__' is reserved for pack sub-tools";
  return null;
}

/** Why a pack sub-tool name (`pack__op`, at most 64 characters in all) is unacceptable, or `null`. */
export function subToolNameProblem(name: string): string | null {
  if (name.includes("@")) return "'@' is reserved for label selectors";
  if (!TOOL_NAME_PATTERN.test(name))
    return "must be lowercase snake_case: [a-z][a-z0-9_]*, at most 64 characters";
  const pack = packOf(name);
  if (pack === null) return "a pack sub-tool is named pack__op";
  if (pack.length + PACK_SEPARATOR.length === name.length) return "the operation after '__' is missing";
  return null;
}

/** Why a name a call, recipe or client declaration may use (a tool's or a pack sub-tool's) is unacceptable, or `null`. */
export function invocableToolNameProblem(name: string): string | null {
  return packOf(name) === null ? toolNameProblem(name) : subToolNameProblem(name);
}

/** A configured tool's name (the document `server-tools/{name}.yaml`) or a built-in's. */
export const ToolNameSchema = ruleSchema("tool name", toolNameProblem);

/** A pack's sub-tool name, `pack__op`. */
export const SubToolNameSchema = ruleSchema("sub-tool name", subToolNameProblem);

/** Any name a tool is called by: a tool's or a pack sub-tool's. */
export const InvocableToolNameSchema = ruleSchema("tool name", invocableToolNameProblem);

/** Throws `invalid_id` unless `name` is a valid configured tool name. */
export function assertToolName(name: string): void {
  const problem = toolNameProblem(name);
  if (problem !== null) throw Errors.invalidId("tool name", name, problem);
}
