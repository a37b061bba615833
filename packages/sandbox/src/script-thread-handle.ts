/**
 * The serving thread's handle on one script thread (`script-thread.ts` is the code that runs on it):
 * starts it, hands it runs, answers its sibling calls, cancels a run whose caller ended, and
 * terminates it when a run overstays its deadline or its cancellation by a grace.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import { cancelledOutcome, type ScriptOutcome, type ToolCallOutcome, timeoutOutcome } from "./engine";
import { LogTail } from "./log-tail";
import type { CompiledQuickJS } from "./module";
import {
  ANSWER_SLOT,
  ANSWERED,
  type AnswerMessage,
  CANCEL_SLOT,
  CANCELLED,
  JOBS_SLOT,
  type RunMessage,
  SIGNAL_BYTES,
  type WorkerInit,
  type WorkerMessage,
} from "./protocol";
import type { ThreadPriority } from "./thread-priority";
import { WorkerThread } from "./worker-thread";

/** Host side of `vance.tools.call`; `signal` aborts when the calling run ends. */
export type CallTool = (name: string, params: unknown, signal: AbortSignal) => Promise<ToolCallOutcome>;

/** One run handed to a worker. */
export interface WorkerRun {
  readonly message: RunMessage;
  readonly callTool: CallTool | undefined;
  /**
   * The caller ended: the run stops at its next interrupt check and the thread is kept (its host
   * call in flight answered `Cancelled` at once); one still running `graceMs` later is terminated.
   */
  readonly signal: AbortSignal | undefined;
  /** How long after the deadline or a cancel a run that ignores interrupts is stopped by terminating its thread. */
  readonly graceMs: number;
}

/** Options for starting a worker thread. */
export interface WorkerSpawn {
  readonly url: URL;
  readonly quickjs: CompiledQuickJS;
  readonly memoryBytes: number;
  readonly resourceLimits: { maxOldGenerationSizeMb: number; stackSizeMb: number };
  /** Nice levels the thread lowers its own CPU priority by (0: none). */
  readonly nice: number;
}

/**
 * One worker thread with its QuickJS module, the channel that answers host calls, and the
 * shared flag the thread sleeps on meanwhile. It runs one script at a time.
 */
export class ScriptWorker extends WorkerThread<WorkerMessage> {
  private readonly answers: MessagePort;
  private readonly jobs: MessagePort;
  private readonly flag: Int32Array;
  /**
   * Aborts the host calls of the current run. Kept across runs until used: making an
   * AbortController per run costs about as much as the run of `a + b` (measured here).
   */
  private calls = new AbortController();

  private constructor(
    spawn: WorkerSpawn,
    channel: MessageChannel,
    jobs: MessageChannel,
    signal: SharedArrayBuffer,
  ) {
    const init: WorkerInit = {
      quickjs: spawn.quickjs,
      memoryBytes: spawn.memoryBytes,
      answers: channel.port2,
      jobs: jobs.port2,
      signal,
      nice: spawn.nice,
    };
    super(
      new Worker(spawn.url, {
        workerData: init,
        transferList: [channel.port2, jobs.port2],
        resourceLimits: spawn.resourceLimits,
        // The host's flags (a test runner's loaders, --inspect) have no business in a sandbox thread.
        execArgv: [],
        env: {},
      }),
      "the sandbox thread",
    );
    this.flag = new Int32Array(signal);
    this.answers = channel.port1;
    this.jobs = jobs.port1;
  }

  /** Starts a thread and resolves once its QuickJS module is loaded. */
  static async start(spawn: WorkerSpawn): Promise<ScriptWorker> {
    const worker = new ScriptWorker(
      spawn,
      new MessageChannel(),
      new MessageChannel(),
      new SharedArrayBuffer(SIGNAL_BYTES),
    );
    worker.priority = await worker.ready();
    return worker;
  }

  /** The nice value the thread runs at, and why it could not lower it. */
  priority: ThreadPriority | undefined;

