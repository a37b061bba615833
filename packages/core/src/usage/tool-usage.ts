import { LRUCache } from "lru-cache";
import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import { assertProjectId, assertTenantId } from "../ids";
import { type Logger, silentLogger } from "../ports/logger";
import type { ToolUsageKey, UsageStore } from "../ports/usage-store";

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

/** Uses of one tool not yet written: what one coalesced write adds. */
interface PendingUse {
  readonly key: ToolUsageKey;
  calls: number;
  discoveryHits: number;
  at: number;
}

/** Distinct tools a write-behind holds at most; a use beyond them waits for a flush. */
const MAX_PENDING_TOOLS = 10_000;

export interface ToolUsageOptions {
  readonly now?: () => number;
  /** 0 reads the counters for every demoting manifest. */
  readonly demandTtlMs?: number;
  /**
   * Write-behind: counting a use only queues it, and `schedule` is asked to run a flush soon —
   * after the answer is on its way (`setImmediate` on a server). The uses of one tool queued
   * meanwhile are written as one increment. Whoever ends the work (a Lambda invocation, a
   * shutdown) calls `flush()`. Without it every use is written before the call answers.
   */
  readonly schedule?: (flush: () => void) => void;
  /** Where a write the store refused is reported (`usage.write_failed`, with the counts it held). */
  readonly logger?: Logger;
}

/**
 * `ToolUsage` (spec §14.4): cross-session demand per project and role. Successful calls and
 * `tool_description` look-ups are counted apart — look-ups are the more honest signal, since a
 * demoted tool is called less — read back as the triage's demand, and shown per role.
 */
export class ToolUsage {
  /** Demand read per role, with when it was read: triage ranks by it, it need not be exact. */
  /** Bumped whenever a cached demand is dropped: a read that spans a bump does not keep its answer. */
  private demandsForgotten = 0;
  private readonly demands = new LRUCache<
    string,
    { readonly at: number; readonly demand: ReadonlyMap<string, number> }
  >({ max: 4096 });
  private readonly now: () => number;
  private readonly demandTtlMs: number;
  private readonly schedule: ((flush: () => void) => void) | undefined;
  private readonly logger: Logger;
  /** Queued uses by tool key (write-behind only). */
  private pending = new Map<string, PendingUse>();
  private readonly demandReads = new CacheCounters();
  private flushScheduled = false;
  /** Writes started and not yet settled: a flush waits for them too. */
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly state: UsageStore,
    options: ToolUsageOptions = {},
  ) {
    this.now = options.now ?? (() => Date.now());
    this.demandTtlMs = options.demandTtlMs ?? DEFAULT_DEMAND_TTL_MS;
    this.schedule = options.schedule;
    this.logger = options.logger ?? silentLogger;
  }

  /** Counts `calls` (default one) successful calls of `tool` at `at` (epoch milliseconds). */
  async countCall(scope: ToolUsageScope, tool: string, at: number, calls = 1): Promise<void> {
    await this.add({ ...roleOf(scope), tool }, calls, 0, at);
  }

  /** Counts one `tool_description` look-up of `tool` at `at` (epoch milliseconds). */
  async countDiscoveryHit(scope: ToolUsageScope, tool: string, at: number): Promise<void> {
    await this.add({ ...roleOf(scope), tool }, 0, 1, at);
  }

  /**
   * Writes every queued use, and waits for the writes already under way: when it settles, every
   * use counted before the call is stored (or reported lost). Never rejects.
   */
  async flush(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const writes = batch.map((use) => this.write(use));
    await Promise.all([...this.writing, ...writes]);
  }

  private async add(key: ToolUsageKey, calls: number, discoveryHits: number, at: number): Promise<void> {
    this.forgetDemand(roleKey(key));
    if (!this.schedule) {
      await this.state.addToolUsage(key, {
        ...(calls > 0 ? { calls } : {}),
        ...(discoveryHits > 0 ? { discoveryHits } : {}),
        at,
      });
      return;
    }
    const id = `${roleKey(key)}/${key.tool}`;
    const queued = this.pending.get(id);
    if (queued) {
      queued.calls += calls;
      queued.discoveryHits += discoveryHits;
      queued.at = Math.max(queued.at, at);
    } else {
      this.pending.set(id, { key, calls, discoveryHits, at });
    }
    if (this.pending.size >= MAX_PENDING_TOOLS) return this.flush();
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.schedule(() => {
        this.flushScheduled = false;
        void this.flush();
      });
    }
  }

  /** One coalesced increment; a refusal is reported with the counts it held (not retried: it may have landed). */
  private write(use: PendingUse): Promise<void> {
    const written = this.state
      .addToolUsage(use.key, {
        ...(use.calls > 0 ? { calls: use.calls } : {}),
        ...(use.discoveryHits > 0 ? { discoveryHits: use.discoveryHits } : {}),
        at: use.at,
      })
      .catch((error: unknown) => {
        this.logger.warn("usage.write_failed", {
          ...use.key,
          calls: use.calls,
          discoveryHits: use.discoveryHits,
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        this.writing.delete(written);
        // A demand read meanwhile counted this use as queued: the next one reads what is stored.
        this.forgetDemand(roleKey(use.key));
      });
    this.writing.add(written);
    return written;
  }

  /** Whether uses are queued or being written: the insights table flushes first, to show them. */
  private get unwritten(): boolean {
    return this.pending.size > 0 || this.writing.size > 0;
  }

  /**
   * The role's demand per tool: calls plus discovery hits, uses still queued here included. Read
   * at most once per `demandTtlMs` per role and instance (a use counted here reads it again once
   * written; one counted by another instance shows within the time-to-live), so a demoting
   * manifest costs one state-store round, not two. The map is shared: read-only.
   */
  async demand(scope: ToolUsageScope): Promise<ReadonlyMap<string, number>> {
    const key = roleKey(scope);
    const cached = this.demands.get(key);
    if (cached && this.now() - cached.at < this.demandTtlMs) {
      this.demandReads.hits++;
      return cached.demand;
    }
    this.demandReads.misses++;
    const at = this.now();
    const forgotten = this.demandsForgotten;
    const rows = await this.state.listToolUsage(scope.tenant, scope.project, scope.role);
    const demand = new Map(rows.map((row) => [row.tool, row.calls + row.discoveryHits]));
    // Uses still queued count too, without waiting for their write (which then reads it again).
    for (const use of this.pending.values()) {
      if (roleKey(use.key) !== key) continue;
      demand.set(use.key.tool, (demand.get(use.key.tool) ?? 0) + use.calls + use.discoveryHits);
    }
    // A use counted or written while this read ran may be missing from it: answer it, keep nothing.
    if (this.demandTtlMs > 0 && forgotten === this.demandsForgotten) this.demands.set(key, { at, demand });
    return demand;
  }

  /** Drops a role's cached demand, and tells reads under way that what they read may be older. */
  private forgetDemand(role: string): void {
    this.demandsForgotten++;
    this.demands.delete(role);
  }

  /** The demand cache: each role's counters, read once per time-to-live. */
  cacheReports(): Record<string, CacheReport> {
    return { demand: this.demandReads.report(lruExtent(this.demands)) };
  }

  /** Every role's counters in the project, as the insights table shows them. */
  async byRole(tenant: string, project: string): Promise<ToolUsageReport> {
    assertTenantId(tenant);
    assertProjectId(project);
    if (this.unwritten) await this.flush();
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
