import { isSpanContextValid, type Span } from "@opentelemetry/api";
import type { CallerContext, CallResult, CallScope, ProcessToolsApi } from "../calls/built-in-tool";
import { CallBudget, type CallLimits, CallRefusal, DEFAULT_CALL_LIMITS } from "../calls/call-budget";
import type { DocumentCascade } from "../cascade/document-cascade";
import type { ModelPicker } from "../catalog/model-picker";
import type { DiscoveryApi } from "../discovery/discovery-api";
import { Errors, type FieldError, toolFailureOf, VanceError } from "../errors";
import { META_TOOL, toolDocumentPath } from "../ids";
import type { ClientToolDeclaration, ProcessRecord } from "../ports/state-store";
import type { ScriptToolAnswer, ToolRuntime } from "../ports/tool-runtime";
import type { SecretService } from "../secrets/secret-service";
import type { AllowSet } from "../surface/process-records";
import { endedWith, inSpan, inSyncSpan, type ServiceMetrics, TraceAttributes } from "../telemetry/telemetry";
import type { InvocationContext, ToolTypeEnvironment } from "../tool-types/tool-type";
import type { ResolvedTool } from "../tools/resolved-tool";
import type { ToolSnapshot } from "../tools/tool-snapshot";
import type { CompiledJsonSchema } from "../validation/json-schema-validator";

/** One call to dispatch: who calls, what, and under which allow set. */
export interface DispatchRequest {
  readonly caller: CallerContext;
  readonly name: string;
  readonly params: unknown;
  /** The names the caller may invoke; `null` means unrestricted (a direct API call without a list). */
  readonly allowedTools: AllowSet | null;
  /** Tools the engine's client side runs; answered with a routing result. */
  readonly clientTools?: readonly ClientToolDeclaration[];
  /** The process the call runs in: its meta-tools answer from its discovery surface. */
  readonly process?: ProcessRecord;
  /**
   * The turn's skill tools (the manifest's `?with=`): in the tools array this turn, so the
   * meta-tools list them in context and a call of one activates nothing.
   */
  readonly skillTools?: readonly string[];
  /** Aborts when the caller went away: what the call started stops with it. */
  readonly signal?: AbortSignal;
  /**
   * Set for a nested call (a script's sibling call, `invoke_tool`): the budget of the call that
   * makes it, which this call is charged to. Absent for a top-level call, which starts a budget.
   */
  readonly parent?: CallBudget;
  /**
   * The request's snapshot of the caller's project's tools (a call in a process: taken under the
   * read of the process record): the name resolves in it, and its nested calls are handed it.
   */
  readonly snapshot: ToolSnapshot;
  /**
   * False for calls a built-in starts (a model's `execute_javascript` script) and everything
   * below them: they count as usage of the tools they reach, but activate nothing — not even
   * through `invoke_tool` or `tool_description`. Default true.
   */
  readonly activates?: boolean;
}

/** What the dispatcher answers: the tool's outcome, or a routing result for a client tool. */
export type DispatchResult = CallResult & { readonly durationMs: number };

export interface ToolDispatcherOptions {
  readonly cascade: DocumentCascade;
  readonly runtime: ToolRuntime;
  /** Which secrets a tool may read, by the layer its document came from. */
  readonly secrets: Pick<SecretService, "lookupFor">;
  /** The address rules and the schema compiler: the type registry's (`ToolTypeRegistry.environment`). */
  readonly environment: ToolTypeEnvironment;
  /** The model catalog's endpoints (`prompt_template`); without it those tools answer `ModelUnavailable`. */
  readonly models?: Pick<ModelPicker, "pick">;
  /** Depth and fan-out of the calls one top-level call may start (`DEFAULT_CALL_LIMITS`). */
  readonly callLimits?: Partial<CallLimits>;
  /** What the meta-tools do inside a process; without it they answer `ProcessRequired`. */
  readonly discovery?: Pick<DiscoveryApi, "forProcess">;
  /** Calls counted and timed by tool and outcome; none without it. */
  readonly metrics?: Pick<ServiceMetrics, "toolCall">;
}

