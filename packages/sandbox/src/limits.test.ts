import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, MAX_STACK_BYTES, resolveLimits } from "./limits";

describe("resolveLimits", () => {
  it("merges overrides over the base", () => {
    expect(resolveLimits(DEFAULT_LIMITS, { maxInterrupts: 10 })).toEqual({
      ...DEFAULT_LIMITS,
      maxInterrupts: 10,
    });
  });

  it("keeps the stack at or below 256 KiB", () => {
    expect(DEFAULT_LIMITS.maxStackBytes).toBeLessThanOrEqual(MAX_STACK_BYTES);
    expect(() => resolveLimits(DEFAULT_LIMITS, { maxStackBytes: MAX_STACK_BYTES + 1 })).toThrow(RangeError);
  });

  it.each([
    { memoryBytes: 1024 },
    { memoryBytes: 1.5 * 1024 * 1024 + 0.5 },
    { maxStackBytes: 1024 },
    { maxInterrupts: 0 },
    { maxInterrupts: Number.NaN },
  ])("rejects %o", (override) => {
    expect(() => resolveLimits(DEFAULT_LIMITS, override)).toThrow(RangeError);
  });
});
