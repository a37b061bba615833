import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import type {
  BuiltInTool,
  CallScope,
  NestedCall,
  ProcessToolsApi,
  ToolOutcome,
} from "../calls/built-in-tool";
import { CallBudget } from "../calls/call-budget";
import type { DocumentCascade } from "../cascade/document-cascade";
import { VanceError } from "../errors";
import type { JsonSchema } from "../json-schema";
import { createNetworkPolicy } from "../net/network-policy";
import type { ProcessRecord } from "../ports/process-store";
import type { ScriptRunner, ToolRuntime } from "../ports/tool-runtime";
import type { InvocationContext } from "../tool-types/tool-type";
import { foundTool, type ResolvedTool, type ToolLookup } from "../tools/resolved-tool";
import type { ToolSnapshot } from "../tools/tool-snapshot";
import { JsonSchemaValidator } from "../validation/json-schema-validator";
import { type DispatchRequest, ToolDispatcher } from "./tool-dispatcher";

// The dispatcher over in-memory ports: a snapshot that resolves names from a map, tool types
// whose `invoke` records what it was handed, a script runner that answers as told. What is
// checked is what a caller of a tool sees: which tool runs, with what, and how refusals come back.

const OBJECT_WITH_QUERY: JsonSchema = {
  type: "object",
  properties: { query: { type: "string" } },
  required: ["query"],
  additionalProperties: false,
};

interface Invocation {
  readonly tool: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly context: InvocationContext;
}

/** A tool document of a type whose `invoke` records the call and answers `answer(input, context)`. */
function documentTool(
  name: string,
  invocations: Invocation[],
  answer: (
    input: Readonly<Record<string, unknown>>,
    context: InvocationContext,
  ) => Promise<ToolOutcome> = async (input) => ({ value: { echoed: input } }),
  inputSchema: JsonSchema = OBJECT_WITH_QUERY,
): ResolvedTool {
  return {
    kind: "document",
    name,
    layer: "project",
    etag: "e",
    config: { name, type: "fake", description: `Does ${name}.`, labels: [], parameters: {} },
    inputSchema,
    type: {
      invoke: async (
        _config: unknown,
        _parameters: unknown,
        input: Readonly<Record<string, unknown>>,
        context: InvocationContext,
      ) => {
        invocations.push({ tool: name, input, context });
        return answer(input, context);
      },
    },
  } as unknown as ResolvedTool;
}

/** A built-in tool (layer `builtin`) whose `invoke` runs `body` with its scope. */
function builtInTool(
  name: string,
  body: (input: Readonly<Record<string, unknown>>, scope: CallScope) => Promise<ToolOutcome>,
): ResolvedTool {
  const builtIn: BuiltInTool = {
    name,
    description: `Built-in ${name}.`,
    labels: [],
    primary: true,
    inputSchema: { type: "object" },
    invoke: (input, _caller, scope) => body(input, scope),
  };
  return {
    kind: "builtin",
    name,
    layer: "builtin",
    etag: null,
    config: { name, type: "builtin", description: builtIn.description, labels: [], parameters: {} },
    inputSchema: builtIn.inputSchema,
    builtIn,
  } as unknown as ResolvedTool;
}

/** A snapshot resolving names from `tools`; other lookups (disabled, source unavailable …) as `special` says. */
function snapshotOf(tools: readonly ResolvedTool[], special: Record<string, () => ToolLookup> = {}) {
  const lookups: string[] = [];
  const lookup = async (name: string): Promise<ToolLookup> => {
    lookups.push(name);
    const answer = special[name];
    if (answer) return answer();
    const tool = tools.find((each) => each.name === name);
    return tool ? { status: "found", tool } : { status: "not_found" };
  };
  const snapshot: Pick<ToolSnapshot, "lookup" | "require"> = {
    lookup,
    require: async (name) => foundTool(name, await lookup(name)),
  };
  return { snapshot: snapshot as ToolSnapshot, lookups };
}

