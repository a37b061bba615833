import {
  type LiveProcesses,
  MemoStats,
  type ProcessKey,
  type ProcessRecord,
  type ProcessStore,
  type ProcessWithGenerations,
} from "@vance/core";
import type Database from "better-sqlite3";
import { MAX_IN_PARAMS } from "./database";
import type { SqliteGenerationStore } from "./generations";
import { ChangeClock, StampedAnswers } from "./unchanged";

/** Turn reads kept between changes of the database (a few per live process). */
const KEPT_TURNS = 1024;

/**
 * A stored record without its activations, which live in their own table, and its expiry, which
 * lives in its own column. Records spawned before packs were kept by reference lack
 * `allowedPacks` and `excludedTools`.
 */
type StoredRecord = Omit<ProcessRecord, "activatedTools" | "allowedPacks" | "excludedTools" | "expiresAt"> &
  Partial<Pick<ProcessRecord, "allowedPacks" | "excludedTools">>;

const NO_NAMES: readonly string[] = Object.freeze([]);

/** Stored text (UTF-16 code units) of the parsed records kept: about 4 MiB of text, a few times that parsed. */
const PARSED_RECORD_CHARS = 2 * 1024 * 1024;

/** Versions are random in [1, 2^48): a record stored again under a taken id is told apart. */
const VERSION_RANGE = 2 ** 48 - 1;

/** A parsed record kept by key: its version, or (version 0, rows stored before versions) its text. */
interface ParsedRecord {
  readonly version: number;
  readonly text: string | null;
  readonly chars: number;
  readonly record: StoredRecord;
}

/** What the turn's one statement answers: the row's version and expiry, its text only when asked. */
interface TurnRow {
  readonly version: number | null;
  readonly expires_at: number | null;
  /** The record's text, unless its version is the one this instance has parsed. */
  readonly record: string | null;
  /** `[[name, at], …]` as JSON. */
  readonly activated: string;
  /** `[[marker, generation], …]` as JSON, or null when no marker was asked. */
  readonly generations: string | null;
}

/**
 * The turn's read as one statement (one SQLite read snapshot, so no transaction): the row's
 * version and expiry, its text only when its version is not the one this instance has
 * parsed; a row of version 0 always answers its text), its activations, and the markers'
 * generations — one call into SQLite instead of five (a transaction's BEGIN and COMMIT, and three
 * reads), the largest part of a warm manifest's store read.
 */
const turnSql = (markers: number) => `
  SELECT p.version AS version, p.expires_at AS expires_at,
    CASE WHEN p.version = ? AND p.version <> 0 THEN NULL ELSE p.record END AS record,
    (SELECT json_group_array(json_array(a.name, a.at)) FROM activated_tools a
      WHERE a.tenant = ? AND a.project = ? AND a.process_id = ?) AS activated,
    ${
      markers === 0
        ? "NULL"
        : `(SELECT json_group_array(json_array(g.marker, g.generation)) FROM generations g
      WHERE g.marker IN (${Array.from({ length: markers }, () => "?").join(", ")}))`
    } AS generations
  FROM (SELECT 1) LEFT JOIN processes p ON p.tenant = ? AND p.project = ? AND p.process_id = ?`;

/**
 * Process records in the `processes` table (the record as JSON, with a version written with it)
 * and their activations in `activated_tools`. A record's fields but its activations are written
 * once, at spawn: a turn reads the version, and the record's text only when this instance has not
 * parsed that version yet. `getProcessAndGenerations` reads the generation markers in the same
 * statement.
 */
