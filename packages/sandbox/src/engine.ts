import {
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  Scope,
  type VmCallResult,
} from "quickjs-emscripten";
import { consoleLine, installConsole, installVance, mentions, toolError, vmError } from "./host-api";
import type { SandboxLimits } from "./limits";
import type { ScriptLogs } from "./log-tail";
import type { LoadedModule } from "./module";
import { MemorySnapshot } from "./snapshot";
import { describeThrown, readJson, toHandle, type VmRead } from "./vm-values";

/**
 * The language features a script gets: QuickJS's defaults less typed arrays (which in this build
 * take BigInt with them). Tool glue code has no bytes to handle, and setting up those classes
 * costs about a quarter of a fresh context (0.44 → 0.32 ms measured here), paid by every call.
 */
export const SCRIPT_INTRINSICS = Object.freeze({
  BaseObjects: true,
  Date: true,
  Eval: true,
  StringNormalize: true,
  RegExp: true,
  JSON: true,
  Proxy: true,
  MapSet: true,
  TypedArrays: false,
  Promise: true,
});

/**
 * What a sibling tool call answered: a JSON value, or an error the script sees as a thrown `Error`
 * (its `name` and `code` the error, its `tool` the name called). `final` says every later call of
 * the run would be refused alike (its call budget is spent): the worker answers those itself.
 */
export type ToolCallOutcome = { value: unknown } | { error: string; message: string; final?: boolean };

/**
 * Result of a run. `value` is the last expression read with JSON.stringify semantics (`toJSON`
 * applies, functions and `undefined` inside objects are dropped); a result JSON cannot represent
 * at all (`undefined`, a function, a symbol) is `null`. `error` is the class name of what the
 * script threw, or one of the sandbox's own: `TimeoutError`, `StatementLimitError`,
 * `MemoryError`, `RangeError` (stack overflow), `InputError`, `Busy`, `RateLimited`, `Cancelled`.
 */
export type ScriptOutcome = (
  | { ok: true; value: unknown }
  | {
      ok: false;
      error: string;
      message: string;
      /** `RateLimited`: how long until the tenant may start a run again. */
      retryAfterMs?: number;
    }
) & {
  /** The run's `console` lines, when asked for (`report`). */
  logs?: ScriptLogs;
  /** When asked for (`report`): sibling calls answered, and the one still waiting when the run ended (a deadline mid-call). */
  calls?: { completed: number; running?: string };
};

/**
 * The host side of `vance.tools.call` inside a worker: blocks the thread until the sibling
 * answered. `timedOut` says the run's deadline passed while it waited.
 */
export type BlockingToolCall = (name: string, params: unknown) => ToolCallOutcome & { timedOut?: boolean };

/** One run as the engine sees it: everything already validated. */
export interface EngineJob {
  readonly source: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  /** On the `performance.now()` clock of the thread that runs the engine. */
  readonly deadline: number;
  readonly limits: SandboxLimits;
  readonly callTool: BlockingToolCall | undefined;
  /** Receives each `console` line; without it `console` does nothing. */
  readonly log?: (line: string) => void;
  /** Most characters of the result's JSON; a longer result fails with `ResultTooLarge`. */
  readonly maxResultChars?: number;
  /**
   * Whether the caller ended: read at every interrupt check, so a cancelled run stops there and
   * answers `Cancelled` on its own thread, which then serves the next run (no thread is stopped).
   */
  readonly cancelled?: () => boolean;
}

interface RunState {
  /** User code may run outside `running` too: `toJSON` and getters while the host reads results. */
  phase: "preparing" | "running" | "finished";
  /** The host is reading a sibling call's params, which may run the script's `toJSON`. */
  readingParams: boolean;
  interrupted?: "cancelled" | "deadline" | "statements" | "memory";
  /** A sibling call was cut off by the deadline; the script may have caught that. */
  hostCallTimedOut: boolean;
}

