import {
  type AsyncFunctionImplementation,
  type DisposableResult,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  Scope,
  type VmCallResult,
} from "quickjs-emscripten";
import { installConsole, installVance, mentions, vmError } from "./host-api";
import { DEFAULT_LIMITS, resolveLimits, type SandboxLimits } from "./limits";
import { AsyncifyModulePool, type LoadedModule, loadAsyncifyModule, loadSyncModule } from "./module-pool";
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

/** What a sibling tool call answered: a JSON value, or an error the script sees as a thrown `Error`. */
export type ToolCallOutcome = { value: unknown } | { error: string; message: string };

/** Host side of `vance.tools.call`; `signal` aborts when the calling script's deadline passes. */
export type CallTool = (name: string, params: unknown, signal: AbortSignal) => Promise<ToolCallOutcome>;

/**
 * Which QuickJS build runs the script. `auto` takes the synchronous build unless the script can
 * reach a sibling tool (a `callTool` is given and the source mentions `vance`).
 */
export type ScriptVariant = "auto" | "sync" | "asyncify";

/** One script invocation. */
export interface ScriptRequest {
  /** Script body; the value of its last expression is the result. */
  source: string;
  /** JSON values bound as top-level variables before the script runs; `undefined` binds `undefined`. */
  inputs: Record<string, unknown>;
  /** Wall-clock deadline for the whole run, including time spent in sibling tool calls. */
  timeoutMs: number;
  /** Present: `vance.tools.call(name, params)` reaches this, synchronously from the script's view. */
  callTool?: CallTool;
  /** Overrides the sandbox's default limits for this run. */
  limits?: Partial<SandboxLimits>;
  /** Forces a QuickJS build; for tests and benchmarks. Default `auto`. */
  variant?: ScriptVariant;
}

/**
 * Result of a run. `value` is the last expression read with JSON.stringify semantics (`toJSON`
 * applies, functions and `undefined` inside objects are dropped); a result JSON cannot represent
 * at all (`undefined`, a function, a symbol) is `null`. `error` is the class name of what the
 * script threw, or one of the sandbox's own: `TimeoutError`, `StatementLimitError`,
 * `MemoryError`, `RangeError` (stack overflow), `InputError`.
 */
export type ScriptOutcome = { ok: true; value: unknown } | { ok: false; error: string; message: string };

/** Options of {@link ScriptSandbox.create}. */
export interface ScriptSandboxOptions {
  /**
   * Default limits of every run. `memoryBytes` also sizes the WebAssembly memory of every module,
   * so a run may lower it but not raise it.
   */
  limits?: Partial<SandboxLimits>;
  /** How many idle asyncify modules to keep for reuse (each holds its WebAssembly memory). Default 4. */
  maxIdleModules?: number;
}

/** Counters for tests and diagnostics. */
export interface ScriptSandboxStats {
  runs: { sync: number; asyncify: number };
  asyncifyModules: { idle: number; inUse: number; peakInUse: number; created: number };
}

/** Input names that cannot become top-level variables: the host object, and the prototype setter. */
const RESERVED_INPUTS = new Set(["vance", "__proto__"]);

const EVAL_OPTIONS = { type: "global" } as const;

interface Job {
  source: string;
  inputs: Record<string, unknown>;
  timeoutMs: number;
  deadline: number;
  limits: SandboxLimits;
  callTool: CallTool | undefined;
}

interface RunState {
  /** User code may run outside `running` too: `toJSON` and getters while the host reads results. */
  phase: "preparing" | "running" | "finished";
  /** The host is reading a sibling call's params, which may run the script's `toJSON`. */
  readingParams: boolean;
  interrupted?: "deadline" | "statements" | "memory";
  /** A sibling call was cut off by the deadline; the script may have caught that. */
  hostCallTimedOut: boolean;
}

type EvalResult = DisposableResult<QuickJSHandle, QuickJSHandle>;

/** How one QuickJS build evaluates and exposes `vance.tools.call`. */
interface Engine {
  evaluate(source: string): EvalResult | Promise<EvalResult>;
  newToolCall(state: RunState, json: JsonFunctions): QuickJSHandle;
}

/** The VM's JSON.parse and JSON.stringify, fetched on first use and kept for the run. */
interface JsonFunctions {
  stringify: () => QuickJSHandle;
  parse: () => QuickJSHandle;
}

