import * as v from "valibot";
import { Errors } from "../errors";
import { ruleSchema } from "./rule-schema";

/**
 * Process ids (a spawn's `processId`, an MCP session's `Mcp-Session-Id`): letters, digits and
 * `-`, at most 64 characters — a UUID, as the service mints them, is one.
 */
export const PROCESS_ID_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

const PROCESS_ID_RULE = "letters, digits and '-', at most 64 characters";

/** Why `id` is no process id, or `null`. */
export function processIdProblem(id: string): string | null {
  return PROCESS_ID_PATTERN.test(id) ? null : PROCESS_ID_RULE;
}

/**
 * A process id, as a path parameter or the MCP session header carries it; the rule's message
 * comes first, the pattern documents it in `/openapi.json`.
 */
export const ProcessIdSchema = v.pipe(
  ruleSchema("process id", processIdProblem),
  v.regex(PROCESS_ID_PATTERN, PROCESS_ID_RULE),
);

/** Throws `invalid_id` unless `id` is a valid process id. */
export function assertProcessId(id: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every request asserts its ids.
  if (typeof id !== "string" || processIdProblem(id) !== null)
    throw Errors.invalidId("process id", id, PROCESS_ID_RULE);
}
