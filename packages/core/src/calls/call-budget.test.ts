import { describe, expect, it } from "vitest";
import { CallBudget, DEFAULT_CALL_LIMITS } from "./call-budget";

function enterOrFail(budget: CallBudget, name = "t"): CallBudget {
  const entered = budget.enter(name);
  if (!(entered instanceof CallBudget)) throw new Error(`refused: ${entered.message}`);
  return entered;
}

describe("CallBudget", () => {
  it("nests down to maxDepth and refuses the next level with CallDepthExceeded, naming the tool", () => {
    let budget = CallBudget.start();
    for (let level = 1; level <= DEFAULT_CALL_LIMITS.maxDepth; level++) {
      budget = enterOrFail(budget);
      expect(budget.depth).toBe(level);
    }
    expect(budget.enter("ouroboros")).toMatchObject({
      error: "CallDepthExceeded",
      message: expect.stringContaining("ouroboros"),
    });
  });

  it("counts nested calls of every branch in one tally and refuses the one past maxCalls", () => {
    const top = CallBudget.start({ maxDepth: 8, maxCalls: 5 });
    const child = enterOrFail(top);
    enterOrFail(child);
    enterOrFail(child);
    enterOrFail(top);
    enterOrFail(top);
    expect(top.enter("sixth")).toMatchObject({ error: "CallBudgetExceeded" });
    expect(child.enter("sixth")).toMatchObject({ error: "CallBudgetExceeded" });
  });

  it("charges a call refused for its depth, so retried refusals spend the tally; a new top-level call starts with the whole budget", () => {
    const limits = { maxDepth: 1, maxCalls: 3 };
    const top = CallBudget.start(limits);
    const nested = enterOrFail(top);
    expect(nested.enter("deeper")).toMatchObject({ error: "CallDepthExceeded" });
    expect(top.enter("second")).toBeInstanceOf(CallBudget);
    expect(nested.enter("deeper again")).toMatchObject({ error: "CallBudgetExceeded" });
    expect(top.enter("third")).toMatchObject({ error: "CallBudgetExceeded" });
    expect(CallBudget.start(limits).enter("fresh")).toBeInstanceOf(CallBudget);
  });
});
