import type { operations } from "./openapi-types.js";

/** The `code` an error answer of one operation may carry, as `/openapi.json` declares it. */
export type ProblemCodeOf<Operation> = Operation extends { responses: infer Responses }
  ? {
      [Status in keyof Responses]: Responses[Status] extends {
        content: { "application/problem+json": { code?: infer Code } };
      }
        ? Code
        : never;
    }[keyof Responses]
  : never;

/** Every problem `code` the service declares, over all its routes: a typed union. */
export type ProblemCode = Exclude<
  { [Name in keyof operations]: ProblemCodeOf<operations[Name]> }[keyof operations],
  undefined
>;

/** Codes the client gives answers that carry no problem: no answer at all, or one that is not a problem. */
export type ClientProblemCode = "unreachable" | "invalid_answer";

/** An RFC 9457 problem as the service answers it; `code` is one the document declares. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ProblemCode | ClientProblemCode;
  readonly errors?: readonly { readonly path: string; readonly message: string; readonly line?: number }[];
}

/**
 * An answer other than the one a call expects. `code` is the problem's (`unreachable` when no
 * answer came at all, `invalid_answer` when the body was not a problem).
 */
export class VanceApiError extends Error {
  override readonly name = "VanceApiError";

  constructor(
    /** The HTTP status; 0 when the service could not be reached. */
    readonly status: number,
    readonly problem: Problem,
    /** The request, as `METHOD path`. */
    readonly request: string,
  ) {
    super(`${request}: ${problem.detail} [${problem.code}, HTTP ${status}]`);
  }

  /** The problem's stable `code`. */
  get code(): Problem["code"] {
    return this.problem.code;
  }
}

/** Whether `value` is a problem body (the fields every problem has). */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.code === "string" && typeof record.status === "number";
}
