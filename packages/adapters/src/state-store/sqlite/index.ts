/**
 * The embedded state store: SQLite through better-sqlite3, for `npm start` and tests — one class
 * per port over one database (`database.ts`). Methods return Promises only to satisfy the ports.
 *
 * Semantics match the DynamoDB store, including the second-granularity expiry of fire-once
 * markers, so one contract suite covers both.
 */
import type {
  ObservedToolLimit,
  ProcessKey,
  ProcessRecord,
  ProcessWithGenerations,
  StateStore,
  ToolUsageDelta,
  ToolUsageKey,
  ToolUsageRow,
} from "@vance/core";
import type Database from "better-sqlite3";
import { openStateDatabase } from "./database";
import { SqliteFireOnceStore } from "./fire-once";
import { SqliteGenerationStore } from "./generations";
import { SqliteObservedLimitStore } from "./observed-limits";
import { SqliteProcessStore } from "./processes";
import { SqliteUsageStore } from "./usage";

export { openStateDatabase } from "./database";
export { SqliteFireOnceStore } from "./fire-once";
export { SqliteGenerationStore } from "./generations";
export { SqliteObservedLimitStore } from "./observed-limits";
export { SqliteProcessStore } from "./processes";
export { SqliteUsageStore } from "./usage";

export interface SqliteStateStoreOptions {
  /** Epoch milliseconds; injectable so fire-once expiry can be tested without sleeping. */
  readonly now?: () => number;
}

/**
 * The five ports in one SQLite file (or `":memory:"`), for wiring and tests: each port is its own
 * object (`processes`, `usage`, …), and the {@link StateStore} methods delegate to them. Call
 * {@link close} when done.
 */
export class SqliteStateStore implements StateStore {
  readonly #db: Database.Database;
  readonly processes: SqliteProcessStore;
  readonly usage: SqliteUsageStore;
  readonly observedLimits: SqliteObservedLimitStore;
  readonly generations: SqliteGenerationStore;
  readonly fireOnce: SqliteFireOnceStore;

  constructor(filePath: string, options: SqliteStateStoreOptions = {}) {
    this.#db = openStateDatabase(filePath);
    this.generations = new SqliteGenerationStore(this.#db);
    this.processes = new SqliteProcessStore(this.#db, this.generations);
    this.usage = new SqliteUsageStore(this.#db);
    this.observedLimits = new SqliteObservedLimitStore(this.#db);
    this.fireOnce = new SqliteFireOnceStore(this.#db, options.now ?? Date.now);
  }

  createProcess(record: ProcessRecord): Promise<boolean> {
    return this.processes.createProcess(record);
  }

  getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    return this.processes.getProcess(key);
  }

  getProcessAndGenerations(key: ProcessKey, markers: readonly string[]): Promise<ProcessWithGenerations> {
    return this.processes.getProcessAndGenerations(key, markers);
  }

  touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    return this.processes.touchActivatedTools(key, names, at);
  }

  removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void> {
    return this.processes.removeActivatedTools(key, names);
  }

  addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    return this.usage.addToolUsage(key, delta);
  }

  listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]> {
    return this.usage.listToolUsage(tenant, project, role);
  }

  putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    return this.observedLimits.putObservedToolLimit(limit);
  }

  getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]> {
    return this.observedLimits.getObservedToolLimits(keys);
  }

  bumpGeneration(marker: string): Promise<number> {
    return this.generations.bumpGeneration(marker);
  }

  getGenerations(markers: readonly string[]): Promise<number[]> {
    return this.generations.getGenerations(markers);
  }

  markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    return this.fireOnce.markOnce(marker, ttlSeconds);
  }

  /** Closes the database; the store must not be used afterwards. */
  close(): void {
    this.#db.close();
  }
}
