import { describe, expect, it } from "vitest";
import { TimeAllowance } from "./time-allowance";

describe("TimeAllowance", () => {
  it("lets a tenant start until it overdrew, then for as long as the refill takes to pay the debt", () => {
    let now = 0;
    const time = new TimeAllowance(60_000, 60_000, () => now);
    expect(time.waitMs("evil")).toBe(0);
    time.charge("evil", 90_000);
    // 30 s in debt at 1 ms per ms: 30 s and a millisecond until the balance is positive.
    expect(time.waitMs("evil")).toBe(30_001);
    expect(time.waitMs("good")).toBe(0);
    now = 30_001;
    expect(time.waitMs("evil")).toBe(0);
  });

  it("refills no further than the allowance: a long idle tenant gets one allowance, not more", () => {
    let now = 0;
    const time = new TimeAllowance(10_000, 60_000, () => now);
    now = 10 * 60_000;
    time.charge("t", 10_000);
    expect(time.waitMs("t")).toBeGreaterThan(0);
  });
});
