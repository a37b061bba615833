import type { ProcessKey, ProcessRecord, ProcessStore, ProcessWithGenerations } from "@vance/core";
import type Database from "better-sqlite3";
import type { SqliteGenerationStore } from "./generations";

/**
 * A stored record without its activations, which live in their own table. Records spawned before
 * packs were kept by reference lack `allowedPacks` and `excludedTools`.
 */
type StoredRecord = Omit<ProcessRecord, "activatedTools" | "allowedPacks" | "excludedTools"> &
  Partial<Pick<ProcessRecord, "allowedPacks" | "excludedTools">>;

const NO_NAMES: readonly string[] = Object.freeze([]);

/** Stored text (UTF-16 code units) of the parsed records kept: about 4 MiB of text, a few times that parsed. */
const PARSED_RECORD_CHARS = 2 * 1024 * 1024;

/**
 * Process records in the `processes` table (the record as JSON) and their activations in
 * `activated_tools`. `getProcessAndGenerations` reads the generation markers through the
 * generation port, in the same read transaction.
 */
export class SqliteProcessStore implements ProcessStore {
  readonly #db: Database.Database;
  readonly #statements;
  /**
   * Parsed process records by key, with the stored text they were parsed from: a record is read
   * on every turn and rarely changes, and parsing a large allow set costs more than the read.
   * Reused only when the stored text is the same; deep-frozen, since every reader shares it.
   */
  readonly #parsedRecords = new Map<string, { text: string; record: StoredRecord }>();
  /** UTF-16 code units of the texts in {@link #parsedRecords}; the oldest go past the bound. */
  #parsedChars = 0;
  /**
   * Read transactions, wrapped once: `db.transaction(fn)` builds four wrapper functions on every
   * call, which costs more than the reads it wraps.
   */
  readonly #readProcessTx: (key: ProcessKey) => ProcessRecord | null;
  readonly #readProcessAndGenerationsTx: (
    key: ProcessKey,
    markers: readonly string[],
  ) => ProcessWithGenerations;

  constructor(db: Database.Database, generations: Pick<SqliteGenerationStore, "read">) {
    this.#db = db;
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
      deleteProcess: db.prepare("DELETE FROM processes WHERE tenant = ? AND project = ? AND process_id = ?"),
      deleteAllActivated: db.prepare(
        "DELETE FROM activated_tools WHERE tenant = ? AND project = ? AND process_id = ?",
      ),
    };
    this.#readProcessTx = db.transaction((key: ProcessKey) => this.#readProcess(key));
    this.#readProcessAndGenerationsTx = db.transaction(
      (key: ProcessKey, markers: readonly string[]): ProcessWithGenerations => ({
        process: this.#readProcess(key),
        generations: generations.read(markers),
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

  async deleteProcess(key: ProcessKey): Promise<boolean> {
    return this.#db.transaction(() => {
      const deleted = this.#statements.deleteProcess.run(key.tenant, key.project, key.processId);
      this.#statements.deleteAllActivated.run(key.tenant, key.project, key.processId);
      return deleted.changes > 0;
    })();
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
}

/** `value` with every object and array in it frozen: parsed JSON shared between readers. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
