/** The limits of one top-level call and everything it starts. */
export interface CallLimits {
  /** How many levels nested calls may go below the top-level call. */
  readonly maxDepth: number;
  /** How many nested calls the whole tree may start or attempt, at every depth together. */
  readonly maxCalls: number;
}

/** Nesting 8 deep and 1,000 nested calls: far beyond a useful agent turn, far below a runaway. */
export const DEFAULT_CALL_LIMITS: CallLimits = { maxDepth: 8, maxCalls: 1_000 };

/**
 * Why a nested call may not start: the tool's own failure as the caller sees it. A class, so a
 * refusal of this very call can be told from a tool below that failed with the same error: only
 * the former says every later call of the same caller is refused too.
 */
export class CallRefusal {
  constructor(
    readonly error: "CallDepthExceeded" | "CallBudgetExceeded",
    readonly message: string,
  ) {}
}

/**
 * `CallBudget`: the allowance one top-level call (an API request) shares with every call it
 * starts — script sibling calls, `invoke_tool`, and whatever nests later. Each nested call is
 * charged to the same tally, whatever path it took, so alternating paths cannot reset the depth
 * and a loop of cheap calls cannot fan out without bound.
 *
 * @example
 * const top = CallBudget.start(DEFAULT_CALL_LIMITS);
 * const nested = top.enter("lookup"); // a CallBudget at depth 1, or a CallRefusal
 */
export class CallBudget {
  private constructor(
    /** 0 for the top-level call; n for a call n levels below it. */
    readonly depth: number,
    private readonly limits: CallLimits,
    private readonly spent: { calls: number },
  ) {}

  /** The budget of a new top-level call. */
  static start(limits: CallLimits = DEFAULT_CALL_LIMITS): CallBudget {
    return new CallBudget(0, limits, { calls: 0 });
  }

  /**
   * The budget of a call to `name` one level below this one, charged to the shared tally; or why
   * it may not start. A call refused for its depth is charged too: each attempt cost a crossing
   * to the serving thread, so a caller that retries its refusals spends the same tally as one
   * whose calls ran.
   */
  enter(name: string): CallBudget | CallRefusal {
    const { maxDepth, maxCalls } = this.limits;
    if (this.spent.calls >= maxCalls) {
      return new CallRefusal(
        "CallBudgetExceeded",
        `one call may start at most ${maxCalls} nested calls, refused ones included (calling '${name}')`,
      );
    }
    this.spent.calls++;
    if (this.depth >= maxDepth) {
      return new CallRefusal(
        "CallDepthExceeded",
        `nested calls go at most ${maxDepth} deep (calling '${name}' at depth ${this.depth + 1})`,
      );
    }
    return new CallBudget(this.depth + 1, this.limits, this.spent);
  }
}
