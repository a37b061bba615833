import * as v from "valibot";

/**
 * A string schema whose rule is `problem` (null when fine), so the schema and the `assert…`
 * function of one rule can never disagree; the issue message says what is wrong.
 */
export function ruleSchema(what: string, problem: (value: string) => string | null) {
  return v.pipe(
    v.string(`${what} must be a string`),
    v.check(
      (value) => problem(value) === null,
      (issue) => `invalid ${what}: ${problem(String(issue.input))}`,
    ),
  );
}

/** The rule an issue of a {@link ruleSchema} states (its message without `invalid {what}: `), or undefined. */
export function ruleOfIssue(message: string | undefined): string | undefined {
  return message === undefined ? undefined : /^invalid [^:]+: (.+)$/s.exec(message)?.[1];
}
