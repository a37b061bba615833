import type {
  FireOnceStore,
  GenerationStore,
  LiveProcesses,
  ObservedLimitStore,
  ObservedToolLimit,
  ProcessKey,
  ProcessRecord,
  ProcessStore,
  ProcessWithGenerations,
  QuotaStore,
  StateStore,
  ToolUsageDelta,
  ToolUsageKey,
  ToolUsageRow,
  UsageStore,
} from "@vance/core";

/** The six ports of one store (one DynamoDB table, one SQLite file). */
export interface StatePorts<
  P extends ProcessStore = ProcessStore,
  U extends UsageStore = UsageStore,
  L extends ObservedLimitStore = ObservedLimitStore,
  G extends GenerationStore = GenerationStore,
  F extends FireOnceStore = FireOnceStore,
> {
  readonly processes: P;
  readonly usage: U;
  readonly observedLimits: L;
  readonly generations: G;
  readonly fireOnce: F;
  readonly quotas: QuotaStore;
}

/**
 * The {@link StateStore} over six port objects, for wiring and tests: each method delegates to
 * the port that owns it. The DynamoDB and SQLite stores both extend it, so the delegation is
 * written once.
 */
export class CompositeStateStore<
  P extends ProcessStore = ProcessStore,
  U extends UsageStore = UsageStore,
  L extends ObservedLimitStore = ObservedLimitStore,
  G extends GenerationStore = GenerationStore,
  F extends FireOnceStore = FireOnceStore,
> implements StateStore
{
  readonly processes: P;
  readonly usage: U;
  readonly observedLimits: L;
  readonly generations: G;
  readonly fireOnce: F;
  readonly quotas: QuotaStore;

  constructor(ports: StatePorts<P, U, L, G, F>) {
    this.processes = ports.processes;
    this.usage = ports.usage;
    this.observedLimits = ports.observedLimits;
    this.generations = ports.generations;
    this.fireOnce = ports.fireOnce;
    this.quotas = ports.quotas;
  }

  createProcess(record: ProcessRecord): Promise<boolean> {
    return this.processes.createProcess(record);
  }

  getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    return this.processes.getProcess(key);
  }

  getProcessAndGenerations(key: ProcessKey, markers: readonly string[]): Promise<ProcessWithGenerations> {
    return this.processes.getProcessAndGenerations(key, markers);
  }

  touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    return this.processes.touchActivatedTools(key, names, at);
  }

  deleteProcess(key: ProcessKey, liveAt?: number): Promise<boolean> {
    return this.processes.deleteProcess(key, liveAt);
  }

  touchProcess(key: ProcessKey, expiresAt: number): Promise<boolean> {
    return this.processes.touchProcess(key, expiresAt);
  }

  countLiveProcesses(tenant: string, at: number): Promise<LiveProcesses> {
    return this.processes.countLiveProcesses(tenant, at);
  }

  removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void> {
    return this.processes.removeActivatedTools(key, names);
  }

  addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    return this.usage.addToolUsage(key, delta);
  }

  listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]> {
    return this.usage.listToolUsage(tenant, project, role);
  }

  putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    return this.observedLimits.putObservedToolLimit(limit);
  }

  getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]> {
    return this.observedLimits.getObservedToolLimits(keys);
  }

  listObservedToolLimits(): Promise<ObservedToolLimit[]> {
    return this.observedLimits.listObservedToolLimits();
  }

  deleteObservedToolLimit(key: string): Promise<boolean> {
    return this.observedLimits.deleteObservedToolLimit(key);
  }

  addToQuota(key: string, amount: number, limit: number, expiresAt?: number): Promise<boolean> {
    return this.quotas.addToQuota(key, amount, limit, expiresAt);
  }

  getQuotaUsage(key: string): Promise<number> {
    return this.quotas.getQuotaUsage(key);
  }

  bumpGeneration(marker: string): Promise<number> {
    return this.generations.bumpGeneration(marker);
  }

  getGenerations(markers: readonly string[]): Promise<number[]> {
    return this.generations.getGenerations(markers);
  }

  markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    return this.fireOnce.markOnce(marker, ttlSeconds);
  }
}
