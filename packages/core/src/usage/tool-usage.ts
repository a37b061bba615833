import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import { CountedLru } from "../cache/counted-lru";
import { StoreUnavailableError } from "../errors";
import { assertProjectId, assertTenantId } from "../ids";
import { type Logger, silentLogger } from "../ports/logger";
import { type ToolUsageKey, USAGE_TOKEN_WINDOW_MS, type UsageStore } from "../ports/usage-store";

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

/** Uses of one tool not yet sent: what one coalesced write adds. */
interface PendingUse {
  readonly key: ToolUsageKey;
  calls: number;
  discoveryHits: number;
  at: number;
  /** Counting calls coalesced into it (what a flush waits for). */
  uses: number;
}

/**
 * A coalesced increment on its way to the store. Its token and counts never change until the store
 * acknowledges it, so each resend is the same write and the store applies it at most once.
 */
interface SentUse extends Readonly<PendingUse> {
  readonly token: string;
  /** When it was first sent: resends stay inside the store's token window from here. */
  readonly firstSentAt: number;
  attempts: number;
}

/** Uses of one tool counted and not yet acknowledged or reported lost. */
interface Progress {
  added: number;
  settled: number;
}

/**
 * Distinct tools whose uses may wait unacknowledged at once (queued or being resent): each holds
 * one queued and one sent increment at most, whatever the traffic, so this bounds the memory.
 */
export const MAX_BACKLOG_TOOLS = 10_000;

/**
 * How long an unacknowledged increment is resent with its token: DynamoDB remembers a token for
 * ten minutes after the first request with it completed, and a resend after that could count
 * twice. A minute of margin covers the first request's own duration.
 */
export const DEFAULT_RETRY_WINDOW_MS = USAGE_TOKEN_WINDOW_MS - 60_000;

/**
 * How long the insights table waits for this instance's unacknowledged uses before it reads (less
 * when the store refuses one: then the read would fail too, and answers 503 within its deadline).
 */
const READ_FLUSH_MS = 1_000;

export interface ToolUsageOptions {
  readonly now?: () => number;
  /** 0 reads the counters for every demoting manifest. */
  readonly demandTtlMs?: number;
  /**
   * Write-behind: counting a use only queues it, and `schedule` is asked to run a flush soon —
   * after the answer is on its way (`setImmediate` on a server). The uses of one tool queued
   * meanwhile are written as one increment, which is resent with its token until the store
   * acknowledges it. Whoever ends the work (a Lambda invocation, a shutdown) calls `flush()` or
   * `close()`. Without it every use is written before the call answers.
   */
  readonly schedule?: (flush: () => void) => void;
  /** Runs a resend after `ms` (`setTimeout`, unreferenced on a server); injectable for tests. */
  readonly retryLater?: (resend: () => void, ms: number) => void;
  /** The wait before the `attempt`-th resend (1-based); exponential from 100 ms to 5 s with jitter. */
  readonly retryDelayMs?: (attempt: number) => number;
  /** {@link DEFAULT_RETRY_WINDOW_MS} unless given. */
  readonly retryWindowMs?: number;
  /** {@link MAX_BACKLOG_TOOLS} unless given. */
  readonly maxBacklogTools?: number;
  /** A new idempotency token (32 hex characters unless given). */
  readonly newToken?: () => string;
  /** Where failures are reported: `usage.write_retrying` (will resend), `usage.write_failed` (lost). */
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
  private readonly demands = new CountedLru<
    string,
    { readonly at: number; readonly demand: ReadonlyMap<string, number> }
  >({ max: 4096 });
  private readonly now: () => number;
  private readonly demandTtlMs: number;
  private readonly schedule: ((flush: () => void) => void) | undefined;
  private readonly retryLater: (resend: () => void, ms: number) => void;
  private readonly retryDelayMs: (attempt: number) => number;
  private readonly retryWindowMs: number;
  private readonly maxBacklogTools: number;
  private readonly newToken: () => string;
  private readonly logger: Logger;
  /** Queued uses by tool key, not yet sent (write-behind only). */
  private readonly pending = new Map<string, PendingUse>();
  /** The one increment per tool key that is sent and not yet acknowledged. */
  private readonly sent = new Map<string, SentUse>();
  /** Per tool key with uses unsettled: what a flush waits for, and what the backlog bound counts. */
  private readonly progress = new Map<string, Progress>();
  /** Flushes waiting for a settlement. */
  private waiters: (() => void)[] = [];
  private readonly demandReads = new CacheCounters();
  private flushScheduled = false;
  /** Writes the store refused so far: a flush `untilRefused` stops at the next one. */
  private refusals = 0;

