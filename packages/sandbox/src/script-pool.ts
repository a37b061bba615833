import { availableParallelism } from "node:os";
import type { Logger } from "@vance/core";
import { TimeAllowance } from "@vance/core/time-allowance";
import type { ScriptOutcome } from "./engine";
import { DEFAULT_LIMITS, resolveLimits, type SandboxLimits } from "./limits";
import { compileQuickJS } from "./module";
import { defaultTenantShare, POOL_DEFAULTS, tenantShareProblem, workerNiceProblem } from "./pool-defaults";
import { type CallTool, ScriptWorker, type WorkerSpawn } from "./script-thread-handle";
import { isRefused, type SlotRefusal, TenantSlots } from "./slots";
import { reportPriority } from "./worker-thread";

/** One script invocation. */
export interface ScriptRequest {
  /** Script body; the value of its last expression is the result. */
  source: string;
  /** JSON values bound as top-level variables before the script runs; `undefined` binds `undefined`. */
  inputs: Record<string, unknown>;
  /** Wall-clock deadline for the run, including time spent in sibling tool calls. */
  timeoutMs: number;
  /** Present: `vance.tools.call(name, params)` reaches this, synchronously from the script's view. */
  callTool?: CallTool;
  /** Overrides the pool's default limits for this run. */
  limits?: Partial<SandboxLimits>;
  /** Whose run this is: each tenant has its own share of concurrent runs and queue. */
  tenant?: string;
  /**
   * A sibling call's run: it runs under its root's slot, takes a thread of its tenant's share
   * without waiting (its ancestors hold threads of that share), and answers `Busy` when none is free.
   */
  nested?: boolean;
  /**
   * Aborts when the caller ended: the run stops at its next interrupt check and answers
   * `Cancelled`, its thread kept for the next run (terminated only if it ignores the check for `graceMs`).
   */
  signal?: AbortSignal;
  /**
   * The outcome says how far the run got: its `console` lines (`LOG_LIMITS`) and its sibling
   * calls. Without it `console` does nothing.
   */
  report?: boolean;
  /** Most characters of the result's JSON; a longer result fails with `ResultTooLarge`. */
  maxResultChars?: number;
}

/** Options of {@link ScriptPool.create}. */
export interface ScriptPoolOptions {
  /**
   * Default limits of every run. `memoryBytes` also sizes the WebAssembly memory of every
   * worker's module, so a run may lower it but not raise it.
   */
  limits?: Partial<SandboxLimits>;
  /** Threads kept started and idle, so a run never waits for one to boot (~35 ms). Default: the cores. */
  warmWorkers?: number;
  /** Most threads at once, across tenants; sibling calls need their own. Default 32. */
  maxWorkers?: number;
  /**
   * Most concurrent top-level runs one tenant starts (sibling calls' runs run under their root's).
   * Default 2 × the cores.
   */
  maxRunsPerTenant?: number;
  /**
   * Most threads one tenant holds at once, its sibling calls' runs included: its share of the
   * pool, less than all of it (when the pool has more than one thread). Default a quarter of
   * `maxWorkers`, at least `maxRunsPerTenant` and a chain at the full call depth (9).
   */
  maxThreadsPerTenant?: number;
  /**
   * Seconds of worker time (a thread running a tenant's script, not waiting for its sibling
   * calls) one tenant may spend per minute; beyond, its runs answer `RateLimited` until the
   * allowance refilled. Default 30 × the cores: half the machine, on average.
   */
  workerSecondsPerMinute?: number;
  /** Most runs of one tenant waiting for a slot; beyond, `Busy`. Default 16 × `maxRunsPerTenant`. */
  maxQueuedPerTenant?: number;
  /** Longest wait for a slot before a run answers `Busy` (shorter when its deadline is). Default 10 s. */
  maxQueueWaitMs?: number;
  /** How long past its deadline or its cancel a run that ignores interrupts may go on before its thread is terminated. Default 250 ms. */
  graceMs?: number;
  /** The worker script (the built `dist/script-worker.mjs` by default). */
  workerUrl?: URL;
  /** QuickJS's `.wasm` file (the installed package's by default; a function bundle ships its own copy). */
  wasmFile?: string;
  /**
   * Whether a thread keeps one QuickJS context for run after run, its memory restored after each
   * (snapshot.ts), rather than making a runtime and context per run. Default true; false is there
   * to measure the difference.
   */
  reuseContexts?: boolean;
  /**
   * Nice levels each script thread lowers its own CPU priority by (Linux), so that the serving
   * thread wins the CPU over scripts. Default 0: left as it is (the API server: `DEFAULT_WORKER_NICE`).
   */
  workerNice?: number;
  /** Where a thread that could not lower its priority is reported (once per process). */
  logger?: Logger;
}

