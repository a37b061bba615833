import type { FireOnceStore } from "@vance/core";
import type Database from "better-sqlite3";

/** Fire-once markers in the `once_markers` table, expiring by the second like the DynamoDB store's. */
export class SqliteFireOnceStore implements FireOnceStore {
  readonly #mark;

  constructor(
    db: Database.Database,
    private readonly now: () => number,
  ) {
    this.#mark = db.prepare(
      `INSERT INTO once_markers (marker, expires_at) VALUES (?, ?)
       ON CONFLICT DO UPDATE SET expires_at = excluded.expires_at
       WHERE once_markers.expires_at <= ?`,
    );
  }

  async markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    const nowMs = this.now();
    const result = this.#mark.run(marker, onceExpiresAt(nowMs, ttlSeconds), Math.floor(nowMs / 1000));
    // An upsert whose WHERE fails changes nothing: the marker is still held.
    return result.changes > 0;
  }
}

/**
 * Epoch seconds, rounded up so a marker never opens early (same rule as the DynamoDB store,
 * whose TTL attribute is in seconds): it holds for at least `ttlSeconds`, at most one second longer.
 */
function onceExpiresAt(nowMs: number, ttlSeconds: number): number {
  return Math.ceil((nowMs + ttlSeconds * 1000) / 1000);
}