  constructor(
    private readonly state: UsageStore,
    options: ToolUsageOptions = {},
  ) {
    this.now = options.now ?? (() => Date.now());
    this.demandTtlMs = options.demandTtlMs ?? DEFAULT_DEMAND_TTL_MS;
    this.schedule = options.schedule;
    this.retryLater = options.retryLater ?? ((resend, ms) => setTimeout(resend, ms));
    this.retryDelayMs = options.retryDelayMs ?? defaultRetryDelay;
    this.retryWindowMs = options.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS;
    this.maxBacklogTools = options.maxBacklogTools ?? MAX_BACKLOG_TOOLS;
    this.newToken = options.newToken ?? (() => globalThis.crypto.randomUUID().replaceAll("-", ""));
    this.logger = options.logger ?? silentLogger;
  }

  /** Counts `calls` (default one) successful calls of `tool` at `at` (epoch milliseconds). */
  async countCall(scope: ToolUsageScope, tool: string, at: number, calls = 1): Promise<void> {
    await this.add(usageKey(scope, tool), calls, 0, at);
  }

  /** Counts one `tool_description` look-up of `tool` at `at` (epoch milliseconds). */
  async countDiscoveryHit(scope: ToolUsageScope, tool: string, at: number): Promise<void> {
    await this.add(usageKey(scope, tool), 0, 1, at);
  }