/** The VM's JSON.parse and JSON.stringify, fetched on first use and kept for the run. */
interface JsonFunctions {
  stringify: () => QuickJSHandle;
  parse: () => QuickJSHandle;
}

const EVAL_OPTIONS = { type: "global" } as const;

/**
 * A Scope that can be abandoned. Once an exception escaped the WebAssembly code, the module's
 * heap is inconsistent and freeing into it aborts; its handles go away with the module instead.
 */
class RunScope extends Scope {
  abandoned = false;

  override dispose(): void {
    if (!this.abandoned) super.dispose();
  }
}

/** What the host functions and the interrupt handler of a context do during the current run. */
interface RunHooks {
  call: ((name?: QuickJSHandle, params?: QuickJSHandle) => VmCallResult<QuickJSHandle>) | undefined;
  log: ((args: readonly QuickJSHandle[]) => void) | undefined;
  interrupt: () => boolean;
}

/**
 * A runtime and context ready for the next run. Its host functions (`vance.tools.call`, the
 * `console` methods) and interrupt handler are made with it and call the current run's
 * {@link RunHooks}; each run installs only what its source names. With a `snapshot`, the context
 * serves run after run: {@link finishRun} puts the module's memory back as it was when the
 * context was made, so no run sees anything of the one before.
 */
export interface PreparedRun {
  readonly loaded: LoadedModule;
  /** Owns the runtime, the context and the host functions. */
  readonly scope: RunScope;
  readonly runtime: QuickJSRuntime;
  readonly context: QuickJSContext;
  readonly hooks: RunHooks;
  readonly host: { readonly call: QuickJSHandle; readonly log: QuickJSHandle };
  readonly snapshot: MemorySnapshot | null;
  /** Owns the handles of the run under way, or of the last one until {@link finishRun}. */
  run: RunScope | undefined;
}

/**
 * Creates the runtime and context for the next run, and, in a module nothing ran in yet whose
 * layout is known, the snapshot that makes them reusable. Creating a context is most of a fresh
 * run's cost (~0.2 ms); a worker does it while idle, so the run itself only binds, evaluates and reads.
 */
export function prepareRun(loaded: LoadedModule): PreparedRun {
  const canSnapshot = loaded.layout !== null && loaded.fresh;
  loaded.fresh = false;
  const scope = new RunScope();
  const runtime = scope.manage(loaded.module.newRuntime());
  const context = scope.manage(runtime.newContext({ intrinsics: SCRIPT_INTRINSICS }));
  const hooks: RunHooks = { call: undefined, log: undefined, interrupt: () => false };
  const call = scope.manage(
    context.newFunction(
      "call",
      (name?: QuickJSHandle, params?: QuickJSHandle) =>
        hooks.call?.(name, params) ??
        vmError(context, "ToolCallError", "vance.tools.call cannot be called from here"),
    ),
  );
  const log = scope.manage(
    context.newFunction("log", (...args: QuickJSHandle[]) => {
      hooks.log?.(args);
    }),
  );
  runtime.setInterruptHandler(() => hooks.interrupt());
  let snapshot: MemorySnapshot | null = null;
  if (canSnapshot && loaded.layout) {
    // The global object's handle is a copy made in the heap on first use: made before the
    // snapshot, it stays valid after each restore (one made later would point at freed memory).
    context.global;
    snapshot = MemorySnapshot.take(loaded.memory, loaded.layout, () => {
      context.evalCode("Math.random()").dispose();
    });
  }
  return { loaded, scope, runtime, context, hooks, host: { call, log }, snapshot, run: undefined };
}

/**
 * Runs one script in its prepared runtime and context (QuickJS's synchronous build), on the
 * calling thread, and says whether the module may serve another run: not after an exception
 * escaped it, and not after its memory grew (WebAssembly memory never shrinks, and the heap limit
 * assumes a module at its initial size). The caller ends the run with {@link finishRun} once
 * it has passed the outcome on.
 */