/** Counters for tests, benchmarks and diagnostics. */
export interface ScriptPoolStats {
  /**
   * Threads now idle, running, starting; started and terminated since the pool was made, and of
   * those terminated the idle ones `retired` above `warmWorkers`. The rest were ended mid-run: a
   * run that ignored its deadline or its cancel for `graceMs` (a regex), or a thread that failed.
   */
  workers: {
    idle: number;
    busy: number;
    starting: number;
    started: number;
    terminated: number;
    retired: number;
  };
  runs: number;
  busy: number;
  /** Runs refused because their tenant had spent its worker time. */
  rateLimited: number;
  queued: number;
}

/** The built worker bundle: `npm run build:worker` (run before start, test and bench) writes it. */
export const DEFAULT_WORKER_URL = new URL("../dist/script-worker.mjs", import.meta.url);

/** Input names that cannot become top-level variables: the host object, and the prototype setter. */
const RESERVED_INPUTS = new Set(["vance", "__proto__"]);

export { POOL_DEFAULTS } from "./pool-defaults";

/** Settings that must be at least 1 (the others at least 0). */
const LEAST_ONE: ReadonlySet<string> = new Set([
  "maxWorkers",
  "maxRunsPerTenant",
  "maxThreadsPerTenant",
  "workerSecondsPerMinute",
]);

/** Idle threads above `warmWorkers` are stopped after this long, giving their memory back. */
const IDLE_RETIRE_MS = 30_000;

/**
 * Runs `scripted` tools in QuickJS on a pool of worker threads: each run in a context as it was
 * made (one kept per thread, its memory restored after every run), no I/O, no timers, memory, stack, statement and wall-clock limits. The thread that calls
 * `run` never executes guest code; a run past its deadline or cancelled stops at its next interrupt
 * check and its thread serves the next run, and one that ignores the check (a regex) for `graceMs`
 * is ended by terminating its thread. Each tenant starts at most `maxRunsPerTenant` runs at once and has a bounded queue;
 * sibling calls' runs never queue (their caller holds a thread) and answer `Busy` when no thread is free.
 */
export class ScriptPool {
  private readonly idle: ScriptWorker[] = [];
  private readonly slots: TenantSlots;
  private readonly workerTime: TimeAllowance;
  private starting = 0;
  private busyWorkers = 0;
  private readonly counters = { started: 0, terminated: 0, retired: 0, runs: 0, busy: 0, rateLimited: 0 };
  private retireTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  private constructor(
    private readonly defaults: SandboxLimits,
    private readonly settings: Required<
      Omit<ScriptPoolOptions, "limits" | "workerUrl" | "wasmFile" | "reuseContexts" | "workerNice" | "logger">
    >,
    private readonly spawn: WorkerSpawn,
    private readonly logger: Logger | undefined,
  ) {
    this.slots = new TenantSlots({
      runsPerTenant: settings.maxRunsPerTenant,
      queuedPerTenant: settings.maxQueuedPerTenant,
      threadsPerTenant: settings.maxThreadsPerTenant,
      maxThreads: settings.maxWorkers,
      pool: "the sandbox",
    });
    this.workerTime = new TimeAllowance(settings.workerSecondsPerMinute * 1000, 60_000);
  }

