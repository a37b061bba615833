import type { ToolUsageDelta, ToolUsageKey, ToolUsageRow, UsageStore } from "@vance/core";
import { compareStrings, USAGE_TOKEN_WINDOW_MS } from "@vance/core";
import type Database from "better-sqlite3";
import { writeUnstamped } from "./unchanged";

/**
 * Tool usage counters in the `tool_usage` table. A delta's token is kept in `usage_tokens` in the
 * same transaction as its increment, for as long as DynamoDB keeps one, so a resent delta counts
 * once here too.
 */
export class SqliteUsageStore implements UsageStore {
  readonly #add;
  readonly #addOnce;
  readonly #list;
  readonly #listOfRole;
  readonly #db: Database.Database;

  constructor(
    db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    this.#db = db;
    this.#add = db.prepare(
      `INSERT INTO tool_usage (tenant, project, role, tool, calls, discovery_hits, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET
         calls = calls + excluded.calls,
         discovery_hits = discovery_hits + excluded.discovery_hits,
         last_used_at = max(last_used_at, excluded.last_used_at)`,
    );
    const forget = db.prepare("DELETE FROM usage_tokens WHERE applied_at < ?");
    const remember = db.prepare(
      "INSERT INTO usage_tokens (token, applied_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
    );
    this.#addOnce = db.transaction((key: ToolUsageKey, delta: ToolUsageDelta, token: string, at: number) => {
      forget.run(at - USAGE_TOKEN_WINDOW_MS);
      if (remember.run(token, at).changes === 0) return;
      this.#addRow(key, delta);
    });
    this.#list = db.prepare(
      `SELECT role, tool, calls, discovery_hits, last_used_at FROM tool_usage
       WHERE tenant = ? AND project = ?`,
    );
    this.#listOfRole = db.prepare(
      `SELECT role, tool, calls, discovery_hits, last_used_at FROM tool_usage
       WHERE tenant = ? AND project = ? AND role = ?`,
    );
  }

  async addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    // Usage rows are read by no stamped read: a count leaves the repeated turn reads standing.
    writeUnstamped(this.#db, () => {
      if (delta.token === undefined) this.#addRow(key, delta);
      else this.#addOnce(key, delta, delta.token, this.now());
    });
  }

  #addRow(key: ToolUsageKey, delta: ToolUsageDelta): void {
    this.#add.run(
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
      role === undefined ? this.#list.all(tenant, project) : this.#listOfRole.all(tenant, project, role)
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
}