export class SqliteProcessStore implements ProcessStore {
  readonly #db: Database.Database;
  readonly #statements;
  /**
   * Parsed process records by key, with the version they were parsed from: a record is read on
   * every turn and never changes, and reading its text (70 KB at 5,000 tools) and comparing it
   * cost more than the rest of the read. Reused only when the stored version is the same (or, for
   * a row of version 0, its text); deep-frozen, since every reader shares it.
   */
  readonly #parsedRecords = new Map<string, ParsedRecord>();
  /** UTF-16 code units of the texts in {@link #parsedRecords}; the oldest go past the bound. */
  #parsedChars = 0;
  /**
   * Read transactions, wrapped once: `db.transaction(fn)` builds four wrapper functions on every
   * call, which costs more than the reads it wraps.
   */
  readonly #readProcessAndGenerationsTx: (
    key: ProcessKey,
    markers: readonly string[],
  ) => ProcessWithGenerations;
  /** The turn's one statement ({@link turnSql}), prepared once per number of distinct markers. */
  readonly #turnReads = new Map<number, Database.Statement>();
  readonly #clock: ChangeClock;
  /**
   * The turn statement's rows by their parameters, while the database has not changed
   * (`ChangeClock`): a process read on every call, by this instance or another that wrote
   * nothing meanwhile, is answered without the read — an end by another instance moves the
   * stamp, so it is refused as before.
   */
  readonly #turnRows = new StampedAnswers<TurnRow>(KEPT_TURNS);
  /** The JSON columns of a row the turn repeats, parsed once per row rather than on every turn. */
  readonly #parsedRows = new WeakMap<TurnRow, ParsedTurnRow>();

  /** {@link #parsedRecords}' reads and extent, listed in `/v1/metrics` (`processes.parsed`). */
  readonly #stats: MemoStats;

  constructor(
    db: Database.Database,
    generations: Pick<SqliteGenerationStore, "read">,
    stats: MemoStats = new MemoStats(),
  ) {
    this.#db = db;
    this.#clock = new ChangeClock(db);
    this.#stats = stats;
    stats.maxBytes = 2 * PARSED_RECORD_CHARS;
    this.#statements = {
      insertProcess: db.prepare(
        `INSERT INTO processes (tenant, project, process_id, version, record, expires_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      selectVersion: db.prepare(
        "SELECT version, expires_at FROM processes WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
      touchProcess: db.prepare(
        "UPDATE processes SET expires_at = ? WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
      countLive: db.prepare(
        `SELECT count(*) AS live, min(expires_at) AS next FROM processes
         WHERE tenant = ? AND expires_at > ?`,
      ),
      deleteExpiredActivated: db.prepare(
        `DELETE FROM activated_tools WHERE tenant = ? AND (project, process_id) IN (
           SELECT project, process_id FROM processes WHERE tenant = ? AND expires_at <= ?)`,
      ),
      deleteExpired: db.prepare("DELETE FROM processes WHERE tenant = ? AND expires_at <= ?"),
      selectProcess: db.prepare(
        "SELECT version, record FROM processes WHERE tenant = ? AND project = ? AND process_id = ?",
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
      deleteProcess: db.prepare(
        "DELETE FROM processes WHERE tenant = ? AND project = ? AND process_id = ? RETURNING expires_at",
      ),
      deleteAllActivated: db.prepare(
        "DELETE FROM activated_tools WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
    };
    this.#readProcessAndGenerationsTx = db.transaction(
      (key: ProcessKey, markers: readonly string[]): ProcessWithGenerations => ({
        ...this.#readProcess(key),
        generations: generations.read(markers),
      }),
    );
  }

  async createProcess(record: ProcessRecord): Promise<boolean> {
    const { activatedTools, expiresAt, ...rest } = record;
    return this.#db.transaction(() => {
      const inserted = this.#statements.insertProcess.run(
        record.tenant,
        record.project,
        record.processId,
        1 + Math.floor(Math.random() * VERSION_RANGE),
        JSON.stringify(rest),
        expiresAt ?? null,
      );
      if (inserted.changes === 0) return false;
      for (const [name, at] of Object.entries(activatedTools)) {
        this.#statements.upsertActivated.run(record.tenant, record.project, record.processId, name, at);
      }
      return true;
    })();
  }

  async getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    // One statement, so the record and its activated tools come from one snapshot.
    return this.#readTurn(key, NO_NAMES).process;
  }

  async getProcessAndGenerations(
    key: ProcessKey,
    markers: readonly string[],
  ): Promise<ProcessWithGenerations> {
    // One statement (or, past its bound parameters, one read transaction): the record and the
    // markers come from one snapshot.
    const unique = markers.length < 2 ? markers : [...new Set(markers)];
    if (unique.length > MAX_IN_PARAMS) return this.#readProcessAndGenerationsTx(key, markers);
    return this.#readTurn(key, markers, unique);
  }

  async touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    return this.#db.transaction(() => {
      if (this.#statements.selectVersion.get(key.tenant, key.project, key.processId) === undefined) {
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

  async touchProcess(key: ProcessKey, expiresAt: number): Promise<boolean> {
    return this.#statements.touchProcess.run(expiresAt, key.tenant, key.project, key.processId).changes > 0;
  }

  /** One count over the tenant's rows (`processes_by_expiry`); the expired rows are deleted in the same transaction. */
  async countLiveProcesses(tenant: string, at: number): Promise<LiveProcesses> {
    return this.#db.transaction(() => {
      this.#statements.deleteExpiredActivated.run(tenant, tenant, at);
      this.#statements.deleteExpired.run(tenant, at);
      const row = this.#statements.countLive.get(tenant, at) as { live: number; next: number | null };
      return { live: row.live, nextExpiry: row.next };
    })();
  }

  async deleteProcess(key: ProcessKey, liveAt?: number): Promise<boolean> {
    return this.#db.transaction(() => {
      const deleted = this.#statements.deleteProcess.get(key.tenant, key.project, key.processId) as
        | { expires_at: number | null }
        | undefined;
      this.#statements.deleteAllActivated.run(key.tenant, key.project, key.processId);
      if (deleted === undefined) return false;
      return liveAt === undefined || deleted.expires_at === null || deleted.expires_at > liveAt;
    })();
  }

  /** {@link turnSql}: the record (parsed once per version), its activations and the markers' generations. */
  #readTurn(
    key: ProcessKey,
    markers: readonly string[],
    unique: readonly string[] = markers,
  ): ProcessWithGenerations {
    const cacheKey = `${key.tenant}/${key.project}/${key.processId}`;
    let cached = this.#parsedRecords.get(cacheKey);
    let statement = this.#turnReads.get(unique.length);
    if (statement === undefined) {
      statement = this.#db.prepare(turnSql(unique.length));
      this.#turnReads.set(unique.length, statement);
    }
    const { tenant, project, processId } = key;
    const version = cached?.version ?? 0;
    const stamp = this.#clock.now();
    const rowKey = `${version}\n${tenant}\n${project}\n${processId}\n${unique.join("\n")}`;
    let row = this.#turnRows.get(stamp, rowKey);
    if (row === undefined) {
      row = statement.get(
        version,
        tenant,
        project,
        processId,
        ...unique,
        tenant,
        project,
        processId,
      ) as TurnRow;
      // A row with the record's text is read once: the next turn asks with the parsed version.
      if (row.record === null) this.#turnRows.set(stamp, rowKey, row);
    }
    let parsed = this.#parsedRows.get(row);
    if (parsed === undefined) {
      parsed = {
        activated: JSON.parse(row.activated) as [string, number][],
        generations:
          row.generations === null ? null : new Map(JSON.parse(row.generations) as [string, number][]),
      };
      this.#parsedRows.set(row, parsed);
    }
    const generations = generationsOf(markers, parsed.generations);
    if (row.version === null) return { process: null, generations };
    // No text: the row's version is the one parsed (a row of version 0 always answers its text).
    const text = row.record;
    if (
      text !== null &&
      (cached?.version !== row.version || cached.text !== (row.version === 0 ? text : null))
    ) {
      cached = {
        version: row.version,
        // Rows without a version are told apart by their text, as before versions.
        text: row.version === 0 ? text : null,
        chars: text.length,
        record: deepFreeze(JSON.parse(text) as StoredRecord),
      };
      this.#rememberRecord(cacheKey, cached);
      this.#stats.misses++;
    } else if (cached !== undefined) this.#stats.hits++;
    if (cached === undefined) throw new Error(`process ${cacheKey}: its row answered no text to parse`);
    const process = this.#withActivations(cached.record, parsed.activated, row.expires_at);
    // A row of version 0 (stored before versions) has none to name its fields by.
    return row.version === 0
      ? { process, generations }
      : { process, generations, version: String(row.version) };
  }

  /** The service's record of a stored one: its activations, its expiry, the lists older rows lack. */
  #withActivations(
    record: StoredRecord,
    activated: readonly (readonly [string, number])[],
    expiresAt: number | null,
  ): ProcessRecord {
    return {
      ...record,
      allowedPacks: record.allowedPacks ?? NO_NAMES,
      excludedTools: record.excludedTools ?? NO_NAMES,
      activatedTools: Object.fromEntries(activated),
      ...(expiresAt === null ? {} : { expiresAt }),
    };
  }

  #readProcess(key: ProcessKey): Omit<ProcessWithGenerations, "generations"> {
    const found = this.#statements.selectVersion.get(key.tenant, key.project, key.processId) as
      | { version: number; expires_at: number | null }
      | undefined;
    if (found === undefined) return { process: null };
    const cacheKey = `${key.tenant}/${key.project}/${key.processId}`;
    let cached = this.#parsedRecords.get(cacheKey);
    if (cached !== undefined && cached.version === found.version && found.version !== 0) this.#stats.hits++;
    else {
      const row = this.#statements.selectProcess.get(key.tenant, key.project, key.processId) as
        | { version: number; record: string }
        | undefined;
      if (row === undefined) return { process: null };
      if (cached?.version !== row.version || cached.text !== (row.version === 0 ? row.record : null)) {
        cached = {
          version: row.version,
          // Rows without a version are told apart by their text, as before versions.
          text: row.version === 0 ? row.record : null,
          chars: row.record.length,
          record: deepFreeze(JSON.parse(row.record) as StoredRecord),
        };
        this.#rememberRecord(cacheKey, cached);
        this.#stats.misses++;
      } else this.#stats.hits++;
    }
    const activated = this.#statements.selectActivated.all(key.tenant, key.project, key.processId) as {
      name: string;
      at: number;
    }[];
    const process = this.#withActivations(
      cached.record,
      activated.map((a) => [a.name, a.at] as const),
      found.expires_at,
    );
    return cached.version === 0 ? { process } : { process, version: String(cached.version) };
  }

  #rememberRecord(key: string, parsed: ParsedRecord): void {
    const previous = this.#parsedRecords.get(key);
    if (previous) {
      this.#parsedChars -= previous.chars;
      this.#parsedRecords.delete(key);
    }
    if (parsed.chars <= PARSED_RECORD_CHARS) this.#keep(key, parsed);
    this.#stats.entries = this.#parsedRecords.size;
    this.#stats.bytes = 2 * this.#parsedChars;
  }

  #keep(key: string, parsed: ParsedRecord): void {
    this.#parsedRecords.set(key, parsed);
    this.#parsedChars += parsed.chars;
    // Insertion order: the first keys are the least recently parsed.
    for (const [oldKey, entry] of this.#parsedRecords) {
      if (this.#parsedChars <= PARSED_RECORD_CHARS) break;
      this.#parsedRecords.delete(oldKey);
      this.#parsedChars -= entry.chars;
    }
  }
}

/** A turn row's JSON columns, parsed. */
interface ParsedTurnRow {
  readonly activated: readonly (readonly [string, number])[];
  /** The markers' generations (`[[marker, generation], …]`), or null when no marker was asked. */
  readonly generations: ReadonlyMap<string, number> | null;
}

/** The generation of each marker; 0 for a marker never bumped. */
function generationsOf(markers: readonly string[], found: ReadonlyMap<string, number> | null): number[] {
  if (markers.length === 0 || found === null) return markers.map(() => 0);
  return markers.map((marker) => found.get(marker) ?? 0);
}

/** `value` with every object and array in it frozen: parsed JSON shared between readers. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