export function runScript(
  prepared: PreparedRun,
  job: EngineJob,
): { outcome: ScriptOutcome; reusable: boolean } {
  const { loaded } = prepared;
  const startBytes = loaded.memory.buffer.byteLength;
  const run = new RunScope();
  prepared.run = run;
  try {
    const outcome = execute(run, prepared, job);
    return { outcome, reusable: loaded.memory.buffer.byteLength === startBytes };
  } catch (error) {
    run.abandoned = true;
    prepared.scope.abandoned = true;
    // The thread's native stack ran out inside QuickJS before QuickJS's own stack limit tripped.
    if (error instanceof RangeError && error.message.startsWith("Maximum call stack size exceeded")) {
      return { outcome: failed("RangeError", stackOverflowMessage(job.limits)), reusable: false };
    }
    throw error;
  } finally {
    prepared.hooks.call = undefined;
    prepared.hooks.log = undefined;
    prepared.hooks.interrupt = () => false;
  }
}

/**
 * Ends a run: frees its handles (a leaked handle aborts here, which fails the thread), and
 * answers the context ready for the next run: the same one, its module's memory restored to the
 * snapshot, or null when the caller must prepare another (no snapshot: freeing a runtime costs
 * three times the run of `a + b`). A run whose module is not reusable is abandoned with its module.
 */
export function finishRun(prepared: PreparedRun, reusable: boolean): PreparedRun | null {
  const { run } = prepared;
  prepared.run = undefined;
  if (!reusable) {
    if (run) run.abandoned = true;
    prepared.scope.abandoned = true;
    return null;
  }
  run?.dispose();
  if (prepared.snapshot?.restore()) return prepared;
  prepared.scope.dispose();
  return null;
}

/** One run; every handle it creates belongs to `scope`. */
function execute(scope: Scope, prepared: PreparedRun, job: EngineJob): ScriptOutcome {
  const { runtime, context, hooks, host, loaded } = prepared;
  const state: RunState = { phase: "preparing", readingParams: false, hostCallTimedOut: false };
  hooks.interrupt = applyLimits(runtime, loaded.memory, job, state);
  const json = vmJson(scope, context);
  // Sibling answers are parsed while the script runs, when JSON.parse may be the script's own.
  // JSON.stringify is taken when first needed: a script that replaced it only changes how its
  // own values read, and most results are primitives that never need it.
  if (job.callTool) json.parse();
  if (mentions(job.source, "console")) {
    const sink = job.log;
    hooks.log = sink ? (args) => sink(consoleLine(context, args)) : undefined;
    installConsole(context, host.log);
  }
  if (mentions(job.source, "vance")) {
    hooks.call = job.callTool
      ? siblingToolCall(context, job.callTool, state, json, job)
      : unavailableToolCall(context);
    installVance(context, host.call);
  }
  for (const [name, value] of Object.entries(job.inputs)) {
    const bound = toHandle(context, value, json.parse);
    if ("thrown" in bound) return conclude(context, { thrown: scope.manage(bound.thrown) }, state, job);
    context.setProp(context.global, name, scope.manage(bound.handle));
  }
  state.phase = "running";
  const result = scope.manage(context.evalCode(job.source, "script.js", EVAL_OPTIONS));
  state.phase = "finished";
  if (result.error) return conclude(context, { thrown: result.error }, state, job);
  const read = readJson(context, result.value, json.stringify);
  return conclude(context, "thrown" in read ? { thrown: scope.manage(read.thrown) } : read, state, job);
}

function vmJson(scope: Scope, context: QuickJSContext): JsonFunctions {
  let object: QuickJSHandle | undefined;
  let stringify: QuickJSHandle | undefined;
  let parse: QuickJSHandle | undefined;
  const json = () => {
    object ??= scope.manage(context.getProp(context.global, "JSON"));
    return object;
  };
  return {
    stringify: () => {
      stringify ??= scope.manage(context.getProp(json(), "stringify"));
      return stringify;
    },
    parse: () => {
      parse ??= scope.manage(context.getProp(json(), "parse"));
      return parse;
    },
  };
}

