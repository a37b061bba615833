import type { QuotaStore } from "@vance/core";
import type Database from "better-sqlite3";

/** Quota counters in the `quotas` table; a window's row carries its end and is dropped after it. */
export class SqliteQuotaStore implements QuotaStore {
  readonly #add;
  readonly #release;
  readonly #read;
  readonly #sweep;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
  ) {
    // One statement: the condition and the add are one step, whichever process shares the file.
    this.#add = db.prepare(
      `INSERT INTO quotas (quota_key, used, expires_at) VALUES (?, ?, ?)
       ON CONFLICT DO UPDATE SET used = quotas.used + excluded.used
       WHERE quotas.used + excluded.used <= ?`,
    );
    this.#release = db.prepare("UPDATE quotas SET used = used + ? WHERE quota_key = ?");
    this.#read = db.prepare("SELECT used, expires_at FROM quotas WHERE quota_key = ?");
    this.#sweep = db.prepare("DELETE FROM quotas WHERE expires_at IS NOT NULL AND expires_at <= ?");
  }

  async addToQuota(key: string, amount: number, limit: number, expiresAt?: number): Promise<boolean> {
    if (amount < 0) {
      this.#release.run(amount, key);
      return true;
    }
    if (amount > limit) return false;
    // Ended windows go first, so a key reused after its window starts again from zero.
    this.#sweep.run(this.now());
    return this.#add.run(key, amount, expiresAt ?? null, limit).changes === 1;
  }

  async getQuotaUsage(key: string): Promise<number> {
    const row = this.#read.get(key) as { used: number; expires_at: number | null } | undefined;
    if (!row || (row.expires_at !== null && row.expires_at <= this.now())) return 0;
    return row.used;
  }
}
