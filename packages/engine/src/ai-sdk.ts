import {
  jsonSchema,
  type LanguageModel,
  type LanguageModelMiddleware,
  type PrepareStepFunction,
  type SystemModelMessage,
  type Tool,
  type ToolSet,
  tool,
  wrapLanguageModel,
} from "ai";
import { type EngineProcess, staticPrefix, type Turn } from "./engine.js";

/**
 * The Vercel AI SDK (`ai` ≥ 7) over an engine process. An unmodified `generateText` /
 * `streamText` loop with `stopWhen` gets from it:
 *
 * - `tools`: the process's whole allow set as AI SDK tools, each executed through `invoke` (client
 *   tools here); schemas and descriptions come from the manifests as tools enter them (a tool not
 *   yet seen is read with `GET T/tools/{name}`, which activates nothing).
 * - `prepareStep`: each step fetches the manifest and narrows `activeTools` to its tools array, so
 *   a tool `tool_description` activated is callable at the very next step; `instructions` are the
 *   system text with the static block (cache-marked for Anthropic), then the demoted block.
 * - `middleware` / `wrap(model)`: a 400 naming the tools array's limit is reported and the step
 *   sent once more with the rebuilt manifest; an empty answer is reported once.
 *
 * One adapter drives one loop at a time (it holds the loop's current turn).
 */
export interface VanceAiSdk {
  readonly tools: ToolSet;
  readonly prepareStep: PrepareStepFunction<ToolSet>;
  readonly middleware: LanguageModelMiddleware;
  /** `model` with {@link middleware} (`wrapLanguageModel`). */
  wrap(model: WrappableModel): LanguageModel;
  /** The turn of the step being run (after `prepareStep`). */
  readonly currentTurn: Turn<"openai"> | undefined;
}

export interface VanceAiSdkOptions {
  /** The engine's system text; the static discovery block follows it. */
  readonly system?: string;
  /** The model (`instance/slug`) a rejection is reported for (default: the process's first). */
  readonly model?: string;
  /** Skill tools every turn is asked `with`. */
  readonly skillTools?: readonly string[];
}

/** A provider's model instance (`openai("…")`, `anthropic("…")`), as `wrapLanguageModel` takes it. */
export type WrappableModel = Parameters<typeof wrapLanguageModel>[0]["model"];
type GenerateOptions = Parameters<NonNullable<LanguageModelMiddleware["wrapGenerate"]>>[0];
type StreamOptions = Parameters<NonNullable<LanguageModelMiddleware["wrapStream"]>>[0];
type CallParams = GenerateOptions["params"];
type Prompt = CallParams["prompt"];
type GenerateResult = Awaited<ReturnType<GenerateOptions["doGenerate"]>>;
type StreamResult = Awaited<ReturnType<StreamOptions["doStream"]>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer Part> ? Part : never;

const ANTHROPIC_CACHE_MARKER = { anthropic: { cacheControl: { type: "ephemeral" } } } as const;

/** The step's system messages: the static prefix (cache-marked), then the demoted block if any. */
function instructionsOf(system: string | undefined, turn: Turn): SystemModelMessage[] {
  const prefix = staticPrefix(system, turn);
  return [
    ...(prefix
      ? [{ role: "system" as const, content: prefix, providerOptions: ANTHROPIC_CACHE_MARKER }]
      : []),
    ...(turn.demotedBlock ? [{ role: "system" as const, content: turn.demotedBlock }] : []),
  ];
}

/** The step's call rebuilt for a new turn: its tools narrowed, its demoted block replaced. */
function rebuiltParams(
  params: CallParams,
  before: Turn,
  after: Turn,
  system: string | undefined,
): CallParams {
  const names = new Set(after.toolNames);
  const tools = params.tools?.filter((wire) => wire.type !== "function" || names.has(wire.name));
  const prefix = staticPrefix(system, before);
  const prompt: Prompt = [];
  for (const message of params.prompt) {
    if (message.role === "system" && before.demotedBlock && message.content === before.demotedBlock) continue;
    prompt.push(message);
    if (message.role === "system" && message.content === prefix && after.demotedBlock) {
      prompt.push({ role: "system", content: after.demotedBlock });
    }
  }
  return { ...params, prompt, ...(tools ? { tools } : {}) };
}

/** The prompt as the empty-response diagnosis reads it: tool calls and results carry their names. */
function conversationOf(prompt: Prompt) {
  return prompt.map((message) => ({
    role: message.role,
    content:
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) =>
            part.type === "tool-call"
              ? { type: part.type, name: part.toolName, input: part.input }
              : part.type === "tool-result"
                ? { type: part.type, name: part.toolName, content: JSON.stringify(part.output) }
                : part,
          ),
  }));
}

const offeredOf = (params: CallParams) =>
  (params.tools ?? []).flatMap((wire) => (wire.type === "function" ? [wire.name] : []));

