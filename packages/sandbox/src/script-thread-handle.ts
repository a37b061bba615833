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
  run(run: WorkerRun): Promise<{ outcome: ScriptOutcome; reusable: boolean; activeMs: number }> {
    const { message } = run;
    return new Promise((resolve) => {
      const started = performance.now();
      // The thread's own time is the run's less its waits for sibling calls (they run elsewhere
      // and are charged there): what a tenant's worker time counts.
      let waitedMs = 0;
      let callSince = 0;
      let pendingCall = 0;
      let grace: ReturnType<typeof setTimeout> | undefined;
      // How far the run got, for an outcome that says so (a deadline mid-call): the calls the
      // host answered, the one it was still working on, and the lines the thread printed.
      let completed = 0;
      let running: string | undefined;
      const tail = message.report ? new LogTail() : undefined;
      let ended = false;
      // Set once the caller ended: the outcome is `Cancelled`, whatever the thread answers.
      let cancelled = false;
      const finish = (outcome: ScriptOutcome, reusable: boolean, logs = tail?.snapshot()) => {
        if (ended) return;
        ended = true;
        this.onMessage = undefined;
        this.onExit = undefined;
        clearTimeout(deadline);
        clearTimeout(grace);
        run.signal?.removeEventListener("abort", onCancel);
        // A host call still in flight (the thread was terminated or crashed meanwhile) ends with the run.
        if (pendingCall) this.abortCalls(new Error("the calling script ended"));
        const calls = message.report ? { calls: { completed, ...(running ? { running } : {}) } } : {};
        const now = performance.now();
        const activeMs = now - started - waitedMs - (callSince > 0 ? now - callSince : 0);
        resolve({ outcome: { ...outcome, ...calls, ...(logs ? { logs } : {}) }, reusable, activeMs });
      };
      const answer = (call: number, reply: AnswerMessage) => {
        if (call !== pendingCall) return;
        pendingCall = 0;
        waitedMs += performance.now() - callSince;
        callSince = 0;
        this.answers.postMessage(reply);
        Atomics.store(this.flag, ANSWER_SLOT, ANSWERED);
        Atomics.notify(this.flag, ANSWER_SLOT);
      };
      /** Ends a run that ignored its interrupt checks `graceMs` after it was told to stop. */
      const terminateLater = (outcome: ScriptOutcome) => {
        grace ??= setTimeout(() => {
          this.terminate();
          finish(outcome, false);
        }, run.graceMs);
      };
      const onCancel = () => {
        if (ended || cancelled) return;
        cancelled = true;
        const stopped = cancelledOutcome();
        // Read by the run's next interrupt check; a host call it waits on is answered at once, and
        // so is any later one (`final`): the run ends on its thread, which is kept.
        Atomics.store(this.flag, CANCEL_SLOT, CANCELLED);
        if (pendingCall) {
          this.abortCalls(new Error(stopped.message));
          answer(pendingCall, refusedCall());
        }
        clearTimeout(deadline);
        terminateLater(stopped);
      };
      const deadline = setTimeout(() => {
        const timedOut = timeoutOutcome(message.timeoutMs);
        if (pendingCall) {
          this.abortCalls(new Error(timedOut.message));
          answer(pendingCall, { error: "TimeoutError", message: timedOut.message, timedOut: true });
        }
        terminateLater(timedOut);
      }, message.timeoutMs);
      let callCount = 0;
      this.onMessage = (received) => {
        if (received.kind === "done") {
          return finish(cancelled ? cancelledOutcome() : received.outcome, true, received.logs);
        }
        if (received.kind === "log") return void tail?.add(received.line);
        if (received.kind !== "call") return;
        const call = ++callCount;
        pendingCall = call;
        callSince = performance.now();
        // Posted before the thread saw the cancel word: refused like the call it was waiting on.
        if (cancelled) return answer(call, refusedCall());
        running = received.name;
        const callTool = run.callTool;
        if (!callTool) {
          answer(call, {
            error: "ToolCallError",
            message: "vance.tools.call is not available in this invocation",
          });
          return;
        }
        const { signal } = this.calls;
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
            if (call === pendingCall) {
              completed += 1;
              running = undefined;
            }
            answer(call, reply);
          });
      };
      this.onExit = (reason) => finish({ ok: false, error: "SandboxError", message: reason }, false);
      run.signal?.addEventListener("abort", onCancel, { once: true });
      // The deadline timer keeps the process alive while the (unreferenced) thread runs. The
      // thread sleeps on the count of runs, not in its event loop: waking it is one notify.
      // The thread answered the previous run before this one is posted: the word is that run's.
      Atomics.store(this.flag, CANCEL_SLOT, 0);
      this.jobs.postMessage(message);
      Atomics.add(this.flag, JOBS_SLOT, 1);
      Atomics.notify(this.flag, JOBS_SLOT);
    });
  }

  private abortCalls(reason: Error): void {
    this.calls.abort(reason);
    this.calls = new AbortController();
  }
}

/**
 * The answer to a host call of a cancelled run, and to every later one (`final`). Made when a run
 * is cancelled, not for every run: most never are.
 */
function refusedCall(): AnswerMessage {
  const { error, message } = cancelledOutcome();
  return { error, message, final: true };
}