  /**
   * Runs one script. At the deadline its host calls are aborted and answered with a timeout, so
   * the script ends at its next interrupt check; if it is still running `graceMs` later (QuickJS's
   * regex engine never checks), the thread is terminated. A cancel (`signal`) does the same at
   * once, through the shared cancel word: the run answers `Cancelled` when its thread stopped it,
   * and the thread serves the next run. Never rejects.
   */
  run(run: WorkerRun): Promise<RunResult> {
    return new Promise((resolve) => {
      const current = new RunInFlight(this, run, resolve);
      this.current = current;
      this.onMessage = this.forward;
      this.onExit = this.exited;
      run.signal?.addEventListener("abort", current, { once: true });
      // The deadline timer keeps the process alive while the (unreferenced) thread runs. The
      // thread sleeps on the count of runs, not in its event loop: waking it is one notify.
      // The thread answered the previous run before this one is posted: the word is that run's.
      Atomics.store(this.flag, CANCEL_SLOT, 0);
      this.jobs.postMessage(run.message);
      Atomics.add(this.flag, JOBS_SLOT, 1);
      Atomics.notify(this.flag, JOBS_SLOT);
    });
  }

  /** The run in flight, which the thread's messages and its end go to. */
  private current: RunInFlight | undefined;

  /**
   * The thread's messages and end, handed to the run in flight: made once per thread (bound
   * methods), not as closures per run — the bundles' `keepNames` renames every named closure with
   * `Object.defineProperty`, and a run made seven.
   */
  private readonly forward = (received: WorkerMessage): void => this.current?.received(received);
  private readonly exited = (reason: string): void =>
    this.current?.finish({ ok: false, error: "SandboxError", message: reason }, false);

  /** Ends `run`'s hold on the thread: its messages and end go nowhere until the next run. */
  released(run: RunInFlight): void {
    if (this.current !== run) return;
    this.current = undefined;
    this.onMessage = undefined;
    this.onExit = undefined;
  }

  /** Answers the thread's pending host call (it sleeps on the answer word meanwhile). */
  answerCall(reply: AnswerMessage): void {
    this.answers.postMessage(reply);
    Atomics.store(this.flag, ANSWER_SLOT, ANSWERED);
    Atomics.notify(this.flag, ANSWER_SLOT);
  }

  /** Tells the thread, through the shared cancel word, that its run was cancelled. */
  cancelWord(): void {
    Atomics.store(this.flag, CANCEL_SLOT, CANCELLED);
  }

  /** The signal the current run's host calls get. */
  get callSignal(): AbortSignal {
    return this.calls.signal;
  }

  /** Aborts the host calls in flight with `reason`; later calls get a fresh signal. */
  abortCalls(reason: Error): void {
    this.calls.abort(reason);
    this.calls = new AbortController();
  }
}

/** What a run answers: its outcome, whether its thread may serve again, and its own time on the thread. */
export interface RunResult {
  readonly outcome: ScriptOutcome;
  readonly reusable: boolean;
  readonly activeMs: number;
}

/**
 * One run on a {@link ScriptWorker}, from its post to its answer: the deadline, a cancel by the
 * caller (it is the signal's listener), the host calls the script makes and the answer. Its
 * handlers are methods, not closures made per run (see `ScriptWorker.forward`).
 */
class RunInFlight implements EventListenerObject {
  private readonly started = performance.now();
  /**
   * The thread's own time is the run's less its waits for sibling calls (they run elsewhere and
   * are charged there): what a tenant's worker time counts.
   */
  private waitedMs = 0;
  private callSince = 0;
  private pendingCall = 0;
  private callCount = 0;
  private grace: ReturnType<typeof setTimeout> | undefined;
  /**
   * How far the run got, for an outcome that says so (a deadline mid-call): the calls the host
   * answered, the one it was still working on, and the lines the thread printed.
   */
  private completed = 0;
  private running: string | undefined;
  private readonly tail: LogTail | undefined;
  private ended = false;
  /** Set once the caller ended: the outcome is `Cancelled`, whatever the thread answers. */
  private cancelled = false;
  private readonly deadline: ReturnType<typeof setTimeout>;

  constructor(
    private readonly worker: ScriptWorker,
    private readonly run: WorkerRun,
    private readonly resolve: (result: RunResult) => void,
  ) {
    this.tail = run.message.report ? new LogTail() : undefined;
    this.deadline = setTimeout(deadlinePassed, run.message.timeoutMs, this);
  }

  /** The caller's signal aborted: the run is cancelled. */
  handleEvent(): void {
    if (this.ended || this.cancelled) return;
    this.cancelled = true;
    const stopped = cancelledOutcome();
    // Read by the run's next interrupt check; a host call it waits on is answered at once, and
    // so is any later one (`final`): the run ends on its thread, which is kept.
    this.worker.cancelWord();
    if (this.pendingCall) {
      this.worker.abortCalls(new Error(stopped.message));
      this.answer(this.pendingCall, refusedCall());
    }
    clearTimeout(this.deadline);
    this.terminateLater(stopped);
  }