/**
 * Runs `scripted` tools in QuickJS compiled to WebAssembly: a fresh runtime and context per run,
 * no I/O, no timers, memory, stack, statement and wall-clock limits.
 */
export class ScriptSandbox {
  private syncModule: LoadedModule | undefined;
  private readonly runs = { sync: 0, asyncify: 0 };
  private disposed = false;

  private constructor(
    private readonly defaults: SandboxLimits,
    private readonly pool: AsyncifyModulePool,
  ) {}

  /** Loads the WebAssembly modules so that the first run does not pay for it. */
  static async create(options: ScriptSandboxOptions = {}): Promise<ScriptSandbox> {
    const maxIdle = options.maxIdleModules ?? 4;
    if (!Number.isSafeInteger(maxIdle) || maxIdle < 0) {
      throw new RangeError(`maxIdleModules must be a non-negative integer, got ${maxIdle}`);
    }
    const defaults = resolveLimits(DEFAULT_LIMITS, options.limits);
    const sandbox = new ScriptSandbox(
      defaults,
      new AsyncifyModulePool(maxIdle, () => loadAsyncifyModule(defaults.memoryBytes)),
    );
    sandbox.syncModule = await loadSyncModule(defaults.memoryBytes);
    if (maxIdle > 0) sandbox.pool.release(await sandbox.pool.acquire());
    return sandbox;
  }

  /**
   * Runs one script. Script failures are outcomes; it throws only on misuse (invalid limits or
   * timeout, a disposed sandbox) or when QuickJS itself fails (a leaked handle aborts the module).
   *
   * @example
   * await sandbox.run({ source: "a + b", inputs: { a: 1, b: 2 }, timeoutMs: 1000 }); // { ok: true, value: 3 }
   */
  async run(request: ScriptRequest): Promise<ScriptOutcome> {
    const started = performance.now();
    if (this.disposed) throw new Error("ScriptSandbox is disposed");
    if (!(request.timeoutMs > 0) || !Number.isFinite(request.timeoutMs)) {
      throw new RangeError(`timeoutMs must be a positive finite number, got ${request.timeoutMs}`);
    }
    const limits = resolveLimits(this.defaults, request.limits);
    if (limits.memoryBytes > this.defaults.memoryBytes) {
      throw new RangeError(
        `memoryBytes ${limits.memoryBytes} exceeds the sandbox's ${this.defaults.memoryBytes}, which sizes its modules`,
      );
    }
    const job: Job = {
      source: request.source,
      inputs: request.inputs,
      timeoutMs: request.timeoutMs,
      deadline: started + request.timeoutMs,
      limits,
      callTool: request.callTool,
    };
    const reserved = Object.keys(request.inputs).find((name) => RESERVED_INPUTS.has(name));
    if (reserved !== undefined) {
      return { ok: false, error: "InputError", message: `input name "${reserved}" is reserved` };
    }
    const variant = request.variant ?? "auto";
    const asyncify =
      variant === "asyncify" ||
      (variant === "auto" && job.callTool !== undefined && mentions(job.source, "vance"));
    return asyncify ? this.runAsyncify(job) : this.runSync(job);
  }

  /** Drops the loaded modules; runs in flight finish, later `run` calls throw. */
  dispose(): void {
    this.disposed = true;
    this.syncModule = undefined;
    this.pool.clear();
  }

  /** Counters for tests and diagnostics. */
  stats(): ScriptSandboxStats {
    return { runs: { ...this.runs }, asyncifyModules: this.pool.stats() };
  }

  private async runSync(job: Job): Promise<ScriptOutcome> {
    this.syncModule ??= await loadSyncModule(this.defaults.memoryBytes);
    const loaded = this.syncModule;
    this.runs.sync += 1;
    const { outcome, reusable } = await runInModule(loaded, job, (scope) => {
      const runtime = scope.manage(loaded.module.newRuntime());
      const context = scope.manage(runtime.newContext({ intrinsics: SCRIPT_INTRINSICS }));
      return execute(scope, runtime, context, loaded.memory, job, {
        evaluate: (source) => context.evalCode(source, "script.js", EVAL_OPTIONS),
        newToolCall: () => context.newFunction("call", unavailableToolCall(context)),
      });
    });
    if (!reusable && this.syncModule === loaded) this.syncModule = undefined;
    return outcome;
  }

