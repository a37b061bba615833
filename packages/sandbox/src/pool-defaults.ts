/**
 * The script pool's defaults and its one sharing rule, in a module of their own: the API's
 * configuration checks them at start without loading the sandbox.
 */
import { DEFAULT_CALL_LIMITS } from "@vance/core";

/**
 * The pool's defaults where `ScriptPoolOptions` leave them out (README's "Limits" table is
 * generated from these): per tenant, `runsPerTenantPerCore` runs at once per core and
 * `queuedPerRun` waiting per allowed run, each waiting at most `maxQueueWaitMs`; at most
 * `maxWorkers` threads; a run past its deadline terminated after `graceMs`.
 */
export const POOL_DEFAULTS = Object.freeze({
  runsPerTenantPerCore: 2,
  /** A tenant's share of the threads: `maxWorkers` divided by this. */
  tenantsSharingThreads: 4,
  workerSecondsPerCorePerMinute: 30,
  queuedPerRun: 16,
  maxQueueWaitMs: 10_000,
  maxWorkers: 32,
  graceMs: 250,
});

/**
 * Nice levels the API server's script and task threads run below its serving thread (Linux;
 * `VANCE_WORKER_NICE`), so that the thread answering every tenant (and `/v1/health`) always wins
 * the CPU over scripts and parses. The pools themselves leave their threads' priority alone
 * unless told (`workerNice`): only the host knows whether the thread that made them serves.
 */
export const DEFAULT_WORKER_NICE = 10;

/** Why `nice` cannot be a worker threads' nice offset (a whole number 0..19), or null. */
export function workerNiceProblem(nice: number): string | null {
  return Number.isSafeInteger(nice) && nice >= 0 && nice <= 19
    ? null
    : `must be a whole number from 0 to 19, got ${nice}`;
}

/**
 * Why `threadsPerTenant` cannot be a tenant's share of `maxWorkers` threads, or null: a share is
 * less than all of them (a pool of one thread has nothing to share).
 */
export function tenantShareProblem(threadsPerTenant: number, maxWorkers: number): string | null {
  return maxWorkers > 1 && threadsPerTenant >= maxWorkers
    ? `must be less than the ${maxWorkers} threads: no tenant may hold every thread, got ${threadsPerTenant}`
    : null;
}

/**
 * A tenant's default share of `maxWorkers` threads: a quarter, at least its top-level runs and a
 * chain of nested calls at the call budget's full depth (one thread per level and its root),
 * never all of them (a pool of one thread has nothing to share).
 */
export function defaultTenantShare(maxWorkers: number, maxRunsPerTenant: number): number {
  const share = Math.max(
    maxRunsPerTenant,
    DEFAULT_CALL_LIMITS.maxDepth + 1,
    Math.floor(maxWorkers / POOL_DEFAULTS.tenantsSharingThreads),
  );
  return Math.max(1, Math.min(share, maxWorkers - 1));
}