  /**
   * Sends every queued use and waits until the uses counted before the call are acknowledged by
   * the store or reported lost — or until `withinMs` passed, or (`untilRefused`) the store refused
   * a write: then what is unacknowledged stays held with its token and is resent later. `true`
   * when nothing counted before it is left unacknowledged. Never rejects.
   */
  async flush(
    options: { readonly withinMs?: number; readonly untilRefused?: boolean } = {},
  ): Promise<boolean> {
    const refusals = this.refusals;
    // Each tool's progress as it is now: uses counted after this call do not hold it up.
    const targets = [...this.progress.values()].map((progress) => [progress, progress.added] as const);
    for (const id of [...this.pending.keys()]) this.send(id);
    const done = () => targets.every(([progress, added]) => progress.settled >= added);
    const withinMs = options.withinMs ?? Number.POSITIVE_INFINITY;
    let timedOut = false;
    const timer =
      withinMs === Number.POSITIVE_INFINITY
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            this.notify();
          }, withinMs);
    try {
      const refused = () => options.untilRefused === true && this.refusals > refusals;
      while (!done() && !timedOut && !refused()) {
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    return done();
  }

  /**
   * For a shutdown: flushes within `withinMs`, then reports every use still unacknowledged as
   * lost (`usage.write_failed`, reason `shutdown`) and stops resending it. `true` when none was.
   */
  async close(withinMs: number): Promise<boolean> {
    if (await this.flush({ withinMs })) return true;
    for (const [id, use] of [...this.sent, ...this.pending]) {
      this.settle(id, use, { reason: "shutdown" });
    }
    return false;
  }

  /** Tool keys whose uses wait unacknowledged (queued or being resent). */
  get backlog(): number {
    return this.progress.size;
  }

  private async add(key: ToolUsageKey, calls: number, discoveryHits: number, at: number): Promise<void> {
    this.forgetDemand(roleKey(key));
    if (!this.schedule) {
      await this.state.addToolUsage(key, {
        ...(calls > 0 ? { calls } : {}),
        ...(discoveryHits > 0 ? { discoveryHits } : {}),
        at,
        token: this.newToken(),
      });
      return;
    }
    const id = `${roleKey(key)}/${key.tool}`;
    let progress = this.progress.get(id);
    if (!progress) {
      if (this.progress.size >= this.maxBacklogTools) {
        // Waiting here would hold the answer for as long as the store is away: the use is lost, loudly.
        this.logger.warn("usage.write_failed", {
          ...key,
          calls,
          discoveryHits,
          reason: "backlog_full",
          error: `${this.progress.size} tools already wait for the store to acknowledge their counts`,
        });
        return;
      }
      progress = { added: 0, settled: 0 };
      this.progress.set(id, progress);
    }
    progress.added++;
    const queued = this.pending.get(id);
    if (queued) {
      queued.calls += calls;
      queued.discoveryHits += discoveryHits;
      queued.at = Math.max(queued.at, at);
      queued.uses++;
    } else {
      this.pending.set(id, { key, calls, discoveryHits, at, uses: 1 });
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.schedule(() => {
        this.flushScheduled = false;
        for (const queuedId of [...this.pending.keys()]) this.send(queuedId);
      });
    }
  }

  /** Gives a tool's queued uses a token and sends them, unless its previous increment is still unacknowledged. */
  private send(id: string): void {
    const use = this.pending.get(id);
    if (!use || this.sent.has(id)) return;
    this.pending.delete(id);
    const sent: SentUse = { ...use, token: this.newToken(), firstSentAt: this.now(), attempts: 0 };
    this.sent.set(id, sent);
    void this.attempt(id, sent);
  }

  /** One send of an increment; a refusal is resent later with the same token, inside the token window. */
  private async attempt(id: string, use: SentUse): Promise<void> {
    if (this.sent.get(id) !== use) return;
    use.attempts++;
    try {
      await this.state.addToolUsage(use.key, {
        ...(use.calls > 0 ? { calls: use.calls } : {}),
        ...(use.discoveryHits > 0 ? { discoveryHits: use.discoveryHits } : {}),
        at: use.at,
        token: use.token,
      });
    } catch (error) {
      if (this.sent.get(id) !== use) return;
      this.refusals++;
      this.notify();
      const delay = this.retryDelayMs(use.attempts);
      const failure = { reason: reasonOf(error), error: messageOf(error) };
      if (this.now() + delay - use.firstSentAt >= this.retryWindowMs) {
        // Past the window the store forgets the token: a resend could count twice, so none is made.
        this.settle(id, use, {
          ...failure,
          reason: "retry_window_passed",
          error: `unacknowledged after ${use.attempts} attempts (last: ${failure.reason}: ${failure.error}); it may have landed`,
        });
        return;
      }
      if (use.attempts === 1) {
        this.logger.warn("usage.write_retrying", {
          ...use.key,
          calls: use.calls,
          discoveryHits: use.discoveryHits,
          ...failure,
        });
      }
      this.retryLater(() => void this.attempt(id, use), delay);
      return;
    }
    if (this.sent.get(id) === use) this.settle(id, use);
  }

  /** An increment acknowledged, or given up with `lost`: the tool's next queued uses go out. */
  private settle(
    id: string,
    use: PendingUse,
    lost?: { readonly reason: string; readonly error?: string },
  ): void {
    if (this.sent.get(id) === use) this.sent.delete(id);
    else if (this.pending.get(id) === use) this.pending.delete(id);
    if (lost) {
      this.logger.warn("usage.write_failed", {
        ...use.key,
        calls: use.calls,
        discoveryHits: use.discoveryHits,
        ...lost,
      });
    }
    const progress = this.progress.get(id);
    if (progress) {
      progress.settled += use.uses;
      if (progress.settled >= progress.added) this.progress.delete(id);
    }
    // A demand read meanwhile counted this use as unwritten: the next one reads what is stored.
    this.forgetDemand(roleKey(use.key));
    if (!lost) this.send(id);
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
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
    // Uses not yet acknowledged count too, without waiting for their write (which then reads it again).
    for (const use of [...this.pending.values(), ...this.sent.values()]) {
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
    if (this.progress.size > 0) await this.flush({ withinMs: READ_FLUSH_MS, untilRefused: true });
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

/** Backoff before the `attempt`-th resend: 100 ms doubling to 5 s, each between half and all of it. */
function defaultRetryDelay(attempt: number): number {
  const ceiling = Math.min(5_000, 100 * 2 ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** A stable word for why a write failed: the error's `code` (`store_unavailable`, …) or its name. */
function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown";
}

/** What went wrong, in words: a store outage's own cause (a timeout, a reset) rather than its answer to clients. */
function messageOf(error: unknown): string {
  if (error instanceof StoreUnavailableError) return `${error.store}: ${error.reason}`;
  return error instanceof Error ? error.message : String(error);
}

function roleKey(scope: ToolUsageScope): string {
  return `${scope.tenant}/${scope.project}/${scope.role}`;
}

/**
 * The key of `tool`'s use in `scope`, only the key's fields (a whole process record may be passed
 * as the scope): one literal, where a spread of the scope's fields then `tool` cost V8 ~0.7 µs a call.
 */
function usageKey(scope: ToolUsageScope, tool: string): ToolUsageKey {
  return { tenant: scope.tenant, project: scope.project, role: scope.role, tool };
}