  /** Compiles QuickJS and starts the warm threads, so that the first run does not pay for it. */
  static async create(options: ScriptPoolOptions = {}): Promise<ScriptPool> {
    const cores = availableParallelism();
    const maxRunsPerTenant = options.maxRunsPerTenant ?? POOL_DEFAULTS.runsPerTenantPerCore * cores;
    const maxWorkers = options.maxWorkers ?? POOL_DEFAULTS.maxWorkers;
    const settings = {
      warmWorkers: options.warmWorkers ?? cores,
      maxRunsPerTenant,
      maxThreadsPerTenant: options.maxThreadsPerTenant ?? defaultTenantShare(maxWorkers, maxRunsPerTenant),
      workerSecondsPerMinute:
        options.workerSecondsPerMinute ?? POOL_DEFAULTS.workerSecondsPerCorePerMinute * cores,
      maxWorkers,
      maxQueuedPerTenant: options.maxQueuedPerTenant ?? POOL_DEFAULTS.queuedPerRun * maxRunsPerTenant,
      graceMs: options.graceMs ?? POOL_DEFAULTS.graceMs,
      maxQueueWaitMs: options.maxQueueWaitMs ?? POOL_DEFAULTS.maxQueueWaitMs,
    };
    for (const [name, value] of Object.entries(settings)) {
      const least = LEAST_ONE.has(name) ? 1 : 0;
      if (!Number.isSafeInteger(value) || value < least) {
        throw new RangeError(`${name} must be an integer of at least ${least}, got ${value}`);
      }
    }
    const unshared = tenantShareProblem(settings.maxThreadsPerTenant, settings.maxWorkers);
    if (unshared) throw new RangeError(`maxThreadsPerTenant ${unshared}`);
    const nice = options.workerNice ?? 0;
    const unniced = workerNiceProblem(nice);
    if (unniced) throw new RangeError(`workerNice ${unniced}`);
    const defaults = resolveLimits(DEFAULT_LIMITS, options.limits);
    const pool = new ScriptPool(
      defaults,
      settings,
      {
        url: options.workerUrl ?? DEFAULT_WORKER_URL,
        quickjs: await compileQuickJS(options.wasmFile).then((quickjs) =>
          options.reuseContexts === false ? { module: quickjs.module, layout: null } : quickjs,
        ),
        memoryBytes: defaults.memoryBytes,
        resourceLimits: {
          // The script's heap lives in WebAssembly memory, outside V8's heap; the thread's own
          // JavaScript (the engine glue) needs little.
          maxOldGenerationSizeMb: 64,
          // Room for QuickJS's interpreter frames on the thread's native stack above its own limit.
          stackSizeMb: Math.max(4, Math.ceil((defaults.maxStackBytes * 8) / (1024 * 1024))),
        },
        nice,
      },
      options.logger,
    );
    const warm = await Promise.all(
      Array.from({ length: Math.min(settings.warmWorkers, settings.maxWorkers) }, () => pool.startWorker()),
    );
    pool.idle.push(...warm);
    return pool;
  }

  /**
   * Runs one script. Script failures are outcomes, and so are `Busy` (no slot for this tenant,
   * or its queue is full) and `Cancelled` (`signal` aborted); it throws only on misuse (invalid
   * limits or timeout, a closed pool).
   *
   * @example
   * await pool.run({ source: "a + b", inputs: { a: 1, b: 2 }, timeoutMs: 1000 }); // { ok: true, value: 3 }
   */
  async run(request: ScriptRequest): Promise<ScriptOutcome> {
    if (this.closed) throw new Error("ScriptPool is closed");
    if (!(request.timeoutMs > 0) || !Number.isFinite(request.timeoutMs)) {
      throw new RangeError(`timeoutMs must be a positive finite number, got ${request.timeoutMs}`);
    }
    const limits = resolveLimits(this.defaults, request.limits);
    for (const limit of ["memoryBytes", "maxStackBytes"] as const) {
      if (limits[limit] > this.defaults[limit]) {
        throw new RangeError(
          `${limit} ${limits[limit]} exceeds the pool's ${this.defaults[limit]}, which sizes its threads`,
        );
      }
    }
    const reserved = Object.keys(request.inputs).find((name) => RESERVED_INPUTS.has(name));
    if (reserved !== undefined) {
      return { ok: false, error: "InputError", message: `input name "${reserved}" is reserved` };
    }
    const tenant = request.tenant ?? "";
    const waitMs = this.workerTime.waitMs(tenant);
    if (waitMs > 0) return this.rateLimited(tenant, waitMs);
    const slot = {
      wait: request.nested !== true,
      // A run that cannot start before its deadline would only time out: it is refused then.
      waitMs: Math.min(this.settings.maxQueueWaitMs, request.timeoutMs),
      signal: request.signal,
      nested: request.nested === true,
    };
    const ran = await this.slots.run(tenant, slot, () => this.runOnWorker(request, limits, tenant));
    return isRefused(ran) ? this.refused(ran.refused, ran.whose) : ran;
  }