/** What a name resolves to: a configured or built-in tool, or one of the process's client tools. */
type CallTarget = ResolvedTool | ClientTarget;

/** A client tool the process declared at spawn: the engine's client side runs it. */
interface ClientTarget extends ClientToolDeclaration {
  readonly kind: "client";
}

/**
 * The signal of every call nobody can cancel: one signal that never aborts and keeps no listener.
 * Whatever such a call waits on (a sandbox slot, a script's thread, an upstream request) listens
 * on its signal until the call ends; a listener of this one could never run, so adding it keeps
 * nothing. A shared signal that kept them held one per call in flight (11 concurrent scripts
 * made Node warn of a listener leak, and each removal scanned all the others); a signal of its
 * own per call cost each call an `AbortController` (~6–8 µs on Node 20, the most expensive
 * object of a scripted invoke's path).
 */
const UNCANCELLABLE: AbortSignal = neverAborted();

function neverAborted(): AbortSignal {
  const signal = new AbortController().signal;
  const keepNothing = () => undefined;
  Object.defineProperties(signal, {
    addEventListener: { value: keepNothing },
    removeEventListener: { value: keepNothing },
  });
  return signal;
}

/**
 * `ToolDispatcher` (spec §7): resolves a name through the configured tools (project, tenant,
 * bundled) and then the built-in tools, then the process's client tools; checks the allow set
 * and the params against the tool's input schema; runs it and times it. Meta-tools get the
 * discovery API bound to the process. Nested calls (sibling calls from scripts, `invoke_tool`)
 * come back through here, charged to the `CallBudget` of their top-level call.
 */
export class ToolDispatcher {
  private readonly callLimits: CallLimits;

  /** The script sandbox built-ins run scripts in. */
  get scripts(): ToolRuntime["scripts"] {
    return this.options.runtime.scripts;
  }

  constructor(private readonly options: ToolDispatcherOptions) {
    this.callLimits = { ...DEFAULT_CALL_LIMITS, ...options.callLimits };
  }

  /**
   * Runs a call. Refusals the caller must fix (not allowed, not found, disabled, bad params)
   * throw `VanceError`s; the tool's own failures come back as `{ error, message }`.
   */
  async invoke(request: DispatchRequest): Promise<DispatchResult> {
    const started = performance.now();
    const outcome = await this.dispatch(request);
    // A full sandbox, or a tenant past its script time, is the caller's to retry, not the tool's
    // failure: 429 over HTTP. Nested calls see `Busy` / `RateLimited` inside the calling tool.
    if (!request.parent && "error" in outcome) {
      if (outcome.error === "Busy") throw Errors.busy(outcome.message);
      if (outcome.error === "RateLimited") {
        throw Errors.rateLimited(outcome.message, (outcome.retryAfterMs ?? 1_000) / 1000);
      }
    }
    // Object.assign, not `{ ...outcome, durationMs }`: a spread then a new property costs V8 ~0.7 µs.
    return Object.assign({}, outcome, {
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    });
  }

  /** What a call would run: allow set checked, configured and built-in tools first, then client tools. */
  private async resolve(request: Omit<DispatchRequest, "params">): Promise<CallTarget> {
    if (request.allowedTools && !request.allowedTools.has(request.name)) {
      throw new VanceError("tool_not_allowed", `tool '${request.name}' is not in the caller's allowed tools`);
    }
    const { name } = request;
    const client = request.clientTools?.find((tool) => tool.name === name);
    try {
      // The tool comes back with its type, so nothing is looked up twice.
      return await request.snapshot.require(name);
    } catch (error) {
      if (client && error instanceof VanceError && error.code === "tool_not_found")
        return { ...client, kind: "client" };
      throw error;
    }
  }

