import * as v from "valibot";
import { Errors } from "../errors";
import { ruleSchema } from "./rule-schema";

/** Secret names (`${secret:NAME}`, API.md "Secrets"): upper-case letters, digits and `_`, at most 64 characters. */
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * Why `name` is no secret name, or `null`; a name that is one once upper-cased (`jira_token`)
 * is offered spelled so.
 */
export function secretNameProblem(name: string): string | null {
  if (SECRET_NAME_PATTERN.test(name)) return null;
  const rule =
    "secret names are upper-case letters, digits and '_', starting with a letter, at most 64 characters";
  return SECRET_NAME_PATTERN.test(name.toUpperCase())
    ? `${rule}; did you mean '${name.toUpperCase()}'?`
    : rule;
}

/**
 * A secret name, as a path parameter or `${secret:NAME}` names it; the rule's message comes first,
 * the pattern documents it in `/openapi.json`.
 */
export const SecretNameSchema = v.pipe(
  ruleSchema("secret name", secretNameProblem),
  v.regex(SECRET_NAME_PATTERN, "upper-case letters, digits and '_'"),
);

/** Throws `invalid_id` unless `name` is a valid secret name; the message says the rule. */
export function assertSecretName(name: string): void {
  const problem = secretNameProblem(name);
  if (problem !== null) throw Errors.invalidId("secret name", name, problem);
}