  private async runAsyncify(job: Job): Promise<ScriptOutcome> {
    const loaded = await this.pool.acquire();
    this.runs.asyncify += 1;
    let reusable = false;
    try {
      const ran = await runInModule(loaded, job, (scope) => {
        const runtime = scope.manage(loaded.module.newRuntime());
        const context = scope.manage(runtime.newContext({ intrinsics: SCRIPT_INTRINSICS }));
        const callTool = job.callTool;
        return execute(scope, runtime, context, loaded.memory, job, {
          evaluate: (source) => context.evalCodeAsync(source, "script.js", EVAL_OPTIONS),
          newToolCall: (state, json) =>
            callTool
              ? context.newAsyncifiedFunction(
                  "call",
                  // quickjs-emscripten suspends only when the function returns a promise, so the
                  // synchronous refusals of siblingToolCall never unwind the stack; the declared
                  // type insists on a promise.
                  siblingToolCall(context, job, callTool, state, json) as AsyncFunctionImplementation,
                )
              : context.newFunction("call", unavailableToolCall(context)),
        });
      });
      reusable = ran.reusable && !this.disposed;
      return ran.outcome;
    } finally {
      if (reusable) this.pool.release(loaded);
      else this.pool.discard();
    }
  }
}

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

/**
 * Runs `body` in a scope over one module and says whether the module may serve another run: not
 * after an exception escaped it, and not after its memory grew (WebAssembly memory never shrinks,
 * and the heap limit assumes a module at its initial size).
 */
async function runInModule(
  loaded: LoadedModule,
  job: Job,
  body: (scope: Scope) => Promise<ScriptOutcome>,
): Promise<{ outcome: ScriptOutcome; reusable: boolean }> {
  const startBytes = loaded.memory.buffer.byteLength;
  const scope = new RunScope();
  try {
    const outcome = await body(scope);
    scope.dispose();
    return { outcome, reusable: loaded.memory.buffer.byteLength === startBytes };
  } catch (error) {
    scope.abandoned = true;
    // V8 ran out of native stack inside QuickJS before QuickJS's own stack limit tripped: the
    // asyncify build's interpreter frames are ~37 KB once V8 has optimised them.
    if (error instanceof RangeError && error.message.startsWith("Maximum call stack size exceeded")) {
      return { outcome: failed("RangeError", stackOverflowMessage(job.limits)), reusable: false };
    }
    throw error;
  }
}