/** Sets the run's limits on the runtime, and answers the interrupt handler that enforces them. */
function applyLimits(
  runtime: QuickJSRuntime,
  memory: WebAssembly.Memory,
  job: EngineJob,
  state: RunState,
): () => boolean {
  // Stops single allocations larger than the limit; the heap as a whole is bounded by the
  // memory check below and, between checks, by the module's maximum memory (module.ts).
  runtime.setMemoryLimit(job.limits.memoryBytes);
  runtime.setMaxStackSize(job.limits.maxStackBytes);
  const maxBytes = memory.buffer.byteLength + job.limits.memoryBytes;
  let interrupts = 0;
  return () => {
    if (job.cancelled?.()) state.interrupted = "cancelled";
    else if (performance.now() >= job.deadline) state.interrupted = "deadline";
    else if (memory.buffer.byteLength > maxBytes) state.interrupted = "memory";
    else if (++interrupts > job.limits.maxInterrupts) state.interrupted = "statements";
    return state.interrupted !== undefined;
  };
}

/** Turns what the run produced into an outcome; host-imposed limits win over what the script did. */
function conclude(context: QuickJSContext, read: VmRead, state: RunState, job: EngineJob): ScriptOutcome {
  let finished = limitHit(state, job);
  if (finished) return finished;
  if ("thrown" in read) {
    const { name, message } = describeThrown(context, read.thrown);
    finished = classify(name, message, job.limits);
  } else {
    finished = resultWithin(read.value, job.maxResultChars);
  }
  // Describing an error or reading the result runs the script's getters and toJSON, which may
  // have hit a limit as well.
  return limitHit(state, job) ?? finished;
}

/**
 * The result, or `ResultTooLarge` when its JSON is longer than `maxChars`: measured here, on the
 * script's thread, so an oversized value never crosses to the thread that serves requests.
 */
function resultWithin(value: unknown, maxChars: number | undefined): ScriptOutcome {
  if (maxChars === undefined) return { ok: true, value };
  const chars = JSON.stringify(value).length;
  if (chars <= maxChars) return { ok: true, value };
  return failed(
    "ResultTooLarge",
    `the result is ${chars} characters of JSON, more than the ${maxChars} allowed: return a smaller value (a summary, a count, the first items)`,
  );
}

function limitHit(state: RunState, job: EngineJob): ScriptOutcome | undefined {
  if (state.interrupted === "cancelled") return cancelledOutcome();
  if (state.interrupted === "deadline" || state.hostCallTimedOut) return timeoutOutcome(job.timeoutMs);
  if (state.interrupted === "memory") return memoryError(job.limits);
  if (state.interrupted === "statements") {
    return failed(
      "StatementLimitError",
      `script exceeded its statement budget of ${job.limits.maxInterrupts} interrupt checks`,
    );
  }
  return undefined;
}

/** Gives QuickJS's resource errors the names a tool author recognises. */
function classify(name: string, message: string, limits: SandboxLimits): ScriptOutcome {
  if (name === "InternalError" && message === "out of memory") return memoryError(limits);
  if (name === "InternalError" && message === "stack overflow") {
    return failed("RangeError", stackOverflowMessage(limits));
  }
  return failed(name, message);
}

function failed(error: string, message: string): { ok: false; error: string; message: string } {
  return { ok: false, error, message };
}

function stackOverflowMessage(limits: SandboxLimits): string {
  return `Maximum call stack size exceeded (stack limit ${limits.maxStackBytes} bytes)`;
}

function memoryError(limits: SandboxLimits): ScriptOutcome {
  return failed("MemoryError", `script exceeded its memory limit of ${limits.memoryBytes} bytes`);
}