  /**
   * Charges the call to its budget before anything is read: a refused call costs nothing. A pack
   * sub-tool whose source has given no list yet is the tool's failure (`SourceUnavailable`), to
   * try again later — not a refusal: the tool may well exist.
   */
  private dispatch(request: DispatchRequest): Promise<CallResult> {
    const { caller } = request;
    const attributes = {
      [TraceAttributes.tenant]: caller.tenant,
      [TraceAttributes.project]: caller.project,
      [TraceAttributes.tool]: request.name,
      [TraceAttributes.nested]: request.parent !== undefined,
      ...(caller.processId !== undefined ? { [TraceAttributes.process]: caller.processId } : {}),
    };
    const started = performance.now();
    const seen = { type: "unresolved", outcome: "error" };
    return inSpan(`tool ${request.name}`, attributes, async (span) => {
      try {
        const result = await this.dispatchInSpan(request, span, seen);
        seen.outcome = outcomeOf(result);
        endedWith(span, seen.outcome);
        return result;
      } catch (error) {
        seen.outcome = error instanceof VanceError ? error.code : "internal_error";
        throw error;
      } finally {
        this.options.metrics?.toolCall(
          { tenant: caller.tenant, project: caller.project, tool: request.name, ...seen },
          performance.now() - started,
        );
      }
    });
  }

  private async dispatchInSpan(
    request: DispatchRequest,
    span: Span,
    seen: { type: string },
  ): Promise<CallResult> {
    const budget = request.parent ? request.parent.enter(request.name) : CallBudget.start(this.callLimits);
    if (!(budget instanceof CallBudget)) return budget;
    // Untraced (no provider, no trace to join): the call's span records nothing, and so would the
    // spans below it — they are not made at all, which saves their contexts on every call.
    const traced = span.isRecording() || isSpanContextValid(span.spanContext());
    let target: CallTarget;
    try {
      target = traced
        ? await inSpan("cascade.resolve", {}, () => this.resolve(request))
        : await this.resolve(request);
    } catch (error) {
      if (error instanceof VanceError && error.code === "source_unavailable") return toolFailureOf(error);
      throw error;
    }
    seen.type = typeOf(target);
    span.setAttribute(TraceAttributes.type, seen.type);
    return this.run(request, target, budget, traced);
  }

  private async run(
    request: DispatchRequest,
    target: CallTarget,
    budget: CallBudget,
    traced: boolean,
  ): Promise<CallResult> {
    const input = request.params ?? {};
    const problems = await this.paramProblems(request, target, input, traced);
    if (problems.length > 0) {
      throw new VanceError(
        "invalid_params",
        `the params do not match the input schema of '${request.name}'`,
        problems,
      );
    }
    const params = input as Readonly<Record<string, unknown>>;
    switch (target.kind) {
      case "client":
        return { route: "client", name: target.name, params: input };
      case "builtin":
        // A built-in resolves without reading a layer; the meta-tools read the snapshot's listing.
        return target.builtIn.invoke(params, request.caller, new BuiltInScope(this, request, budget));
      case "pack-sub-tool": {
        const invokeSubTool = target.type.sourcing?.invokeSubTool;
        if (!invokeSubTool) return unsupported(target.config.type);
        const context = this.context(request, budget, target.layer);
        return invokeSubTool(target.config, target.config.parameters, target.pack.tool, params, context);
      }
      case "document": {
        if (target.type.sourcing?.kind === "pack") {
          throw new VanceError(
            "tool_not_found",
            `'${target.name}' is a pack, not a tool: call its sub-tools ${target.name}__{op} (GET …/tools lists them)`,
          );
        }
        if (!target.type.invoke) return unsupported(target.config.type);
        return target.type.invoke(
          target.config,
          target.config.parameters,
          params,
          this.context(request, budget, target.layer),
          target.source,
        );
      }
    }
  }

