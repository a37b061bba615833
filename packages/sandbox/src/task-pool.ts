import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { Logger } from "@vance/core";
import { workerNiceProblem } from "./pool-defaults";
import { isRefused, type SlotRefusal, TenantSlots } from "./slots";
import type { ThreadPriority } from "./thread-priority";
import { reportPriority, WorkerThread } from "./worker-thread";

/**
 * What a task worker answers: the handler's value (a plain value: it crosses threads by
 * structured clone), or why there is none.
 */
export type TaskOutcome =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      /** `TaskError` (the handler threw: its message), `TimeoutError`, `Busy`, `Cancelled`, `WorkerError`. */
      readonly error: string;
      readonly message: string;
    };

/** Main thread → task worker. */
export interface TaskMessage {
  readonly task: string;
  readonly input: unknown;
}

/** What a task worker is started with (its `workerData`). */
export interface TaskWorkerData {
  /** Nice levels the thread lowers its own CPU priority by before it takes a task (0: none). */
  readonly nice: number;
}

/** Task worker → main thread. */
export type TaskWorkerMessage =
  | { readonly kind: "ready"; readonly priority: ThreadPriority }
  | { readonly kind: "done"; readonly outcome: TaskOutcome };

/** One task for {@link TaskPool.run}. */
export interface TaskRequest {
  /** The handler's name in the worker (see `serveTasks`). */
  readonly task: string;
  readonly input: unknown;
  /** Whose task: each tenant has its own share of threads and queue. */
  readonly tenant: string;
  /** The task's deadline; at it, its thread is terminated. The pool's `timeoutMs` by default. */
  readonly timeoutMs?: number;
  /** The caller ended: the task is stopped at once (its thread terminated) and answers `Cancelled`. */
  readonly signal?: AbortSignal;
}

/** Options of {@link TaskPool.create}. */
export interface TaskPoolOptions {
  /** The worker script: a bundle that calls `serveTasks` with its handlers. */
  readonly workerUrl: URL;
  /** What the pool's `Busy` and `TimeoutError` messages call its work ("parsing the OpenAPI document"). */
  readonly what?: string;
  /** Threads kept started and idle. Default 1. */
  readonly warmWorkers?: number;
  /** Most threads at once, across tenants. Default: the cores. */
  readonly maxWorkers?: number;
  /** Most tasks one tenant runs at once. Default 1: a tenant's flood waits for its own thread. */
  readonly maxRunsPerTenant?: number;
  /** Most of one tenant's tasks waiting; beyond, `Busy` at once. Default 8. */
  readonly maxQueuedPerTenant?: number;
  /** Longest wait for a slot before `Busy`. Default 10 s. */
  readonly maxQueueWaitMs?: number;
  /** A task's deadline unless it names its own. Default 10 s. */
  readonly timeoutMs?: number;
  /** V8 heap of each thread, MiB. Default 256. */
  readonly maxHeapMb?: number;
  /**
   * Nice levels each thread lowers its own CPU priority by (Linux), so that the serving thread
   * wins the CPU over tasks. Default 0: left as it is (the API server: `DEFAULT_WORKER_NICE`).
   */
  readonly workerNice?: number;
  /** Where a thread that could not lower its priority is reported (once per process). */
  readonly logger?: Logger;
}

/** Counters for tests and diagnostics. */
export interface TaskPoolStats {
  readonly runs: number;
  readonly busy: number;
  readonly timedOut: number;
  readonly started: number;
  readonly terminated: number;
}

/** One worker thread that runs one task at a time. */
class TaskWorker extends WorkerThread<TaskWorkerMessage> {
  static async start(url: URL, maxHeapMb: number, nice: number): Promise<TaskWorker> {
    const workerData: TaskWorkerData = { nice };
    const worker = new TaskWorker(
      new Worker(url, {
        workerData,
        resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
        // The host's flags (a test runner's loaders, --inspect) have no business in a worker.
        execArgv: [],
        env: {},
      }),
      "the worker thread",
    );
    worker.priority = await worker.ready();
    return worker;
  }

  /** The nice value the thread runs at, and why it could not lower it. */
  priority: ThreadPriority | undefined;

  /** Runs one task; at the deadline or when `signal` aborts the thread is terminated. Never rejects. */
  run(
    message: TaskMessage,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    timedOut: () => TaskOutcome,
  ): Promise<{ outcome: TaskOutcome; reusable: boolean }> {
    return new Promise((resolve) => {
      const finish = (outcome: TaskOutcome, reusable: boolean) => {
        this.onMessage = undefined;
        this.onExit = undefined;
        clearTimeout(deadline);
        signal?.removeEventListener("abort", onCancel);
        if (!reusable) this.terminate();
        resolve({ outcome, reusable });
      };
      const onCancel = () =>
        finish(
          { ok: false, error: "Cancelled", message: "the caller ended before the task finished" },
          false,
        );
      // The timer keeps the process alive while the (unreferenced) thread works.
      const deadline = setTimeout(() => finish(timedOut(), false), timeoutMs);
      this.onMessage = (received) => {
        if (received.kind === "done") finish(received.outcome, true);
      };
      this.onExit = (reason) => finish({ ok: false, error: "WorkerError", message: reason }, false);
      signal?.addEventListener("abort", onCancel, { once: true });
      this.thread.postMessage(message);
    });
  }
}