/** One run in a fresh runtime and context; every handle it creates belongs to `scope`. */
async function execute(
  scope: Scope,
  runtime: QuickJSRuntime,
  context: QuickJSContext,
  memory: WebAssembly.Memory,
  job: Job,
  engine: Engine,
): Promise<ScriptOutcome> {
  const state: RunState = { phase: "preparing", readingParams: false, hostCallTimedOut: false };
  applyLimits(runtime, memory, job, state);
  const json = vmJson(scope, context);
  // Sibling answers are parsed while the script runs, when JSON.parse may be the script's own.
  // JSON.stringify is taken when first needed: a script that replaced it only changes how its
  // own values read, and most results are primitives that never need it.
  if (job.callTool) json.parse();
  if (mentions(job.source, "console")) installConsole(context);
  if (mentions(job.source, "vance")) installVance(context, engine.newToolCall(state, json));
  for (const [name, value] of Object.entries(job.inputs)) {
    const bound = toHandle(context, value, json.parse);
    if ("thrown" in bound) return conclude(context, { thrown: scope.manage(bound.thrown) }, state, job);
    context.setProp(context.global, name, scope.manage(bound.handle));
  }
  state.phase = "running";
  const result = scope.manage(await engine.evaluate(job.source));
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

function applyLimits(runtime: QuickJSRuntime, memory: WebAssembly.Memory, job: Job, state: RunState): void {
  // Stops single allocations larger than the limit; the heap as a whole is bounded by the
  // memory check below and, between checks, by the module's maximum memory (module-pool.ts).
  runtime.setMemoryLimit(job.limits.memoryBytes);
  runtime.setMaxStackSize(job.limits.maxStackBytes);
  const maxBytes = memory.buffer.byteLength + job.limits.memoryBytes;
  let interrupts = 0;
  runtime.setInterruptHandler(() => {
    if (performance.now() >= job.deadline) state.interrupted = "deadline";
    else if (memory.buffer.byteLength > maxBytes) state.interrupted = "memory";
    else if (++interrupts > job.limits.maxInterrupts) state.interrupted = "statements";
    return state.interrupted !== undefined;
  });
}

/** Turns what the run produced into an outcome; host-imposed limits win over what the script did. */
function conclude(context: QuickJSContext, read: VmRead, state: RunState, job: Job): ScriptOutcome {
  let finished = limitHit(state, job);
  if (finished) return finished;
  if ("thrown" in read) {
    const { name, message } = describeThrown(context, read.thrown);
    finished = classify(name, message, job.limits);
  } else {
    finished = { ok: true, value: read.value };
  }
  // Describing an error or reading the result runs the script's getters and toJSON, which may
  // have hit a limit as well.
  return limitHit(state, job) ?? finished;
}

function limitHit(state: RunState, job: Job): ScriptOutcome | undefined {
  if (state.interrupted === "deadline" || state.hostCallTimedOut) {
    return failed("TimeoutError", timeoutMessage(job));
  }
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

function failed(error: string, message: string): ScriptOutcome {
  return { ok: false, error, message };
}

function stackOverflowMessage(limits: SandboxLimits): string {
  return `Maximum call stack size exceeded (stack limit ${limits.maxStackBytes} bytes)`;
}

function memoryError(limits: SandboxLimits): ScriptOutcome {
  return failed("MemoryError", `script exceeded its memory limit of ${limits.memoryBytes} bytes`);
}

function timeoutMessage(job: Job): string {
  return `script exceeded its deadline of ${job.timeoutMs} ms`;
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
 * `vance.tools.call` of an asyncify run: reads the arguments, then returns a promise that
 * suspends the script until the sibling answered or the deadline passed. Calls the host cannot
 * serve by suspending get a synchronous error: a second suspension while the params' `toJSON`
 * runs, or one from user code the host runs after the script finished, would suspend inside a
 * synchronous export and break the module.
 */
function siblingToolCall(
  context: QuickJSContext,
  job: Job,
  callTool: CallTool,
  state: RunState,
  json: JsonFunctions,
) {
  return (
    nameHandle?: QuickJSHandle,
    paramsHandle?: QuickJSHandle,
  ): VmCallResult<QuickJSHandle> | Promise<QuickJSHandle | VmCallResult<QuickJSHandle>> => {
    const invalid = checkToolName(context, nameHandle);
    if (invalid) return invalid;
    if (state.phase !== "running" || state.readingParams) {
      return vmError(context, "ToolCallError", "vance.tools.call cannot be called from here");
    }
    const name = context.getString(nameHandle!);
    state.readingParams = true;
    let params: VmRead;
    try {
      params = paramsHandle === undefined ? { value: null } : readJson(context, paramsHandle, json.stringify);
    } finally {
      state.readingParams = false;
    }
    if ("thrown" in params) return { error: params.thrown };
    return awaitSibling(callTool, name, params.value, job, state).then((answer) => {
      if ("error" in answer) return vmError(context, answer.error, answer.message);
      const value = toHandle(context, answer.value, json.parse);
      return "thrown" in value ? { error: value.thrown } : value.handle;
    });
  };
}

/**
 * The sibling's answer, bounded by the run's deadline. Never rejects: quickjs-emscripten only
 * logs a rejection inside a suspended call, and the script would never resume.
 */
async function awaitSibling(
  callTool: CallTool,
  name: string,
  params: unknown,
  job: Job,
  state: RunState,
): Promise<ToolCallOutcome> {
  const timedOut = (): ToolCallOutcome => {
    state.hostCallTimedOut = true;
    return { error: "TimeoutError", message: timeoutMessage(job) };
  };
  const remaining = job.deadline - performance.now();
  if (remaining <= 0) return timedOut();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<ToolCallOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(timeoutMessage(job)));
      resolve(timedOut());
    }, remaining);
  });
  // Starting from a resolved promise moves the host's work off the WebAssembly stack that is
  // being unwound, so a nested script run starts on a clean stack.
  const answered = Promise.resolve()
    .then(() => callTool(name, params, controller.signal))
    .catch(
      (error: unknown): ToolCallOutcome => ({
        error: "ToolCallError",
        message: error instanceof Error ? error.message : String(error),
      }),
    );
  try {
    return await Promise.race([answered, expired]);
  } finally {
    clearTimeout(timer);
  }
}