/** A dispatcher over in-memory ports; its scripts answer with `scripts`, its calls are counted by outcome. */
function dispatcherWith(options: { scripts?: ScriptRunner; maxDepth?: number } = {}) {
  const calls: { tool: string; type: string; outcome: string }[] = [];
  const runtime: ToolRuntime = {
    fetch: () => Promise.reject(new Error("no network in this test")),
    resolveHost: async () => [],
    scripts: options.scripts ?? { run: async () => ({ ok: true, value: null }) },
    now: () => 0,
  };
  const documents: Pick<DocumentCascade, "lookup"> = { lookup: async () => null };
  const dispatcher = new ToolDispatcher({
    cascade: documents as DocumentCascade,
    runtime,
    environment: { networkPolicy: createNetworkPolicy([]), jsonSchemas: new JsonSchemaValidator() },
    secrets: { lookupFor: () => async () => undefined },
    ...(options.maxDepth !== undefined ? { callLimits: { maxDepth: options.maxDepth } } : {}),
    metrics: { toolCall: ({ tool, type, outcome }) => calls.push({ tool, type, outcome }) },
  });
  return { dispatcher, calls };
}

function request(
  snapshot: ToolSnapshot,
  name: string,
  params: unknown,
  extra: Partial<DispatchRequest> = {},
): DispatchRequest {
  return {
    caller: { tenant: "acme", project: "shop" },
    name,
    params,
    allowedTools: null,
    snapshot,
    ...extra,
  };
}

const allow = (...names: string[]) => new Set(names);

describe("ToolDispatcher: which tool runs", () => {
  it("runs a configured tool with the params, answers its outcome and times it, and counts the call by type and outcome", async () => {
    const invocations: Invocation[] = [];
    const { snapshot } = snapshotOf([documentTool("search", invocations)]);
    const { dispatcher, calls } = dispatcherWith();
    const result = await dispatcher.invoke(request(snapshot, "search", { query: "shoes" }));
    expect(result).toMatchObject({ value: { echoed: { query: "shoes" } } });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(invocations.map(({ tool, input, context }) => ({ tool, input, depth: context.depth }))).toEqual([
      { tool: "search", input: { query: "shoes" }, depth: 0 },
    ]);
    expect(invocations[0]?.context.caller).toEqual({ tenant: "acme", project: "shop" });
    expect(calls).toEqual([{ tool: "search", type: "fake", outcome: "ok" }]);
  });

  it("routes a client tool the process declared to the client, unless a configured tool has its name", async () => {
    const invocations: Invocation[] = [];
    const { snapshot } = snapshotOf([documentTool("search", invocations)]);
    const { dispatcher, calls } = dispatcherWith();
    const clientTools = [
      { name: "ask_user", description: "Asks the user.", inputSchema: { type: "object" } },
      { name: "search", description: "The engine's own search.", inputSchema: { type: "object" } },
    ];
    expect(
      await dispatcher.invoke(request(snapshot, "ask_user", { question: "Which size?" }, { clientTools })),
    ).toMatchObject({
      route: "client",
      name: "ask_user",
      params: { question: "Which size?" },
    });
    // The configured tool wins over the declaration of the same name.
    expect(
      await dispatcher.invoke(request(snapshot, "search", { query: "x" }, { clientTools })),
    ).toMatchObject({
      value: { echoed: { query: "x" } },
    });
    expect(calls.map((call) => `${call.tool}:${call.type}:${call.outcome}`)).toEqual([
      "ask_user:client:client",
      "search:fake:ok",
    ]);
  });

  it("answers a tool's own failure as a value, not a refusal", async () => {
    const { snapshot } = snapshotOf([
      documentTool("flaky", [], async () => ({
        error: "UpstreamError",
        message: "HTTP 502 from the upstream",
      })),
    ]);
    const { dispatcher, calls } = dispatcherWith();
    expect(await dispatcher.invoke(request(snapshot, "flaky", { query: "x" }))).toMatchObject({
      error: "UpstreamError",
      message: "HTTP 502 from the upstream",
    });
    expect(calls).toEqual([{ tool: "flaky", type: "fake", outcome: "UpstreamError" }]);
  });

  it("answers UnsupportedToolType for a type it can configure but not run", async () => {
    const tool = { ...documentTool("later", []), type: {} } as ResolvedTool;
    const { dispatcher } = dispatcherWith();
    expect(
      await dispatcher.invoke(request(snapshotOf([tool]).snapshot, "later", { query: "x" })),
    ).toMatchObject({
      error: "UnsupportedToolType",
      message: "tools of type 'fake' can be configured but not yet invoked by this service",
    });
  });
});

