/**
 * `TimeAllowance`: each tenant's allowance of some shared time — a script thread's, or the
 * serving thread's spent compiling its schemas — as a bucket of `allowanceMs` that refills evenly
 * over `windowMs`. Work is charged when it ends (its cost is known only then), so a tenant may
 * overdraw by the work it had in flight; it then starts nothing until the refill paid the debt.
 * A share of threads or turns bounds how much a tenant runs at once; this bounds how long it
 * keeps them busy, so one tenant cannot take the machine's cores from everyone else for longer
 * than its allowance.
 *
 * @example
 * const time = new TimeAllowance(60_000, 60_000);
 * time.charge("evil", 90_000);
 * time.waitMs("evil"); // 30_000: ms until it may start a run again
 */
export class TimeAllowance {
  private readonly tenants = new Map<string, { balance: number; at: number }>();

  constructor(
    /** Worker ms one tenant may spend in `windowMs`, and at most in one burst. */
    readonly allowanceMs: number,
    readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(allowanceMs > 0) || !(windowMs > 0)) {
      throw new RangeError(
        `a time allowance and its window must be positive, got ${allowanceMs} / ${windowMs}`,
      );
    }
  }

  /** 0 when `tenant` may start a run now; else the ms until its allowance is positive again. */
  waitMs(tenant: string): number {
    const balance = this.balanceOf(tenant);
    return balance > 0 ? 0 : Math.ceil((1 - balance) / this.rate());
  }

  /** Charges `ms` of worker time to `tenant`. */
  charge(tenant: string, ms: number): void {
    if (!(ms > 0)) return;
    const balance = this.balanceOf(tenant) - ms;
    this.tenants.set(tenant, { balance, at: this.now() });
    if (this.tenants.size > MAX_TRACKED) this.forgetFull();
  }

  private rate(): number {
    return this.allowanceMs / this.windowMs;
  }

  private balanceOf(tenant: string): number {
    const entry = this.tenants.get(tenant);
    if (!entry) return this.allowanceMs;
    return Math.min(this.allowanceMs, entry.balance + (this.now() - entry.at) * this.rate());
  }

  /** Tenants whose bucket refilled are tracked no longer: a full bucket is the default. */
  private forgetFull(): void {
    for (const tenant of [...this.tenants.keys()]) {
      if (this.balanceOf(tenant) >= this.allowanceMs) this.tenants.delete(tenant);
    }
  }
}

/** Tenants tracked before the full buckets are swept out (each entry is a few dozen bytes). */
const MAX_TRACKED = 1_024;
