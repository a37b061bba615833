/**
 * Tenant secrets in the embedded state database: a `secrets` table in the same SQLite file as
 * the state store, values sealed by {@link SecretCipher}. Like the state store, methods are
 * synchronous underneath and return Promises only to satisfy the port.
 */
import type { SecretEntry, SecretStore } from "@vance/core";
import { byString } from "@vance/core";
import Database from "better-sqlite3";
import { SecretCipher } from "./cipher";

export interface SqliteSecretStoreOptions {
  /** The 32-byte AES-256-GCM key. */
  readonly key: Uint8Array;
  /** Epoch milliseconds, for `updatedAt`. */
  readonly now?: () => number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS secrets (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    ciphertext BLOB NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant, name)
  ) WITHOUT ROWID;
`;

/**
 * {@link SecretStore} in a SQLite file (opened here, e.g. the state store's `state.sqlite`) or
 * in a database the caller opened and keeps owning. Call {@link close} when done.
 */
export class SqliteSecretStore implements SecretStore {
  readonly #db: Database.Database;
  readonly #owned: boolean;
  readonly #cipher: SecretCipher;
  readonly #now: () => number;
  readonly #statements;

  constructor(database: string | Database.Database, options: SqliteSecretStoreOptions) {
    this.#owned = typeof database === "string";
    this.#db = typeof database === "string" ? new Database(database) : database;
    if (this.#owned) {
      this.#db.pragma("journal_mode = WAL");
      this.#db.pragma("busy_timeout = 5000");
    }
    this.#db.exec(SCHEMA);
    this.#cipher = new SecretCipher(options.key);
    this.#now = options.now ?? Date.now;
    const db = this.#db;
    this.#statements = {
      upsert: db.prepare(
        `INSERT INTO secrets (tenant, name, ciphertext, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at`,
      ),
      remove: db.prepare("DELETE FROM secrets WHERE tenant = ? AND name = ?"),
      list: db.prepare("SELECT name, updated_at FROM secrets WHERE tenant = ?"),
      select: db.prepare("SELECT ciphertext FROM secrets WHERE tenant = ? AND name = ?"),
    };
  }

  async put(tenant: string, name: string, value: string): Promise<void> {
    const sealed = this.#cipher.seal(tenant, name, value);
    this.#statements.upsert.run(tenant, name, Buffer.from(sealed), new Date(this.#now()).toISOString());
  }

  async delete(tenant: string, name: string): Promise<boolean> {
    return this.#statements.remove.run(tenant, name).changes > 0;
  }

  async list(tenant: string): Promise<SecretEntry[]> {
    const rows = this.#statements.list.all(tenant) as { name: string; updated_at: string }[];
    // Sorted in JS (UTF-16 order), as the DynamoDB store sorts.
    return rows
      .map((row) => ({ name: row.name, updatedAt: row.updated_at }))
      .sort(byString((entry) => entry.name));
  }

  async get(tenant: string, name: string): Promise<string | undefined> {
    const row = this.#statements.select.get(tenant, name) as { ciphertext: Buffer } | undefined;
    return row === undefined ? undefined : this.#cipher.open(tenant, name, row.ciphertext);
  }

  /** Closes the database when this store opened it; the store must not be used afterwards. */
  close(): void {
    if (this.#owned) this.#db.close();
  }
}
