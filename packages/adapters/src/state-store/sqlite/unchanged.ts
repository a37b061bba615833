import type Database from "better-sqlite3";

/** What the database was at one moment, as one connection sees it (see {@link ChangeClock}). */
export interface ChangeStamp {
  /** `PRAGMA data_version`: moves when another connection commits. */
  readonly dataVersion: number;
  /** `total_changes()`: moves when this connection changes rows. */
  readonly changes: number;
}

/**
 * Whether the database may have changed since a stamp: another connection committed (another
 * instance on the file, in this process or another — `PRAGMA data_version` moves) or this one
 * changed rows (`total_changes()` moves, triggers included). Under an unchanged stamp every row
 * reads as it did, so an answer read under it is still the answer: the reads every call repeats
 * (the generation markers, a process's turn) are answered again without running them — two
 * one-value statements instead of the read (issue 39). Inside a transaction there is no stamp: a
 * rollback undoes changes the count keeps. This connection's writes to tables no stamped read
 * reads ({@link writeUnstamped}) do not count.
 */
export class ChangeClock {
  readonly #db: Database.Database;
  readonly #dataVersion: Database.Statement;
  readonly #changes: ConnectionChanges;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#dataVersion = db.prepare("PRAGMA data_version").pluck();
    this.#changes = changesOf(db);
  }

  /** The stamp now; null inside a transaction. */
  now(): ChangeStamp | null {
    if (this.#db.inTransaction) return null;
    return {
      dataVersion: this.#dataVersion.get() as number,
      changes: this.#changes.stamped(),
    };
  }
}

/**
 * Runs `write`, a write of this connection to tables no stamped read reads (the usage counts,
 * `tool_usage` and `usage_tokens`), without moving this connection's stamps: the counts are
 * written every few milliseconds under load (issue 39), and each write used to make the next turn
 * of every process run its read again. Another connection's writes still move `data_version`.
 */
export function writeUnstamped<T>(db: Database.Database, write: () => T): T {
  const changes = changesOf(db);
  const before = changes.total();
  try {
    return write();
  } finally {
    changes.excuse(changes.total() - before);
  }
}

/** This connection's `total_changes()`, less the changes {@link writeUnstamped} excused. */
class ConnectionChanges {
  readonly #total: Database.Statement;
  #excused = 0;

  constructor(db: Database.Database) {
    this.#total = db.prepare("SELECT total_changes()").pluck();
  }

  total(): number {
    return this.#total.get() as number;
  }

  excuse(changes: number): void {
    this.#excused += changes;
  }

  /** The count a stamp holds: every change but the excused ones. */
  stamped(): number {
    return this.total() - this.#excused;
  }
}

/** Each connection's changes, shared by the stores on it (a store's clock sees the others' writes). */
const CONNECTION_CHANGES = new WeakMap<Database.Database, ConnectionChanges>();

function changesOf(db: Database.Database): ConnectionChanges {
  let changes = CONNECTION_CHANGES.get(db);
  if (changes === undefined) {
    changes = new ConnectionChanges(db);
    CONNECTION_CHANGES.set(db, changes);
  }
  return changes;
}

/** Whether two stamps are the same moment (null, no stamp, is never the same). */
export function sameStamp(a: ChangeStamp | null, b: ChangeStamp | null): boolean {
  return a !== null && b !== null && a.dataVersion === b.dataVersion && a.changes === b.changes;
}

/**
 * Answers read under one stamp, by key: all of them forgotten when the stamp moves (any change
 * may have changed any of them), and past `maxEntries` (a new stamp starts again from none).
 */
export class StampedAnswers<T> {
  #stamp: ChangeStamp | null = null;
  readonly #answers = new Map<string, T>();

  constructor(private readonly maxEntries: number) {}

  /** The answer read under `stamp`, if there is one. */
  get(stamp: ChangeStamp | null, key: string): T | undefined {
    return sameStamp(stamp, this.#stamp) ? this.#answers.get(key) : undefined;
  }

  /** Keeps `answer`, read under `stamp` (nothing is kept without a stamp). */
  set(stamp: ChangeStamp | null, key: string, answer: T): void {
    if (stamp === null) return;
    if (!sameStamp(stamp, this.#stamp) || this.#answers.size >= this.maxEntries) {
      this.#answers.clear();
      this.#stamp = stamp;
    }
    this.#answers.set(key, answer);
  }
}
