import type { ToolUsageDelta, ToolUsageKey, ToolUsageRow, UsageStore } from "@vance/core";
import { compareStrings } from "@vance/core";
import type Database from "better-sqlite3";

/** Tool usage counters in the `tool_usage` table. */
export class SqliteUsageStore implements UsageStore {
  readonly #add;
  readonly #list;
  readonly #listOfRole;

  constructor(db: Database.Database) {
    this.#add = db.prepare(
      `INSERT INTO tool_usage (tenant, project, role, tool, calls, discovery_hits, last_used_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET
         calls = calls + excluded.calls,
         discovery_hits = discovery_hits + excluded.discovery_hits,
         last_used_at = max(last_used_at, excluded.last_used_at)`,
    );
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