  /** The run's deadline passed: a host call it waits on is answered with a timeout. */
  deadlinePassed(): void {
    const timedOut = timeoutOutcome(this.run.message.timeoutMs);
    if (this.pendingCall) {
      this.worker.abortCalls(new Error(timedOut.message));
      this.answer(this.pendingCall, { error: "TimeoutError", message: timedOut.message, timedOut: true });
    }
    this.terminateLater(timedOut);
  }

  /** A message of the thread during this run. */
  received(received: WorkerMessage): void {
    if (received.kind === "done") {
      this.finish(this.cancelled ? cancelledOutcome() : received.outcome, true, received.logs);
      return;
    }
    if (received.kind === "log") return void this.tail?.add(received.line);
    if (received.kind !== "call") return;
    const call = ++this.callCount;
    this.pendingCall = call;
    this.callSince = performance.now();
    // Posted before the thread saw the cancel word: refused like the call it was waiting on.
    if (this.cancelled) {
      this.answer(call, refusedCall());
      return;
    }
    this.running = received.name;
    const callTool = this.run.callTool;
    if (!callTool) {
      this.answer(call, {
        error: "ToolCallError",
        message: "vance.tools.call is not available in this invocation",
      });
      return;
    }
    const signal = this.worker.callSignal;
    // From a resolved promise, so a host that throws synchronously still answers.
    Promise.resolve()
      .then(() => callTool(received.name, received.params, signal))
      .catch(
        (error: unknown): ToolCallOutcome => ({
          error: "ToolCallError",
          message: error instanceof Error ? error.message : String(error),
        }),
      )
      .then((reply) => {
        if (call === this.pendingCall) {
          this.completed += 1;
          this.running = undefined;
        }
        this.answer(call, reply);
      });
  }

  finish(outcome: ScriptOutcome, reusable: boolean, logs = this.tail?.snapshot()): void {
    if (this.ended) return;
    this.ended = true;
    this.worker.released(this);
    clearTimeout(this.deadline);
    clearTimeout(this.grace);
    this.run.signal?.removeEventListener("abort", this);
    // A host call still in flight (the thread was terminated or crashed meanwhile) ends with the run.
    if (this.pendingCall) this.worker.abortCalls(new Error("the calling script ended"));
    const now = performance.now();
    const activeMs = now - this.started - this.waitedMs - (this.callSince > 0 ? now - this.callSince : 0);
    this.resolve({ outcome: this.reported(outcome, logs), reusable, activeMs });
  }

  /** The outcome with what the run was asked to report (its calls) and the lines it printed. */
  private reported(outcome: ScriptOutcome, logs: ScriptOutcome["logs"]): ScriptOutcome {
    if (!this.run.message.report && logs === undefined) return outcome;
    const calls = this.run.message.report
      ? { calls: { completed: this.completed, ...(this.running ? { running: this.running } : {}) } }
      : {};
    return { ...outcome, ...calls, ...(logs ? { logs } : {}) };
  }

  private answer(call: number, reply: AnswerMessage): void {
    if (call !== this.pendingCall) return;
    this.pendingCall = 0;
    this.waitedMs += performance.now() - this.callSince;
    this.callSince = 0;
    this.worker.answerCall(reply);
  }

  /** Ends a run that ignored its interrupt checks `graceMs` after it was told to stop. */
  private terminateLater(outcome: ScriptOutcome): void {
    this.grace ??= setTimeout(graceEnded, this.run.graceMs, this, outcome);
  }

  /** The grace after a deadline or a cancel ended with the run still going: its thread is stopped. */
  graceEnded(outcome: ScriptOutcome): void {
    this.worker.terminate();
    this.finish(outcome, false);
  }
}

/** The timers' callbacks, functions of the module: a timer passes them the run. */
function deadlinePassed(run: RunInFlight): void {
  run.deadlinePassed();
}

function graceEnded(run: RunInFlight, outcome: ScriptOutcome): void {
  run.graceEnded(outcome);
}

/**
 * The answer to a host call of a cancelled run, and to every later one (`final`). Made when a run
 * is cancelled, not for every run: most never are.
 */
function refusedCall(): AnswerMessage {
  const { error, message } = cancelledOutcome();
  return { error, message, final: true };
}
