/**
 * The embedded state store: SQLite through better-sqlite3, for `npm start` and tests.
 *
 * better-sqlite3 is synchronous, so within one Node process every statement runs to the end
 * before another starts; across processes sharing the file, each mutation is a single
 * statement or one transaction, and WAL plus a busy timeout lets readers and one writer
 * proceed together. Methods return Promises only to satisfy the port.
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
import { compareStrings } from "@vance/core";
import Database, { type Statement } from "better-sqlite3";

/**
 * A stored record without its activations, which live in their own table. Records spawned before
 * packs were kept by reference lack `allowedPacks` and `excludedTools`.
 */
type StoredRecord = Omit<ProcessRecord, "activatedTools" | "allowedPacks" | "excludedTools"> &
  Partial<Pick<ProcessRecord, "allowedPacks" | "excludedTools">>;

const NO_NAMES: readonly string[] = Object.freeze([]);

export interface SqliteStateStoreOptions {
  /** Epoch milliseconds; injectable so fire-once expiry can be tested without sleeping. */
  readonly now?: () => number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS processes (
    tenant TEXT NOT NULL,
    project TEXT NOT NULL,
    process_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (tenant, project, process_id)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS activated_tools (
    tenant TEXT NOT NULL,
    project TEXT NOT NULL,
    process_id TEXT NOT NULL,
    name TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (tenant, project, process_id, name)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS tool_usage (
    tenant TEXT NOT NULL,
    project TEXT NOT NULL,
    role TEXT NOT NULL,
    tool TEXT NOT NULL,
    calls INTEGER NOT NULL,
    discovery_hits INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, project, role, tool)
  ) WITHOUT ROWID;
  DROP TABLE IF EXISTS observed_tool_limits;
  CREATE TABLE IF NOT EXISTS observed_endpoint_limits (
    limit_key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    max_tools INTEGER NOT NULL,
    observed_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS once_markers (
    marker TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS generations (
    marker TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/** Stored text (UTF-16 code units) of the parsed records kept: about 4 MiB of text, a few times that parsed. */
const PARSED_RECORD_CHARS = 2 * 1024 * 1024;

/** SQLite keeps at most 32766 bound parameters per statement; stay far below. */
const MAX_IN_PARAMS = 500;

/** {@link StateStore} in one SQLite file (or `":memory:"`). Call {@link close} when done. */
export class SqliteStateStore implements StateStore {
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #statements;
  readonly #generationReads = new Map<number, Statement>();
  /**
   * Parsed process records by key, with the stored text they were parsed from: a record is read
   * on every turn and rarely changes, and parsing a large allow set costs more than the read.
   * Reused only when the stored text is the same; deep-frozen, since every reader shares it.
   */
  readonly #parsedRecords = new Map<string, { text: string; record: StoredRecord }>();
  /** UTF-16 code units of the texts in {@link #parsedRecords}; the oldest go past the bound. */
  #parsedChars = 0;
  /** Statements of `getObservedToolLimits`, prepared once per number of keys. */
  readonly #limitReads = new Map<number, Statement>();
  /**
   * Read transactions, wrapped once: `db.transaction(fn)` builds four wrapper functions on every
   * call, which costs more than the reads it wraps.
   */
  readonly #readProcessTx: (key: ProcessKey) => ProcessRecord | null;
  readonly #readProcessAndGenerationsTx: (
    key: ProcessKey,
    markers: readonly string[],
  ) => ProcessWithGenerations;

  constructor(filePath: string, options: SqliteStateStoreOptions = {}) {
    this.#db = new Database(filePath);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("busy_timeout = 5000");
    this.#db.exec(SCHEMA);
    this.#now = options.now ?? Date.now;
    const db = this.#db;
    this.#statements = {
      insertProcess: db.prepare(
        `INSERT INTO processes (tenant, project, process_id, record) VALUES (?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      selectProcess: db.prepare(
        "SELECT record FROM processes WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
      selectActivated: db.prepare(
        "SELECT name, at FROM activated_tools WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
      upsertActivated: db.prepare(
        `INSERT INTO activated_tools (tenant, project, process_id, name, at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET at = excluded.at`,
      ),
      deleteActivated: db.prepare(
        "DELETE FROM activated_tools WHERE tenant = ? AND project = ? AND process_id = ? AND name = ?",
      ),
      addUsage: db.prepare(
        `INSERT INTO tool_usage (tenant, project, role, tool, calls, discovery_hits, last_used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET
           calls = calls + excluded.calls,
           discovery_hits = discovery_hits + excluded.discovery_hits,
           last_used_at = max(last_used_at, excluded.last_used_at)`,
      ),
      listUsage: db.prepare(
        `SELECT role, tool, calls, discovery_hits, last_used_at FROM tool_usage
         WHERE tenant = ? AND project = ?`,
      ),
      listUsageOfRole: db.prepare(
        `SELECT role, tool, calls, discovery_hits, last_used_at FROM tool_usage
         WHERE tenant = ? AND project = ? AND role = ?`,
      ),
      putLimit: db.prepare(
        `INSERT INTO observed_endpoint_limits (limit_key, model, max_tools, observed_at) VALUES (?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET model = excluded.model, max_tools = excluded.max_tools,
           observed_at = excluded.observed_at
         WHERE excluded.observed_at >= observed_endpoint_limits.observed_at`,
      ),
      bumpGeneration: db.prepare(
        `INSERT INTO generations (marker, generation) VALUES (?, 1)
         ON CONFLICT DO UPDATE SET generation = generation + 1
         RETURNING generation`,
      ),
      markOnce: db.prepare(
        `INSERT INTO once_markers (marker, expires_at) VALUES (?, ?)
         ON CONFLICT DO UPDATE SET expires_at = excluded.expires_at
         WHERE once_markers.expires_at <= ?`,
      ),
    };
    this.#readProcessTx = db.transaction((key: ProcessKey) => this.#readProcess(key));
    this.#readProcessAndGenerationsTx = db.transaction(
      (key: ProcessKey, markers: readonly string[]): ProcessWithGenerations => ({
        process: this.#readProcess(key),
        generations: this.#readGenerations(markers),
      }),
    );
  }

  async createProcess(record: ProcessRecord): Promise<boolean> {
    const { activatedTools, ...rest } = record;
    return this.#db.transaction(() => {
      const inserted = this.#statements.insertProcess.run(
        record.tenant,
        record.project,
        record.processId,
        JSON.stringify(rest),
      );
      if (inserted.changes === 0) return false;
      for (const [name, at] of Object.entries(activatedTools)) {
        this.#statements.upsertActivated.run(record.tenant, record.project, record.processId, name, at);
      }
      return true;
    })();
  }

  async getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    // One read transaction, so the record and its activated tools come from one snapshot.
    return this.#readProcessTx(key);
  }

  async getProcessAndGenerations(
    key: ProcessKey,
    markers: readonly string[],
  ): Promise<ProcessWithGenerations> {
    // One read transaction: the record and the markers come from one snapshot.
    return this.#readProcessAndGenerationsTx(key, markers);
  }

  async touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    return this.#db.transaction(() => {
      if (this.#statements.selectProcess.get(key.tenant, key.project, key.processId) === undefined) {
        return false;
      }
      for (const name of names) {
        this.#statements.upsertActivated.run(key.tenant, key.project, key.processId, name, at);
      }
      return true;
    })();
  }

  async removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void> {
    this.#db.transaction(() => {
      for (const name of names) {
        this.#statements.deleteActivated.run(key.tenant, key.project, key.processId, name);
      }
    })();
  }

  async addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    this.#statements.addUsage.run(
      key.tenant,
      key.project,
      key.role,
      key.tool,
      delta.calls ?? 0,
      delta.discoveryHits ?? 0,
      delta.at,
    );
  }

  async listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]> {
    const rows = (
      role === undefined
        ? this.#statements.listUsage.all(tenant, project)
        : this.#statements.listUsageOfRole.all(tenant, project, role)
    ) as { role: string; tool: string; calls: number; discovery_hits: number; last_used_at: number }[];
    // Sorted in JS (UTF-16 order) rather than by SQLite's byte order, to match the DynamoDB store.
    return rows
      .map((r) => ({
        role: r.role,
        tool: r.tool,
        calls: r.calls,
        discoveryHits: r.discovery_hits,
        lastUsedAt: r.last_used_at,
      }))
      .sort((a, b) => compareStrings(a.role, b.role) || compareStrings(a.tool, b.tool));
  }

  /** "Latest" is by `observedAt`: a stale observation that arrives late does not win. */
  async putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    this.#statements.putLimit.run(limit.key, limit.model, limit.maxTools, limit.observedAt);
  }

  async getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]> {
    const unique = [...new Set(keys)];
    const found = new Map<string, ObservedToolLimit>();
    for (let i = 0; i < unique.length; i += MAX_IN_PARAMS) {
      const chunk = unique.slice(i, i + MAX_IN_PARAMS);
      const rows = this.#selectLimits(chunk.length).all(...chunk) as {
        limit_key: string;
        model: string;
        max_tools: number;
        observed_at: number;
      }[];
      for (const row of rows) {
        found.set(row.limit_key, {
          key: row.limit_key,
          model: row.model,
          maxTools: row.max_tools,
          observedAt: row.observed_at,
        });
      }
    }
    return unique.flatMap((key) => found.get(key) ?? []);
  }

  async markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    const nowMs = this.#now();
    const result = this.#statements.markOnce.run(
      marker,
      onceExpiresAt(nowMs, ttlSeconds),
      Math.floor(nowMs / 1000),
    );
    // An upsert whose WHERE fails changes nothing: the marker is still held.
    return result.changes > 0;
  }

  /** One UPSERT statement: atomic on its own, also across processes sharing the file. */
  async bumpGeneration(marker: string): Promise<number> {
    const row = this.#statements.bumpGeneration.get(marker) as { generation: number };
    return row.generation;
  }

  async getGenerations(markers: readonly string[]): Promise<number[]> {
    return this.#readGenerations(markers);
  }

  #readProcess(key: ProcessKey): ProcessRecord | null {
    const row = this.#statements.selectProcess.get(key.tenant, key.project, key.processId) as
      | { record: string }
      | undefined;
    if (row === undefined) return null;
    const activated = this.#statements.selectActivated.all(key.tenant, key.project, key.processId) as {
      name: string;
      at: number;
    }[];
    const cacheKey = `${key.tenant}/${key.project}/${key.processId}`;
    const cached = this.#parsedRecords.get(cacheKey);
    let record: StoredRecord;
    if (cached?.text === row.record) {
      record = cached.record;
    } else {
      record = deepFreeze(JSON.parse(row.record) as StoredRecord);
      this.#rememberRecord(cacheKey, row.record, record);
    }
    return {
      ...record,
      allowedPacks: record.allowedPacks ?? NO_NAMES,
      excludedTools: record.excludedTools ?? NO_NAMES,
      activatedTools: Object.fromEntries(activated.map((a) => [a.name, a.at])),
    };
  }

  #rememberRecord(key: string, text: string, record: StoredRecord): void {
    const previous = this.#parsedRecords.get(key);
    if (previous) {
      this.#parsedChars -= previous.text.length;
      this.#parsedRecords.delete(key);
    }
    if (text.length > PARSED_RECORD_CHARS) return;
    this.#parsedRecords.set(key, { text, record });
    this.#parsedChars += text.length;
    // Insertion order: the first keys are the least recently parsed.
    for (const [oldKey, entry] of this.#parsedRecords) {
      if (this.#parsedChars <= PARSED_RECORD_CHARS) break;
      this.#parsedRecords.delete(oldKey);
      this.#parsedChars -= entry.text.length;
    }
  }

  /**
   * The statement reading `count` markers, prepared once per count: a request reads the same few
   * markers every time, and preparing costs more than the read.
   */
  #selectGenerations(count: number): Statement {
    let statement = this.#generationReads.get(count);
    if (!statement) {
      statement = this.#db.prepare(
        `SELECT marker, generation FROM generations WHERE marker IN (${Array.from({ length: count }, () => "?").join(", ")})`,
      );
      this.#generationReads.set(count, statement);
    }
    return statement;
  }

  /** The statement reading `count` observed limits, prepared once per count (a chain is short). */
  #selectLimits(count: number): Statement {
    let statement = this.#limitReads.get(count);
    if (!statement) {
      statement = this.#db.prepare(
        `SELECT limit_key, model, max_tools, observed_at FROM observed_endpoint_limits
         WHERE limit_key IN (${Array.from({ length: count }, () => "?").join(", ")})`,
      );
      this.#limitReads.set(count, statement);
    }
    return statement;
  }

  #readGenerations(markers: readonly string[]): number[] {
    const found = new Map<string, number>();
    const unique = [...new Set(markers)];
    for (let i = 0; i < unique.length; i += MAX_IN_PARAMS) {
      const chunk = unique.slice(i, i + MAX_IN_PARAMS);
      const rows = this.#selectGenerations(chunk.length).all(...chunk) as {
        marker: string;
        generation: number;
      }[];
      for (const row of rows) found.set(row.marker, row.generation);
    }
    return markers.map((marker) => found.get(marker) ?? 0);
  }

  /** Closes the database; the store must not be used afterwards. */
  close(): void {
    this.#db.close();
  }
}

/** `value` with every object and array in it frozen: parsed JSON shared between readers. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Epoch seconds, rounded up so a marker never opens early (same rule as the DynamoDB store,
 * whose TTL attribute is in seconds): it holds for at least `ttlSeconds`, at most one second longer.
 */
function onceExpiresAt(nowMs: number, ttlSeconds: number): number {
  return Math.ceil((nowMs + ttlSeconds * 1000) / 1000);
}
