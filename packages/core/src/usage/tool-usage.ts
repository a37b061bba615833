import { LRUCache } from "lru-cache";
import { assertProjectId, assertTenantId } from "../ids";
import type { StateStore } from "../ports/state-store";

/** Where a use is counted: usage is kept per project and role (spec §14.4). */
export interface ToolUsageScope {
  readonly tenant: string;
  readonly project: string;
  /** The recipe name, else the engine name, else "default". */
  readonly role: string;
}

/** One tool's line in a role's usage table. */
export interface ToolUsageEntry {
  readonly name: string;
  readonly calls: number;
  readonly discoveryHits: number;
  /** ISO-8601. */
  readonly lastUsedAt: string;
}

/** The insights table (`GET T/insights/tool-usage`): one block per role, roles and tools sorted. */
export interface ToolUsageReport {
  readonly roles: readonly { readonly role: string; readonly tools: readonly ToolUsageEntry[] }[];
}

/** How long a role's demand read serves the triage of later manifests on the same instance. */
export const DEFAULT_DEMAND_TTL_MS = 5_000;

export interface ToolUsageOptions {
  readonly now?: () => number;
  /** 0 reads the counters for every demoting manifest. */
  readonly demandTtlMs?: number;
}

/**
 * `ToolUsage` (spec §14.4): cross-session demand per project and role. Successful calls and
 * `tool_description` look-ups are counted apart — look-ups are the more honest signal, since a
 * demoted tool is called less — read back as the triage's demand, and shown per role.
 */
export class ToolUsage {
  /** Demand read per role, with when it was read: triage ranks by it, it need not be exact. */
  private readonly demands = new LRUCache<
    string,
    { readonly at: number; readonly demand: ReadonlyMap<string, number> }
  >({ max: 4096 });
  private readonly now: () => number;
  private readonly demandTtlMs: number;

  constructor(
    private readonly state: Pick<StateStore, "addToolUsage" | "listToolUsage">,
    options: ToolUsageOptions = {},
  ) {
    this.now = options.now ?? (() => Date.now());
    this.demandTtlMs = options.demandTtlMs ?? DEFAULT_DEMAND_TTL_MS;
  }

  /** Counts `calls` (default one) successful calls of `tool` at `at` (epoch milliseconds). */
  async countCall(scope: ToolUsageScope, tool: string, at: number, calls = 1): Promise<void> {
    await this.state.addToolUsage({ ...roleOf(scope), tool }, { calls, at });
    this.demands.delete(roleKey(scope));
  }

  /** Counts one `tool_description` look-up of `tool` at `at` (epoch milliseconds). */
  async countDiscoveryHit(scope: ToolUsageScope, tool: string, at: number): Promise<void> {
    await this.state.addToolUsage({ ...roleOf(scope), tool }, { discoveryHits: 1, at });
    this.demands.delete(roleKey(scope));
  }

  /**
   * The role's demand per tool: calls plus discovery hits. Read at most once per `demandTtlMs`
   * per role and instance (a use counted here reads it again at once; one counted by another
   * instance shows within the time-to-live), so a demoting manifest costs one state-store round,
   * not two. The map is shared: read-only.
   */
  async demand(scope: ToolUsageScope): Promise<ReadonlyMap<string, number>> {
    const key = roleKey(scope);
    const cached = this.demands.get(key);
    if (cached && this.now() - cached.at < this.demandTtlMs) return cached.demand;
    const at = this.now();
    const rows = await this.state.listToolUsage(scope.tenant, scope.project, scope.role);
    const demand = new Map(rows.map((row) => [row.tool, row.calls + row.discoveryHits]));
    if (this.demandTtlMs > 0) this.demands.set(key, { at, demand });
    return demand;
  }

  /** Every role's counters in the project, as the insights table shows them. */
  async byRole(tenant: string, project: string): Promise<ToolUsageReport> {
    assertTenantId(tenant);
    assertProjectId(project);
    const roles = new Map<string, ToolUsageEntry[]>();
    for (const row of await this.state.listToolUsage(tenant, project)) {
      const tools = roles.get(row.role) ?? [];
      tools.push({
        name: row.tool,
        calls: row.calls,
        discoveryHits: row.discoveryHits,
        lastUsedAt: new Date(row.lastUsedAt).toISOString(),
      });
      roles.set(row.role, tools);
    }
    return { roles: [...roles].map(([role, tools]) => ({ role, tools })) };
  }
}

function roleKey(scope: ToolUsageScope): string {
  return `${scope.tenant}/${scope.project}/${scope.role}`;
}

/** Only the key's fields: a whole process record may be passed as the scope. */
function roleOf(scope: ToolUsageScope): ToolUsageScope {
  return { tenant: scope.tenant, project: scope.project, role: scope.role };
}
