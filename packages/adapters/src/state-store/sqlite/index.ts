/**
 * The embedded state store: SQLite through better-sqlite3, for `npm start` and tests — one class
 * per port over one database (`database.ts`). Methods return Promises only to satisfy the ports.
 *
 * Semantics match the DynamoDB store, including the second-granularity expiry of fire-once
 * markers, so one contract suite covers both.
 */
import type { MemoStats } from "@vance/core";
import type Database from "better-sqlite3";
import { CompositeStateStore } from "../composite";
import { openStateDatabase } from "./database";
import { SqliteFireOnceStore } from "./fire-once";
import { SqliteGenerationStore } from "./generations";
import { SqliteObservedLimitStore } from "./observed-limits";
import { SqliteProcessStore } from "./processes";
import { SqliteQuotaStore } from "./quotas";
import { SqliteUsageStore } from "./usage";

export { openStateDatabase } from "./database";
export { SqliteFireOnceStore } from "./fire-once";
export { SqliteGenerationStore } from "./generations";
export { SqliteObservedLimitStore } from "./observed-limits";
export { SqliteProcessStore } from "./processes";
export { SqliteQuotaStore } from "./quotas";
export { SqliteUsageStore } from "./usage";

export interface SqliteStateStoreOptions {
  /** Epoch milliseconds; injectable so fire-once expiry can be tested without sleeping. */
  readonly now?: () => number;
  /** Where the parsed process records are counted (the composition root lists it); a private one otherwise. */
  readonly parsedRecords?: MemoStats;
}

/**
 * The five ports in one SQLite file (or `":memory:"`), for wiring and tests: each port is its own
 * object (`processes`, `usage`, …), and the `StateStore` methods delegate to them ({@link CompositeStateStore}). Call
 * {@link close} when done.
 */
export class SqliteStateStore extends CompositeStateStore<
  SqliteProcessStore,
  SqliteUsageStore,
  SqliteObservedLimitStore,
  SqliteGenerationStore,
  SqliteFireOnceStore
> {
  readonly #db: Database.Database;

  constructor(filePath: string, options: SqliteStateStoreOptions = {}) {
    const db = openStateDatabase(filePath);
    const generations = new SqliteGenerationStore(db);
    super({
      processes: new SqliteProcessStore(db, generations, options.parsedRecords),
      usage: new SqliteUsageStore(db, options.now ?? Date.now),
      observedLimits: new SqliteObservedLimitStore(db),
      generations,
      fireOnce: new SqliteFireOnceStore(db, options.now ?? Date.now),
      quotas: new SqliteQuotaStore(db, options.now ?? Date.now),
    });
    this.#db = db;
  }

  /** Closes the database; the store must not be used afterwards. */
  close(): void {
    this.#db.close();
  }
}