  /**
   * The params' problems against the tool's input schema. A schema compiled already (every call
   * of a tool but its first, whichever object holds it: the cache is keyed by the schema's text)
   * is checked at once, with no promise and no turn; one not compiled yet (an MCP server's tool,
   * say) compiles in the caller's tenant's turn.
   */
  private paramProblems(
    request: DispatchRequest,
    target: CallTarget,
    input: unknown,
    traced: boolean,
  ): FieldError[] | Promise<FieldError[]> {
    const { jsonSchemas } = this.options.environment;
    const compiled = jsonSchemas.compiledNow(
      target.inputSchema,
      target.kind === "client" ? undefined : target.inputSchemaText,
    );
    if (compiled) {
      return traced
        ? inSyncSpan("schema.validate", () => problemsOf(target, compiled, input))
        : problemsOf(target, compiled, input);
    }
    return inSpan("schema.validate", {}, async () => {
      const [schema] = await jsonSchemas.compileAsTenant(request.caller.tenant, [target.inputSchema]);
      if (!schema) throw new Error("compileAsTenant answered no schema for one asked");
      return problemsOf(target, schema, input);
    });
  }

  /** The discovery API bound to the call's process; its nested calls are charged to `budget`. */
  processTools(request: DispatchRequest, budget: CallBudget): ProcessToolsApi | undefined {
    const { discovery } = this.options;
    if (!request.process || !discovery) return undefined;
    return discovery.forProcess(
      request.process,
      (name, params) => this.dispatch(Object.assign({}, request, { name, params, parent: budget })),
      request.skillTools ?? [],
      {
        activates: request.activates !== false,
        snapshot: request.snapshot,
        invokeTool: request.allowedTools?.has(META_TOOL.invoke) ?? false,
      },
    );
  }

  /**
   * Calls nested in `request`, charged to `budget`, with refusals as the tool's failure — how a
   * script's sibling calls reach their tools. A refusal by the budget itself is `final`: every
   * later call of the same caller would be refused alike (the depth is the caller's, the tally
   * only grows), so the sandbox answers those without another round trip.
   */
  nestedCall(request: DispatchRequest, budget: CallBudget) {
    // The runtime's script runner (`tracedScripts`) binds these to the span the run began in.
    return async (name: string, params: unknown, signal?: AbortSignal): Promise<ScriptToolAnswer> => {
      try {
        const nested = Object.assign({}, request, {
          name,
          params,
          signal: signal ?? request.signal,
          parent: budget,
        });
        const result = await this.dispatch(nested);
        if (result instanceof CallRefusal)
          return { error: result.error, message: result.message, final: true };
        return "route" in result
          ? {
              error: "ClientToolNotCallable",
              message: `'${name}' runs on the client and cannot be called from a script`,
            }
          : result;
      } catch (error) {
        if (error instanceof VanceError) return toolFailureOf(error);
        throw error;
      }
    };
  }

  /**
   * What a tool type's run is handed. Its functions are bound, not closures: a named closure
   * made per call costs ~1 µs in the bundles (esbuild's `keepNames` redefines each one's `name`),
   * and a call made several. The functions bound are methods ({@link CONTEXT_FUNCTIONS}) or class
   * methods, whose `name` keepNames leaves alone: binding a renamed function takes V8's slow path
   * (~0.7 µs). One literal of a fixed shape, `models` set after it: a spread into the literal made
   * the object the slowest part of the call's set-up (~18 µs measured in the service).
   */
  private context(
    request: DispatchRequest,
    budget: CallBudget,
    layer: ResolvedTool["layer"],
  ): InvocationContext {
    const { caller } = request;
    const { models, cascade, secrets } = this.options;
    const context: { -readonly [K in keyof InvocationContext]: InvocationContext[K] } = {
      caller,
      runtime: this.options.runtime,
      networkPolicy: this.options.environment.networkPolicy,
      jsonSchemas: this.options.environment.jsonSchemas,
      signal: request.signal ?? UNCANCELLABLE,
      depth: budget.depth,
      readDocument: CONTEXT_FUNCTIONS.readDocument.bind(null, cascade, caller),
      readHit: cascade.lookup.bind(cascade, caller.tenant, caller.project),
      secret: secrets.lookupFor(caller.tenant, layer),
      secretsFor: secrets.lookupFor.bind(secrets, caller.tenant),
      callTool: this.nestedCall(request, budget),
    };
    if (models)
      context.models = {
        pick: CONTEXT_FUNCTIONS.pickModel.bind(null, models, caller.tenant, request.snapshot.catalog),
      };
    return context;
  }
}

