/** The usage port: tool usage counters per project, role and tool (spec §14.4). */

export interface ToolUsageKey {
  readonly tenant: string;
  readonly project: string;
  readonly role: string;
  readonly tool: string;
}

export interface ToolUsageDelta {
  readonly calls?: number;
  readonly discoveryHits?: number;
  /** Epoch milliseconds of this use; the stored `lastUsedAt` becomes the max. */
  readonly at: number;
  /**
   * Idempotency token (1–32 characters): a delta whose token the store applied within the last
   * {@link USAGE_TOKEN_WINDOW_MS} is not applied again, so a write whose answer was lost can be
   * sent again with the same token and the same counts. Resend a token only with the same delta.
   */
  readonly token?: string;
}

/**
 * How long a store remembers an applied token: DynamoDB's `ClientRequestToken` window (ten
 * minutes after the first request that used it completed). SQLite keeps its tokens as long.
 */
export const USAGE_TOKEN_WINDOW_MS = 10 * 60_000;

export interface ToolUsageRow {
  readonly role: string;
  readonly tool: string;
  readonly calls: number;
  readonly discoveryHits: number;
  /** Epoch milliseconds. */
  readonly lastUsedAt: number;
}

export interface UsageStore {
  /** Atomic increment (DynamoDB `ADD`), at most once per `delta.token`; creates the row at zero first when absent. */
  addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void>;
  /** All rows of a project, optionally one role; sorted by role, then tool. */
  listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]>;
}
