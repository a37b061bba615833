/**
 * What the SQLite state store's ports share: the database (one file, or `":memory:"`), its
 * schema, and statements prepared once per number of bound keys.
 *
 * better-sqlite3 is synchronous, so within one Node process every statement runs to the end
 * before another starts; across processes sharing the file, each mutation is a single
 * statement or one transaction, and WAL plus a busy timeout lets readers and one writer
 * proceed together.
 */
import Database, { type Statement } from "better-sqlite3";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS processes (
    tenant TEXT NOT NULL,
    project TEXT NOT NULL,
    process_id TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
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
  CREATE TABLE IF NOT EXISTS usage_tokens (
    token TEXT PRIMARY KEY,
    applied_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS usage_tokens_by_age ON usage_tokens (applied_at);
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
  CREATE TABLE IF NOT EXISTS quotas (
    quota_key TEXT PRIMARY KEY,
    used INTEGER NOT NULL,
    expires_at INTEGER
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS generations (
    marker TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/** Opens (or creates) the state database with every port's tables, in WAL mode. */
export function openStateDatabase(filePath: string): Database.Database {
  const db = new Database(filePath);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(SCHEMA);
  addProcessVersions(db);
  addProcessExpiry(db);
  return db;
}

/**
 * A file made before idle expiry gets the column (its rows keep NULL: they never expire); the
 * index serves a tenant's count of live processes.
 */
function addProcessExpiry(db: Database.Database): void {
  const columns = db.pragma("table_info(processes)") as { name: string }[];
  if (!columns.some((column) => column.name === "expires_at")) {
    db.exec("ALTER TABLE processes ADD COLUMN expires_at INTEGER");
  }
  db.exec("CREATE INDEX IF NOT EXISTS processes_by_expiry ON processes (tenant, expires_at)");
}

/**
 * A file made before records had a version gets the column; its rows keep version 0, which
 * readers treat as "no version" (they compare the record's text, as before).
 */
function addProcessVersions(db: Database.Database): void {
  const columns = db.pragma("table_info(processes)") as { name: string }[];
  if (columns.some((column) => column.name === "version")) return;
  db.exec("ALTER TABLE processes ADD COLUMN version INTEGER NOT NULL DEFAULT 0");
}

/** SQLite keeps at most 32766 bound parameters per statement; stay far below. */
export const MAX_IN_PARAMS = 500;

/**
 * A `… IN (?, ?, …)` statement prepared once per number of keys: a request reads the same few
 * keys every time, and preparing costs more than the read.
 */
export class StatementsByCount {
  readonly #prepared = new Map<number, Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly sql: (placeholders: string) => string,
  ) {}

  get(count: number): Statement {
    let statement = this.#prepared.get(count);
    if (!statement) {
      statement = this.db.prepare(this.sql(Array.from({ length: count }, () => "?").join(", ")));
      this.#prepared.set(count, statement);
    }
    return statement;
  }
}
