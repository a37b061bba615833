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
}

export interface ToolUsageRow {
  readonly role: string;
  readonly tool: string;
  readonly calls: number;
  readonly discoveryHits: number;
  /** Epoch milliseconds. */
  readonly lastUsedAt: number;
}

export interface UsageStore {
  /** Atomic increment (DynamoDB `ADD`); creates the row at zero first when absent. */
  addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void>;
  /** All rows of a project, optionally one role; sorted by role, then tool. */
  listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]>;
}