/**
 * Runs untrusted parse and compile work (an OpenAPI document, say) on worker threads, so that
 * its cost — whatever the document's size or shape — never holds the thread that serves
 * requests: a task that overstays its deadline has its thread terminated and replaced, each
 * tenant runs at most `maxRunsPerTenant` tasks at once with a bounded queue, and a full queue
 * answers `Busy` at once. The same rules as the script pool, for work that is not a script.
 */
export class TaskPool {
  private readonly idle: TaskWorker[] = [];
  private readonly slots: TenantSlots;
  private starting = 0;
  private readonly counters = { runs: 0, busy: 0, timedOut: 0, started: 0, terminated: 0 };
  private closed = false;

  private constructor(
    private readonly settings: Required<Omit<TaskPoolOptions, "logger">> & {
      readonly logger: Logger | undefined;
    },
  ) {
    this.slots = new TenantSlots({
      runsPerTenant: settings.maxRunsPerTenant,
      queuedPerTenant: settings.maxQueuedPerTenant,
      maxThreads: settings.maxWorkers,
      pool: "this instance",
    });
  }

  /** Starts the warm threads, so that the first task does not wait for one to boot. */
  static async create(options: TaskPoolOptions): Promise<TaskPool> {
    const settings = {
      what: "the task",
      warmWorkers: 1,
      maxWorkers: availableParallelism(),
      maxRunsPerTenant: 1,
      maxQueuedPerTenant: 8,
      maxQueueWaitMs: 10_000,
      timeoutMs: 10_000,
      maxHeapMb: 256,
      workerNice: 0,
      logger: undefined,
      ...options,
    };
    for (const name of ["maxWorkers", "maxRunsPerTenant", "timeoutMs", "maxHeapMb"] as const) {
      const value = settings[name];
      if (!Number.isSafeInteger(value) || value < 1) {
        throw new RangeError(`${name} must be an integer of at least 1, got ${value}`);
      }
    }
    const unniced = workerNiceProblem(settings.workerNice);
    if (unniced) throw new RangeError(`workerNice ${unniced}`);
    const pool = new TaskPool(settings);
    const warm = await Promise.all(
      Array.from({ length: Math.min(settings.warmWorkers, settings.maxWorkers) }, () => pool.startWorker()),
    );
    pool.idle.push(...warm);
    return pool;
  }

  /** Runs one task. Every failure is an outcome; it throws only once the pool is closed. */
  async run(request: TaskRequest): Promise<TaskOutcome> {
    if (this.closed) throw new Error("TaskPool is closed");
    const timeoutMs = request.timeoutMs ?? this.settings.timeoutMs;
    const slot = { wait: true, waitMs: this.settings.maxQueueWaitMs, signal: request.signal };
    const ran = await this.slots.run(request.tenant, slot, () => this.runOnWorker(request, timeoutMs));
    return isRefused(ran) ? this.refused(ran.refused, ran.whose) : ran;
  }

  /** Terminates every thread; later `run` calls throw. */
  close(): void {
    this.closed = true;
    for (const worker of this.idle.splice(0)) worker.terminate();
  }

  stats(): TaskPoolStats {
    return { ...this.counters };
  }

  private async runOnWorker(request: TaskRequest, timeoutMs: number): Promise<TaskOutcome> {
    let worker = this.idle.shift();
    while (worker && !worker.alive) worker = this.idle.shift();
    try {
      worker ??= await this.startWorker();
    } catch (error) {
      return {
        ok: false,
        error: "WorkerError",
        message: error instanceof Error ? error.message : String(error),
      };
    }
    this.counters.runs += 1;
    const timedOut = (): TaskOutcome => {
      this.counters.timedOut += 1;
      return {
        ok: false,
        error: "TimeoutError",
        message: `${this.settings.what} did not finish within ${timeoutMs} ms, so it was stopped`,
      };
    };
    const { outcome, reusable } = await worker.run(
      { task: request.task, input: request.input },
      timeoutMs,
      request.signal,
      timedOut,
    );
    if (reusable && worker.alive && !this.closed) {
      this.idle.push(worker);
    } else {
      worker.terminate();
      this.counters.terminated += 1;
      this.topUp();
    }
    return outcome;
  }

  private refused(reason: SlotRefusal, whose: string): TaskOutcome {
    if (reason === "cancelled") {
      return { ok: false, error: "Cancelled", message: "the caller ended before the task started" };
    }
    this.counters.busy += 1;
    return {
      ok: false,
      error: "Busy",
      message: `${whose} has too much of ${this.settings.what} under way; try again shortly`,
    };
  }

  private async startWorker(): Promise<TaskWorker> {
    this.starting += 1;
    try {
      const { workerUrl, maxHeapMb, workerNice, logger } = this.settings;
      const worker = await TaskWorker.start(workerUrl, maxHeapMb, workerNice);
      reportPriority(worker.priority, logger);
      this.counters.started += 1;
      return worker;
    } finally {
      this.starting -= 1;
    }
  }

  /** Replaces a terminated thread in the background, up to `warmWorkers` idle. */
  private topUp(): void {
    if (this.closed || this.idle.length + this.starting >= this.settings.warmWorkers) return;
    this.startWorker().then(
      (worker) => {
        if (this.closed) worker.terminate();
        else this.idle.push(worker);
      },
      () => undefined,
    );
  }
}