describe("ToolDispatcher: refusals the caller must fix", () => {
  it("refuses a name outside the allow set before resolving it", async () => {
    const invocations: Invocation[] = [];
    const { snapshot, lookups } = snapshotOf([
      documentTool("search", invocations),
      documentTool("delete", invocations),
    ]);
    const { dispatcher, calls } = dispatcherWith();
    await expect(
      dispatcher.invoke(request(snapshot, "delete", { query: "x" }, { allowedTools: allow("search") })),
    ).rejects.toMatchObject({ code: "tool_not_allowed", status: 403 });
    expect(lookups).toEqual([]);
    expect(invocations).toEqual([]);
    expect(calls).toEqual([{ tool: "delete", type: "unresolved", outcome: "tool_not_allowed" }]);
  });

  it("refuses an unknown name, and a disabled one, with their codes", async () => {
    const { snapshot } = snapshotOf([], { off: () => ({ status: "disabled", layer: "tenant" }) });
    const { dispatcher } = dispatcherWith();
    await expect(dispatcher.invoke(request(snapshot, "nothing", {}))).rejects.toMatchObject({
      code: "tool_not_found",
      status: 404,
    });
    await expect(dispatcher.invoke(request(snapshot, "off", {}))).rejects.toMatchObject({
      code: "tool_disabled",
      message: "tool 'off' is disabled in the tenant layer",
    });
  });

  it("refuses params that do not match the input schema, naming the fields, and runs nothing", async () => {
    const invocations: Invocation[] = [];
    const { snapshot } = snapshotOf([documentTool("search", invocations)]);
    const { dispatcher } = dispatcherWith();
    await expect(
      dispatcher.invoke(request(snapshot, "search", { query: 7, extra: true })),
    ).rejects.toMatchObject({
      code: "invalid_params",
      status: 422,
      errors: [
        { path: "extra", message: "must NOT have additional properties" },
        { path: "query", message: "must be string" },
      ],
    });
    // Absent params are an empty object: the required field is missing.
    await expect(dispatcher.invoke(request(snapshot, "search", undefined))).rejects.toMatchObject({
      code: "invalid_params",
      errors: [{ path: "query", message: "must have required property 'query'" }],
    });
    expect(invocations).toEqual([]);
  });

  it("blames the tool's document, not the params, when its input schema does not compile", async () => {
    const { snapshot } = snapshotOf([
      documentTool("broken", [], undefined, {
        type: "object",
        properties: { a: { type: "no-such-type" } },
      } as JsonSchema),
    ]);
    const { dispatcher } = dispatcherWith();
    const refused = await dispatcher.invoke(request(snapshot, "broken", {})).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(VanceError);
    expect(refused).toMatchObject({ code: "invalid_document", errors: [{ path: "inputSchema" }] });
    expect((refused as VanceError).message).toContain("'server-tools/broken.yaml' in the project layer");
  });

  it("refuses a call of a pack document itself, naming its sub-tools", async () => {
    const packDocument = {
      ...documentTool("jira", []),
      type: { sourcing: { kind: "pack" } },
    } as unknown as ResolvedTool;
    const { dispatcher } = dispatcherWith();
    await expect(
      dispatcher.invoke(request(snapshotOf([packDocument]).snapshot, "jira", { query: "x" })),
    ).rejects.toMatchObject({
      code: "tool_not_found",
      message: expect.stringContaining("'jira' is a pack, not a tool: call its sub-tools jira__{op}"),
    });
  });

  it("answers a pack sub-tool whose source gave no list yet as the tool's failure, to try again", async () => {
    const { snapshot } = snapshotOf([], {
      jira__search: () => {
        throw new VanceError("source_unavailable", "the source of pack 'jira' has given no list yet");
      },
    });
    const { dispatcher } = dispatcherWith();
    expect(await dispatcher.invoke(request(snapshot, "jira__search", {}))).toMatchObject({
      error: "SourceUnavailable",
      message: "the source of pack 'jira' has given no list yet",
    });
  });
});