const isAnswer = (part: { type: string; text?: string }) =>
  part.type === "tool-call" || (part.type === "text" && (part.text ?? "").trim() !== "");

/** The AI SDK adapter for `process` (its first manifest is read to know the floor's tools). */
export async function vanceAiSdk(
  process: EngineProcess,
  options: VanceAiSdkOptions = {},
): Promise<VanceAiSdk> {
  const skillTools = options.skillTools ?? [];
  const schemas = new Map<string, Record<string, unknown>>();
  const descriptions = new Map<string, string>();
  let current: Turn<"openai"> | undefined;

  const learn = (turn: Turn<"openai">) => {
    for (const wire of turn.tools) {
      schemas.set(wire.function.name, wire.function.parameters);
      descriptions.set(wire.function.name, wire.function.description);
    }
  };
  const schemaOf = async (name: string): Promise<Record<string, unknown>> => {
    const known = schemas.get(name) ?? process.clientTools.get(name)?.inputSchema;
    if (known) return known;
    const view = await process.project.tool(name);
    return view.inputSchema as Record<string, unknown>;
  };

  const first = await process.turn({ format: "openai", skillTools });
  learn(first);
  const names = new Set([...process.allowedTools, ...first.toolNames, ...process.clientTools.keys()]);
  const tools: ToolSet = {};
  for (const name of names) {
    const vanceTool: Tool<Record<string, unknown>, unknown> = tool({
      description: () => descriptions.get(name) ?? process.clientTools.get(name)?.description ?? name,
      inputSchema: jsonSchema<Record<string, unknown>>(() => schemaOf(name) as never),
      execute: async (input, { toolCallId }) => {
        const result = await process.handleToolCall(
          { name, arguments: input, id: toolCallId },
          { skillTools: current?.skillTools ?? skillTools },
        );
        return result.ok ? result.value : { error: result.error, message: result.message };
      },
    });
    tools[name] = vanceTool;
  }

  let pendingFirst: Turn<"openai"> | undefined = first;
  const prepareStep: PrepareStepFunction<ToolSet> = async () => {
    // The first step uses the manifest read to build the tools; every later one reads its own.
    const turn = pendingFirst ?? (await process.turn({ format: "openai", skillTools }));
    pendingFirst = undefined;
    learn(turn);
    current = turn;
    return {
      activeTools: turn.toolNames.filter((name) => name in tools),
      instructions: instructionsOf(options.system, turn),
    };
  };

  /** Sends the step; on a tool-limit rejection, the same step once more with the rebuilt turn. */
  async function resilient<R>(
    params: CallParams,
    send: () => PromiseLike<R>,
    resend: (params: CallParams) => PromiseLike<R>,
  ): Promise<{ result: R; params: CallParams }> {
    try {
      return { result: await send(), params };
    } catch (error) {
      const turn = current;
      if (!turn) throw error;
      const rebuilt = await process.onProviderError(error, turn, options);
      learn(rebuilt);
      current = rebuilt;
      const retried = rebuiltParams(params, turn, rebuilt, options.system);
      try {
        return { result: await resend(retried), params: retried };
      } catch (again) {
        await process.onProviderError(again, rebuilt, options);
        throw again;
      }
    }
  }

  const reportEmpty = (params: CallParams, finishReason: string, requestId: string) =>
    process.onEmptyResponse({
      requestId,
      messages: conversationOf(params.prompt),
      offeredTools: offeredOf(params),
      finishReason,
    });

  const middleware: LanguageModelMiddleware = {
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const requestId = globalThis.crypto.randomUUID();
      const sent = await resilient<GenerateResult>(params, doGenerate, (retried) =>
        model.doGenerate(retried),
      );
      if (!sent.result.content.some(isAnswer)) {
        await reportEmpty(sent.params, sent.result.finishReason.unified, requestId);
      }
      return sent.result;
    },
    wrapStream: async ({ doStream, params, model }) => {
      const requestId = globalThis.crypto.randomUUID();
      const sent = await resilient<StreamResult>(params, doStream, (retried) => model.doStream(retried));
      let answered = false;
      const watch = new TransformStream<StreamPart, StreamPart>({
        async transform(part, controller) {
          if (part.type === "tool-call" || (part.type === "text-delta" && part.delta.trim() !== ""))
            answered = true;
          // The report is posted before the stream finishes, so the loop's step ends after it.
          if (part.type === "finish" && !answered) {
            await reportEmpty(sent.params, part.finishReason.unified, requestId);
          }
          controller.enqueue(part);
        },
      });
      return { ...sent.result, stream: sent.result.stream.pipeThrough(watch) };
    },
  };

  return {
    tools,
    prepareStep,
    middleware,
    wrap: (model) => wrapLanguageModel({ model, middleware }),
    get currentTurn() {
      return current;
    },
  };
}