/** The outcome of a run whose caller ended before it finished, wherever that was noticed. */
export function cancelledOutcome(): { ok: false; error: string; message: string } {
  return failed("Cancelled", "the caller ended before the script finished");
}

/** The outcome of a run that overstayed its deadline, wherever that was noticed. */
export function timeoutOutcome(timeoutMs: number): { ok: false; error: string; message: string } {
  return failed("TimeoutError", `script exceeded its deadline of ${timeoutMs} ms`);
}

/** Whether the run was cancelled or is past its deadline; marks it interrupted if so. */
function mustStop(state: RunState, job: EngineJob): boolean {
  if (state.interrupted) return true;
  if (job.cancelled?.()) state.interrupted = "cancelled";
  else if (performance.now() >= job.deadline) state.interrupted = "deadline";
  return state.interrupted !== undefined;
}

/**
 * Ends the script from inside a host function, once its run is marked interrupted: a loop of the
 * VM's own reaches the interrupt handler (which answers true from now on) within microseconds,
 * and QuickJS's "interrupted" error it throws is one no `catch` or `finally` of the script sees.
 * Thrown from here, it unwinds the whole script as an interrupt check would have.
 */
function interruptNow(context: QuickJSContext): VmCallResult<QuickJSHandle> {
  const ran = context.evalCode("for (;;) {}", "interrupt.js", EVAL_OPTIONS);
  if (ran.error) return { error: ran.error };
  ran.value.dispose();
  return vmError(context, "InternalError", "interrupted");
}

function checkToolName(
  context: QuickJSContext,
  name: QuickJSHandle | undefined,
): VmCallResult<QuickJSHandle> | undefined {
  return name === undefined || context.typeof(name) !== "string"
    ? vmError(context, "TypeError", "vance.tools.call: the tool name must be a string")
    : undefined;
}

/** `vance.tools.call` of a run without sibling tools. */
function unavailableToolCall(context: QuickJSContext) {
  return (name?: QuickJSHandle): VmCallResult<QuickJSHandle> =>
    checkToolName(context, name) ??
    vmError(context, "ToolCallError", "vance.tools.call is not available in this invocation");
}

/**
 * `vance.tools.call`: reads the arguments, blocks the thread until the sibling answered (the
 * host never runs guest code meanwhile), and returns its value or throws its error. Calls from
 * the params' `toJSON`, or from user code the host runs after the script finished, are refused:
 * they would nest host calls inside host calls.
 */
function siblingToolCall(
  context: QuickJSContext,
  callTool: BlockingToolCall,
  state: RunState,
  json: JsonFunctions,
  job: EngineJob,
) {
  return (nameHandle?: QuickJSHandle, paramsHandle?: QuickJSHandle): VmCallResult<QuickJSHandle> => {
    const invalid = checkToolName(context, nameHandle);
    if (invalid) return invalid;
    if (state.phase !== "running" || state.readingParams) {
      return vmError(context, "ToolCallError", "vance.tools.call cannot be called from here");
    }
    // A run told to stop (its caller ended, its deadline passed) stops at its next call, not
    // only at its next interrupt check: a loop that catches each refusal may go thousands of
    // calls between two checks.
    if (mustStop(state, job)) return interruptNow(context);
    const name = context.getString(nameHandle!);
    state.readingParams = true;
    let params: VmRead;
    try {
      params = paramsHandle === undefined ? { value: null } : readJson(context, paramsHandle, json.stringify);
    } finally {
      state.readingParams = false;
    }
    if ("thrown" in params) return { error: params.thrown };
    const answer = callTool(name, params.value);
    if (answer.timedOut) state.hostCallTimedOut = true;
    if (job.cancelled?.()) {
      state.interrupted = "cancelled";
      return interruptNow(context);
    }
    if ("error" in answer) return toolError(context, name, answer.error, answer.message);
    const value = toHandle(context, answer.value, json.parse);
    return "thrown" in value ? { error: value.thrown } : { value: value.handle };
  };
}