describe("ToolDispatcher: the signal a call runs with", () => {
  /** A tool body that listens on its call's signal while it waits, as a queued script run does. */
  function waitingOn(signal: AbortSignal, gate: Promise<void>, arrived: () => void): Promise<ToolOutcome> {
    const onAbort = () => undefined;
    signal.addEventListener("abort", onAbort, { once: true });
    arrived();
    return gate.then(() => {
      signal.removeEventListener("abort", onAbort);
      return { value: "done" };
    });
  }

  it("gives calls nobody can cancel a signal that never aborts and keeps none of their listeners: 12 calls in flight leave none on it", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inFlight = 0;
    let allIn: () => void = () => undefined;
    const everyoneIn = new Promise<void>((resolve) => {
      allIn = resolve;
    });
    const arrived = () => {
      inFlight += 1;
      if (inFlight === 12) allIn();
    };
    const signals: AbortSignal[] = [];
    const invocations: Invocation[] = [];
    const configured = documentTool("configured", invocations, (_input, context) => {
      signals.push(context.signal);
      return waitingOn(context.signal, gate, arrived);
    });
    const builtIn = builtInTool("built_in", (_input, scope) => {
      signals.push(scope.signal);
      return waitingOn(scope.signal, gate, arrived);
    });
    const { snapshot } = snapshotOf([configured, builtIn]);
    const { dispatcher } = dispatcherWith();
    const calls = Array.from({ length: 12 }, (_, index) =>
      index % 2 === 0
        ? dispatcher.invoke(request(snapshot, "configured", { query: `q${index}` }))
        : dispatcher.invoke(request(snapshot, "built_in", {})),
    );
    await everyoneIn;
    expect(new Set(signals).size).toBe(1);
    const [shared] = signals;
    expect(shared?.aborted).toBe(false);
    expect(getEventListeners(shared!, "abort")).toHaveLength(0);
    release();
    expect((await Promise.all(calls)).map((result) => "value" in result && result.value)).toEqual(
      Array(12).fill("done"),
    );
    expect(getEventListeners(shared!, "abort")).toHaveLength(0);
  });

  it("hands a caller's own signal on as it is, to a configured tool and a built-in alike", async () => {
    const caller = new AbortController();
    const seen: AbortSignal[] = [];
    const invocations: Invocation[] = [];
    const configured = documentTool("configured", invocations, async (_input, context) => {
      seen.push(context.signal);
      return { value: null };
    });
    const builtIn = builtInTool("built_in", async (_input, scope) => {
      seen.push(scope.signal);
      return { value: null };
    });
    const { snapshot } = snapshotOf([configured, builtIn]);
    const { dispatcher } = dispatcherWith();
    await dispatcher.invoke(request(snapshot, "configured", { query: "q" }, { signal: caller.signal }));
    await dispatcher.invoke(request(snapshot, "built_in", {}, { signal: caller.signal }));
    // By identity: two signals never aborted are deeply equal.
    expect(seen.map((signal) => signal === caller.signal)).toEqual([true, true]);
  });
});