/**
 * A built-in's {@link CallScope}: its discovery surface and its nested calls are made when the
 * built-in first asks for them — most (`whoami`, every call an engine makes of one) never do,
 * and making both is several closures and a copy of the request on every call.
 */
class BuiltInScope implements CallScope {
  readonly scripts: ToolRuntime["scripts"];
  #process: ProcessToolsApi | undefined | null = null;
  #callTool: ReturnType<ToolDispatcher["nestedCall"]> | undefined;

  constructor(
    private readonly dispatcher: ToolDispatcher,
    private readonly request: DispatchRequest,
    readonly budget: CallBudget,
  ) {
    this.scripts = dispatcher.scripts;
  }

  /** The caller's signal, or the one of calls nobody can cancel. */
  get signal(): AbortSignal {
    return this.request.signal ?? UNCANCELLABLE;
  }

  get process(): ProcessToolsApi | undefined {
    if (this.#process === null) this.#process = this.dispatcher.processTools(this.request, this.budget);
    return this.#process;
  }

  callTool(name: string, params: unknown, signal?: AbortSignal): Promise<ScriptToolAnswer> {
    this.#callTool ??= this.dispatcher.nestedCall({ ...this.request, activates: false }, this.budget);
    return this.#callTool(name, params, signal);
  }
}

/**
 * The functions an {@link InvocationContext} binds, as methods: keepNames renames a function
 * declaration, and binding a renamed function costs ~0.7 µs where a method's bind costs ~30 ns.
 */
const CONTEXT_FUNCTIONS = {
  /** `InvocationContext.models.pick` of a call: the caller's tenant's endpoints, read under the call's snapshot. */
  pickModel(
    models: Pick<ModelPicker, "pick">,
    tenant: string,
    catalog: ToolSnapshot["catalog"],
    choice: Parameters<ModelPicker["pick"]>[1],
  ): ReturnType<ModelPicker["pick"]> {
    return models.pick(tenant, choice, catalog);
  },

  /** `InvocationContext.readDocument` of a call: the body of the caller's cascade hit at `path`. */
  async readDocument(cascade: DocumentCascade, caller: CallerContext, path: string): Promise<string | null> {
    return (await cascade.lookup(caller.tenant, caller.project, path))?.body ?? null;
  },
};

/** `input`'s problems against a compiled input schema; an unusable schema is the document's fault. */
function problemsOf(target: CallTarget, schema: CompiledJsonSchema, input: unknown): FieldError[] {
  if (!schema.ok) throw unusableSchema(target, schema.message);
  return schema.validate(input);
}

/** The trace's outcome code of a call: `ok`, `client` (routed to the engine) or the tool's error name. */
function outcomeOf(result: CallResult): string {
  if ("route" in result) return "client";
  return "error" in result && typeof result.error === "string" ? result.error : "ok";
}

/** The tool type a trace names: the document's type, `builtin`, or `client`. */
function typeOf(target: CallTarget): string {
  return target.kind === "client" || target.kind === "builtin" ? target.kind : target.config.type;
}

/** A type this service can configure but not run. */
function unsupported(type: string): CallResult {
  return {
    error: "UnsupportedToolType",
    message: `tools of type '${type}' can be configured but not yet invoked by this service`,
  };
}

/**
 * A tool whose input schema does not compile: its stored document (or the process's spawn
 * declaration) is at fault, not the params, so the caller learns which to fix.
 */
function unusableSchema(target: CallTarget, message: string): VanceError {
  const errors = [{ path: "inputSchema", message: `inputSchema is ${message}` }];
  if (target.kind !== "client") {
    const cause = Errors.validationFailed(`its inputSchema is ${message}`, errors);
    return Errors.invalidDocument(toolDocumentPath(target.name), target.layer, cause);
  }
  return new VanceError(
    "invalid_document",
    `the inputSchema declared at spawn for client tool '${target.name}' is ${message}`,
    errors,
  );
}
