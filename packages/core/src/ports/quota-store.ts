/** The quota port: per-tenant counters that a write may only grow within a limit (issue 35). */

export interface QuotaStore {
  /**
   * Adds `amount` to the counter under `key` when the total stays at or below `limit`, in one
   * atomic step, and answers whether it did (a refused add changes nothing). A negative `amount`
   * (a release) always applies. With `expiresAt` (epoch milliseconds) the counter belongs to a
   * window: the store may drop it after then, and a later add starts again from zero.
   */
  addToQuota(key: string, amount: number, limit: number, expiresAt?: number): Promise<boolean>;
  /** The counter under `key` (0 when none; an expired window's counts as 0). */
  getQuotaUsage(key: string): Promise<number>;
}