describe("ToolDispatcher: calls nested in a call", () => {
  it("hands a tool's nested calls the caller's allow set, one level deeper, and answers refusals as values", async () => {
    const invocations: Invocation[] = [];
    const inner = documentTool("inner", invocations);
    const outer = documentTool("outer", invocations, async (_input, context) => {
      const allowed = await context.callTool("inner", { query: "nested" });
      const refused = await context.callTool("secret_tool", { query: "x" });
      const unknown = await context.callTool("nothing", {});
      return { value: { allowed, refused, unknown } };
    });
    const { snapshot } = snapshotOf([inner, outer, documentTool("secret_tool", invocations)]);
    const { dispatcher } = dispatcherWith();
    const result = await dispatcher.invoke(
      request(snapshot, "outer", { query: "x" }, { allowedTools: allow("outer", "inner", "nothing") }),
    );
    expect(result).toMatchObject({
      value: {
        allowed: { value: { echoed: { query: "nested" } } },
        refused: {
          error: "ToolNotAllowed",
          message: "tool 'secret_tool' is not in the caller's allowed tools",
        },
        unknown: { error: "ToolNotFound", message: "no tool named 'nothing'" },
      },
    });
    expect(invocations.map((each) => `${each.tool}@${each.context.depth}`)).toEqual(["outer@0", "inner@1"]);
  });

  it("refuses a call past the depth limit as final, so a script stops asking", async () => {
    const invocations: Invocation[] = [];
    // `deep` calls itself until it is refused, and answers what refused it.
    const deep = documentTool("deep", invocations, async (_input, context) => {
      const answer = await context.callTool("deep", { query: "again" });
      return "error" in answer ? { value: { refused: answer } } : answer;
    });
    const { dispatcher } = dispatcherWith({ maxDepth: 3 });
    const result = await dispatcher.invoke(request(snapshotOf([deep]).snapshot, "deep", { query: "x" }));
    expect(invocations.map((each) => each.context.depth)).toEqual([0, 1, 2, 3]);
    expect(result).toMatchObject({ value: { refused: { error: "CallDepthExceeded", final: true } } });
  });

  it("makes a full sandbox (Busy) a 429 for the top-level call, and a value for a nested one", async () => {
    const busy: ScriptRunner = {
      run: async () => ({ ok: false, error: "Busy", message: "the tenant's runs are full" }),
    };
    const scripted = builtInTool("run_script", async (_input, scope) => {
      const outcome = await scope.scripts.run({
        source: "1",
        inputs: {},
        timeoutMs: 1_000,
        tenant: "acme",
        nested: false,
        signal: scope.signal,
      });
      return outcome.ok ? { value: outcome.value } : { error: outcome.error, message: outcome.message };
    });
    const caller = builtInTool("caller", async (_input, scope) => ({
      value: await scope.callTool("run_script", {}),
    }));
    const { snapshot } = snapshotOf([scripted, caller]);
    const { dispatcher, calls } = dispatcherWith({ scripts: busy });
    await expect(dispatcher.invoke(request(snapshot, "run_script", {}))).rejects.toMatchObject({
      code: "busy",
      status: 429,
    });
    expect(await dispatcher.invoke(request(snapshot, "caller", {}))).toMatchObject({
      value: { error: "Busy", message: "the tenant's runs are full" },
    });
    // A call handed its parent's budget is nested too, however it arrives.
    expect(
      await dispatcher.invoke(request(snapshot, "run_script", {}, { parent: CallBudget.start() })),
    ).toMatchObject({ error: "Busy" });
    expect(calls.map((call) => `${call.tool}:${call.type}:${call.outcome}`)).toEqual([
      "run_script:builtin:Busy",
      "run_script:builtin:Busy",
      "caller:builtin:ok",
      "run_script:builtin:Busy",
    ]);
  });

  it("lets no script call a client tool: it runs on the engine's side", async () => {
    const caller = builtInTool("caller", async (_input, scope) => ({
      value: await scope.callTool("ask_user", {}),
    }));
    const { dispatcher } = dispatcherWith();
    const clientTools = [{ name: "ask_user", description: "Asks.", inputSchema: { type: "object" } }];
    expect(
      await dispatcher.invoke(request(snapshotOf([caller]).snapshot, "caller", {}, { clientTools })),
    ).toMatchObject({
      value: {
        error: "ClientToolNotCallable",
        message: "'ask_user' runs on the client and cannot be called from a script",
      },
    });
  });

  it("binds a built-in to its process's discovery surface: its calls nested, its skills passed on; what a built-in calls activates nothing", async () => {
    const invocations: Invocation[] = [];
    const bound: {
      processId: string;
      skills: readonly string[];
      activates: boolean;
      invokeTool?: boolean;
    }[] = [];
    const discovery = {
      forProcess: (
        record: ProcessRecord,
        call: NestedCall,
        skills: readonly string[] = [],
        options: { activates: boolean; invokeTool?: boolean },
      ): ProcessToolsApi => {
        bound.push({
          processId: record.processId,
          skills,
          activates: options.activates,
          invokeTool: options.invokeTool,
        });
        const unused = async (): Promise<ToolOutcome> => ({ error: "Unused", message: "not in this test" });
        return {
          list: unused,
          describe: unused,
          search: unused,
          invoke: async (name, params) => {
            const result = await call(name, params);
            return "route" in result ? { error: "Routed", message: name } : result;
          },
          countCalls: async () => {},
        };
      },
    };
    // A meta-tool calling through the surface; a script-like built-in calling the meta-tool.
    const meta = builtInTool("invoke_tool", async (input, scope) =>
      scope.process
        ? scope.process.invoke(String(input.name), input.params)
        : { error: "ProcessRequired", message: "" },
    );
    const runner = builtInTool("runner", async (_input, scope) => ({
      value: await scope.callTool("invoke_tool", { name: "inner", params: { query: "from a script" } }),
    }));
    const { snapshot } = snapshotOf([meta, runner, documentTool("inner", invocations)]);
    const runtime: ToolRuntime = {
      fetch: () => Promise.reject(new Error("no network in this test")),
      resolveHost: async () => [],
      scripts: { run: async () => ({ ok: true, value: null }) },
      now: () => 0,
    };
    const dispatcher = new ToolDispatcher({
      cascade: { lookup: async () => null } as Pick<DocumentCascade, "lookup"> as DocumentCascade,
      runtime,
      environment: { networkPolicy: createNetworkPolicy([]), jsonSchemas: new JsonSchemaValidator() },
      secrets: { lookupFor: () => async () => undefined },
      discovery,
    });
    const process = { processId: "p-1" } as ProcessRecord;
    const allowedTools = allow("invoke_tool", "runner", "inner");

    const direct = await dispatcher.invoke(
      request(
        snapshot,
        "invoke_tool",
        { name: "inner", params: { query: "x" } },
        { process, allowedTools, skillTools: ["inner"] },
      ),
    );
    expect(direct).toMatchObject({ value: { echoed: { query: "x" } } });
    const scripted = await dispatcher.invoke(request(snapshot, "runner", {}, { process, allowedTools }));
    expect(scripted).toMatchObject({ value: { value: { echoed: { query: "from a script" } } } });

    expect(bound).toEqual([
      { processId: "p-1", skills: ["inner"], activates: true, invokeTool: true },
      // `runner` never reads its process surface, so none is bound for it (a built-in's surface
      // is made when it first asks); the meta-tool it called gets one, which activates nothing.
      { processId: "p-1", skills: [], activates: false, invokeTool: true },
    ]);
    expect(invocations.map((each) => `${each.tool}@${each.context.depth}`)).toEqual(["inner@1", "inner@2"]);
  });
});
