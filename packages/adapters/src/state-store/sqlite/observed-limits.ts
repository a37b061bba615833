import type { ObservedLimitStore, ObservedToolLimit } from "@vance/core";
import type Database from "better-sqlite3";
import { MAX_IN_PARAMS, StatementsByCount } from "./database";

/** Observed tool limits in the `observed_endpoint_limits` table. */
export class SqliteObservedLimitStore implements ObservedLimitStore {
  readonly #put;
  /** Prepared once per number of keys (a chain is short). */
  readonly #reads: StatementsByCount;
  readonly #all;
  readonly #delete;

  constructor(db: Database.Database) {
    this.#put = db.prepare(
      `INSERT INTO observed_endpoint_limits (limit_key, model, max_tools, observed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET model = excluded.model, max_tools = excluded.max_tools,
         observed_at = excluded.observed_at
       WHERE excluded.observed_at >= observed_endpoint_limits.observed_at`,
    );
    this.#all = db.prepare(
      "SELECT limit_key, model, max_tools, observed_at FROM observed_endpoint_limits ORDER BY limit_key",
    );
    this.#delete = db.prepare("DELETE FROM observed_endpoint_limits WHERE limit_key = ?");
    this.#reads = new StatementsByCount(
      db,
      (keys) =>
        `SELECT limit_key, model, max_tools, observed_at FROM observed_endpoint_limits
         WHERE limit_key IN (${keys})`,
    );
  }

  /** "Latest" is by `observedAt`: a stale observation that arrives late does not win. */
  async putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    this.#put.run(limit.key, limit.model, limit.maxTools, limit.observedAt);
  }

  async getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]> {
    const unique = [...new Set(keys)];
    const found = new Map<string, ObservedToolLimit>();
    for (let i = 0; i < unique.length; i += MAX_IN_PARAMS) {
      const chunk = unique.slice(i, i + MAX_IN_PARAMS);
      const rows = this.#reads.get(chunk.length).all(...chunk) as LimitRow[];
      for (const row of rows) found.set(row.limit_key, limitOf(row));
    }
    return unique.flatMap((key) => found.get(key) ?? []);
  }

  async listObservedToolLimits(): Promise<ObservedToolLimit[]> {
    return (this.#all.all() as LimitRow[]).map(limitOf);
  }

  async deleteObservedToolLimit(key: string): Promise<boolean> {
    return this.#delete.run(key).changes === 1;
  }
}

interface LimitRow {
  limit_key: string;
  model: string;
  max_tools: number;
  observed_at: number;
}

function limitOf(row: LimitRow): ObservedToolLimit {
  return { key: row.limit_key, model: row.model, maxTools: row.max_tools, observedAt: row.observed_at };
}
