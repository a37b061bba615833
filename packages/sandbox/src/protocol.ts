import type { MessagePort } from "node:worker_threads";
import type { ScriptOutcome, ToolCallOutcome } from "./engine";
import type { SandboxLimits } from "./limits";
import type { ScriptLogs } from "./log-tail";
import type { CompiledQuickJS } from "./module";
import type { ThreadPriority } from "./thread-priority";

/** What a script worker is started with (its `workerData`). */
export interface WorkerInit {
  /** QuickJS's synchronous build, compiled once by the main thread, and its memory layout. */
  readonly quickjs: CompiledQuickJS;
  /** Sizes the module's linear memory; no run may use more. */
  readonly memoryBytes: number;
  /** Where answers to `vance.tools.call` arrive; read synchronously with `receiveMessageOnPort`. */
  readonly answers: MessagePort;
  /** Where runs arrive; read synchronously with `receiveMessageOnPort`. */
  readonly jobs: MessagePort;
  /**
   * Three Int32s. At {@link ANSWER_SLOT} the main thread sets {@link ANSWERED} and notifies once an
   * answer was posted; at {@link JOBS_SLOT} it counts the runs posted and notifies, so an idle
   * thread sleeps in `Atomics.wait` for its next run rather than in its event loop; at
   * {@link CANCEL_SLOT} it sets {@link CANCELLED} when the current run's caller ended (cleared
   * before each run is posted), which the run's interrupt checks read.
   */
  readonly signal: SharedArrayBuffer;
  /** Nice levels the thread lowers its own CPU priority by before it loads QuickJS (0: none). */
  readonly nice: number;
}

/** Where in {@link WorkerInit.signal} the answer flag is. */
export const ANSWER_SLOT = 0;
/** Where in {@link WorkerInit.signal} the count of runs posted is. */
export const JOBS_SLOT = 1;
/** Where in {@link WorkerInit.signal} the current run's cancel word is. */
export const CANCEL_SLOT = 2;
/** Bytes of {@link WorkerInit.signal}. */
export const SIGNAL_BYTES = 12;

/** Main thread → worker, on the jobs port: run one script. */
export interface RunMessage {
  readonly kind: "run";
  readonly source: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  readonly limits: SandboxLimits;
  /** Whether `vance.tools.call` reaches the host. */
  readonly canCall: boolean;
  /** Whether the outcome reports `console` lines (posted as `log` messages too) and calls; otherwise `console` does nothing. */
  readonly report: boolean;
  /** Most characters of the result's JSON; a longer result fails with `ResultTooLarge`. */
  readonly maxResultChars: number | undefined;
}

/** Worker → main thread. */
export type WorkerMessage =
  | { readonly kind: "ready"; readonly priority: ThreadPriority }
  | { readonly kind: "call"; readonly name: string; readonly params: unknown }
  /** One `console` line, as printed (the first `LOG_LIMITS.posted` of a run). */
  | { readonly kind: "log"; readonly line: string }
  /** The outcome; `logs` when the run captured them. */
  | { readonly kind: "done"; readonly outcome: ScriptOutcome; readonly logs?: ScriptLogs };

/** Main thread → worker, on the answers port: the sibling's answer. */
export type AnswerMessage = ToolCallOutcome & { readonly timedOut?: boolean };

export const WAITING = 0;
export const ANSWERED = 1;
/** At {@link CANCEL_SLOT}: the current run's caller ended. */
export const CANCELLED = 1;