  /** Terminates every thread; later `run` calls throw. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retireTimer);
    for (const worker of this.idle.splice(0)) worker.terminate();
  }

  /** Counters for tests, benchmarks and diagnostics. */
  stats(): ScriptPoolStats {
    const queued = this.slots.queued();
    return {
      workers: {
        idle: this.idle.length,
        busy: this.busyWorkers,
        starting: this.starting,
        started: this.counters.started,
        terminated: this.counters.terminated,
        retired: this.counters.retired,
      },
      runs: this.counters.runs,
      busy: this.counters.busy,
      rateLimited: this.counters.rateLimited,
      queued,
    };
  }

  /** Threads `tenant` holds now, its nested runs included. */
  threadsOf(tenant: string): number {
    return this.slots.held(tenant);
  }

  private async runOnWorker(
    request: ScriptRequest,
    limits: SandboxLimits,
    tenant: string,
  ): Promise<ScriptOutcome> {
    // The thread idle the shortest time first: its memory and code are still in the CPU's caches
    // (in the pool alone, with 10 runs in flight, ~15–30% less CPU a run than taking the longest
    // idle). One that just answered may still be restoring its context: the run starts once it
    // has (~10 µs). The longest idle are the ones retired (`scheduleRetire`).
    let worker = this.idle.pop();
    while (worker && !worker.alive) worker = this.idle.pop();
    worker ??= await this.startWorker();
    // Counted busy before topping up: the spares started never make more than `maxWorkers`.
    this.busyWorkers += 1;
    this.topUp();
    this.counters.runs += 1;
    let reusable = false;
    try {
      const ran = await worker.run({
        message: {
          kind: "run",
          source: request.source,
          inputs: request.inputs,
          timeoutMs: request.timeoutMs,
          limits,
          canCall: request.callTool !== undefined,
          report: request.report === true,
          maxResultChars: request.maxResultChars,
        },
        callTool: request.callTool,
        signal: request.signal,
        graceMs: this.settings.graceMs,
      });
      reusable = ran.reusable && worker.alive;
      this.workerTime.charge(tenant, ran.activeMs);
      return ran.outcome;
    } finally {
      this.busyWorkers -= 1;
      if (reusable && !this.closed) {
        this.idle.push(worker);
        this.scheduleRetire();
      } else {
        worker.terminate();
        this.counters.terminated += 1;
        this.topUp();
      }
    }
  }

  private rateLimited(tenant: string, waitMs: number): ScriptOutcome {
    this.counters.rateLimited += 1;
    const { allowanceMs } = this.workerTime;
    return {
      ok: false,
      error: "RateLimited",
      message: `tenant '${tenant}' spent its ${allowanceMs / 1000} s of script time per minute; try again in ${Math.ceil(waitMs / 1000)} s`,
      retryAfterMs: waitMs,
    };
  }

  private refused(reason: SlotRefusal, whose: string): ScriptOutcome {
    if (reason === "cancelled") {
      return { ok: false, error: "Cancelled", message: "the caller ended before the script started" };
    }
    this.counters.busy += 1;
    return {
      ok: false,
      error: "Busy",
      message: `${whose} has too many scripts running; try again shortly`,
    };
  }

  private async startWorker(): Promise<ScriptWorker> {
    this.starting += 1;
    try {
      const worker = await ScriptWorker.start(this.spawn);
      reportPriority(worker.priority, this.logger);
      this.counters.started += 1;
      return worker;
    } finally {
      this.starting -= 1;
    }
  }

  /** Starts threads in the background until `warmWorkers` are idle or starting. */
  private topUp(): void {
    const room = this.settings.maxWorkers - this.busyWorkers - this.idle.length - this.starting;
    const missing = Math.min(room, this.settings.warmWorkers - this.idle.length - this.starting);
    for (let i = 0; i < missing && !this.closed; i++) {
      this.startWorker().then(
        (worker) => {
          if (this.closed) worker.terminate();
          else this.idle.push(worker);
        },
        () => undefined,
      );
    }
  }

  private scheduleRetire(): void {
    if (this.retireTimer || this.idle.length <= this.settings.warmWorkers) return;
    this.retireTimer = setTimeout(() => {
      this.retireTimer = undefined;
      while (this.idle.length > this.settings.warmWorkers) {
        this.idle.shift()?.terminate();
        this.counters.terminated += 1;
        this.counters.retired += 1;
      }
    }, IDLE_RETIRE_MS);
    this.retireTimer.unref();
  }
}
