import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { MessageLike } from "@vance/engine/anthropic";
import type { ChatCompletionLike } from "@vance/engine/openai";

/**
 * Scripted model endpoints on 127.0.0.1 for engine tests: an OpenAI-compatible one (Chat
 * Completions and Responses) and an Anthropic-compatible one (Messages), each streamed (SSE) or
 * not, as the real SDKs read them. Each request that passes the endpoint's own checks takes the
 * next reply of the script; the checks are the ones the spec saw in the wild:
 *
 * - `maxTools`: a tools array longer than it is refused with HTTP 400 and the provider's real
 *   error (OpenAI's `array_above_max_length`; the pydantic list error Anthropic-style validators
 *   send), before any reply is taken — no inference, as with the real endpoints.
 * - `dropUnknownStreamedCalls`: a streamed tool call to a name outside the request's `tools` is
 *   silently left out (restricted tool-call decoding, observed behind vLLM): the turn arrives empty.
 */

/** One reply of a script: text, tool calls, or neither (an empty answer). */
export interface ScriptedReply {
  readonly text?: string;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
  /** Default: `tool_calls` / `tool_use` with calls, else `stop` / `end_turn`. `length` for a token wall. */
  readonly finishReason?: "stop" | "length";
}

/** A request the endpoint received, with what the tests look at most. */
export interface ProviderRequest {
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly stream: boolean;
  readonly toolNames: readonly string[];
  /** Refused for its tools array (`maxTools`). */
  readonly refused: boolean;
  /** Streamed tool calls the endpoint dropped (`dropUnknownStreamedCalls`). */
  readonly dropped: readonly string[];
}

export interface FakeProviderOptions {
  readonly maxTools?: number;
  readonly dropUnknownStreamedCalls?: boolean;
  /** The replies, in order; a function of the request for replies that depend on it. */
  readonly script?: readonly (ScriptedReply | ((request: ProviderRequest) => ScriptedReply))[];
}

export interface FakeProvider {
  /** The API root an SDK takes as `baseURL`, ending in `/v1`. */
  readonly baseUrl: string;
  readonly requests: ProviderRequest[];
  /** Replaces the script (and its position) from the next request on. */
  script(replies: NonNullable<FakeProviderOptions["script"]>): void;
  /**
   * Sets the tools-array limit from the next request on (`undefined`: none), and the number its
   * error names (default: the limit itself; another one makes an endpoint that misstates it).
   */
  limit(maxTools: number | undefined, claimed?: number): void;
  close(): Promise<void>;
}

type Wire = "openai" | "anthropic";

/** OpenAI's rejection of a long tools array, word for word (spec §14). */
export function openAiToolLimitError(maxTools: number, length: number) {
  return {
    error: {
      message: `Invalid 'tools': array too long. Expected an array with maximum length ${maxTools}, but got an array with length ${length} instead.`,
      type: "invalid_request_error",
      param: "tools",
      code: "array_above_max_length",
    },
  };
}

/** The pydantic list error Anthropic-style validators answer for a long tools array. */
export function anthropicToolLimitError(maxTools: number, length: number) {
  return {
    type: "error",
    error: {
      type: "invalid_request_error",
      message: `tools: List should have at most ${maxTools} items after validation, not ${length}`,
    },
  };
}

function toolNamesOf(wire: Wire, path: string, body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : [];
  return tools.map((tool) => {
    if (wire === "anthropic" || path.endsWith("/responses")) return String(tool.name);
    return String((tool.function as { name?: unknown } | undefined)?.name);
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Writes server-sent events: `data:` lines (with `event:` names for Responses and Anthropic). */
function sse(res: ServerResponse, events: readonly { event?: string; data: unknown }[]) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    res.write(
      `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
    );
  }
  res.end();
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function chatCompletion(reply: Reply, model: string, stream: boolean, res: ServerResponse) {
  const finish = reply.finishReason ?? (reply.calls.length > 0 ? "tool_calls" : "stop");
  const toolCalls = reply.calls.map((call, index) => ({
    id: `call_${reply.serial}_${index}`,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  // One id per completion, as OpenAI answers: LangGraph's message list merges messages by id.
  const base = { id: `chatcmpl-fake-${reply.serial}`, created: 1_700_000_000, model };
  if (!stream) {
    send(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: finish,
        },
      ],
      usage: USAGE,
    });
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    data: {
      ...base,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    },
  });
  sse(res, [
    chunk({ role: "assistant", content: "" }),
    ...(reply.text ? [chunk({ content: reply.text })] : []),
    ...toolCalls.map((call, index) => chunk({ tool_calls: [{ index, ...call }] })),
    chunk({}, finish),
    { data: { ...base, object: "chat.completion.chunk", choices: [], usage: USAGE } },
    { data: "[DONE]" },
  ]);
}

function responsesAnswer(reply: Reply, model: string, stream: boolean, res: ServerResponse) {
  const output: Record<string, unknown>[] = [];
  if (reply.text) {
    output.push({
      type: "message",
      id: "msg_fake",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    });
  }
  reply.calls.forEach((call, index) => {
    output.push({
      type: "function_call",
      id: `fc_${reply.serial}_${index}`,
      call_id: `call_${reply.serial}_${index}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: "completed",
    });
  });
  const length = reply.finishReason === "length";
  const response = {
    id: "resp_fake",
    object: "response",
    created_at: 1_700_000_000,
    model,
    status: length ? "incomplete" : "completed",
    incomplete_details: length ? { reason: "max_output_tokens" } : null,
    error: null,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  };
  if (!stream) {
    send(res, 200, response);
    return;
  }
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => ({
    event: type,
    data: { type, sequence_number: sequence++, ...data },
  });
  const events = [
    event("response.created", { response: { ...response, status: "in_progress", output: [] } }),
  ];
  output.forEach((item, index) => {
    events.push(event("response.output_item.added", { output_index: index, item }));
    events.push(event("response.output_item.done", { output_index: index, item }));
  });
  events.push(event(length ? "response.incomplete" : "response.completed", { response }));
  sse(res, events);
}

function anthropicMessage(reply: Reply, model: string, stream: boolean, res: ServerResponse) {
  const content: Record<string, unknown>[] = [];
  if (reply.text) content.push({ type: "text", text: reply.text });
  reply.calls.forEach((call, index) => {
    content.push({
      type: "tool_use",
      id: `toolu_${reply.serial}_${index}`,
      name: call.name,
      input: call.arguments,
    });
  });
  const stopReason =
    reply.finishReason === "length" ? "max_tokens" : reply.calls.length > 0 ? "tool_use" : "end_turn";
  const message = {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
  if (!stream) {
    send(res, 200, message);
    return;
  }
  const events: { event: string; data: Record<string, unknown> }[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { input_tokens: 10, output_tokens: 0 },
        },
      },
    },
  ];
  content.forEach((block, index) => {
    const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: start },
    });
    const delta =
      block.type === "text"
        ? { type: "text_delta", text: block.text }
        : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
    events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta } });
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  sse(res, events);
}

interface Reply {
  /** Unique within the endpoint's life, so call ids never repeat across turns (SDKs check). */
  readonly serial: number;
  readonly text: string | undefined;
  readonly calls: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
  readonly finishReason: "stop" | "length" | undefined;
}

async function startFake(wire: Wire, options: FakeProviderOptions): Promise<FakeProvider> {
  const requests: ProviderRequest[] = [];
  let script = [...(options.script ?? [])];
  let maxTools = options.maxTools;
  let claimed: number | undefined;
  const paths = wire === "openai" ? ["/v1/chat/completions", "/v1/responses"] : ["/v1/messages"];

  const handle = (req: IncomingMessage, res: ServerResponse, text: string) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (req.method !== "POST" || !paths.includes(path)) {
      send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "not_found" } });
      return;
    }
    const body = JSON.parse(text) as Record<string, unknown>;
    const toolNames = toolNamesOf(wire, path, body);
    const stream = body.stream === true;
    const refused = maxTools !== undefined && toolNames.length > maxTools;
    if (refused) {
      requests.push({ path, body, stream, toolNames, refused, dropped: [] });
      const named = claimed ?? maxTools!;
      const error =
        wire === "openai"
          ? openAiToolLimitError(named, toolNames.length)
          : anthropicToolLimitError(named, toolNames.length);
      send(res, 400, error);
      return;
    }
    const step = script.shift();
    const partial: ProviderRequest = { path, body, stream, toolNames, refused, dropped: [] };
    const scripted =
      typeof step === "function" ? step(partial) : (step ?? { text: "(the script has ended)" });
    const offered = new Set(toolNames);
    const drop = stream && options.dropUnknownStreamedCalls === true;
    const calls = (scripted.toolCalls ?? []).filter((call) => !drop || offered.has(call.name));
    const dropped = (scripted.toolCalls ?? [])
      .filter((call) => !calls.includes(call))
      .map((call) => call.name);
    requests.push({ ...partial, dropped });
    const reply: Reply = {
      serial: requests.length,
      text: scripted.text,
      calls,
      finishReason: scripted.finishReason,
    };
    const model = String(body.model ?? "fake-model");
    if (wire === "anthropic") anthropicMessage(reply, model, stream, res);
    else if (path.endsWith("/responses")) responsesAnswer(reply, model, stream, res);
    else chatCompletion(reply, model, stream, res);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString("utf8"));
      } catch (error) {
        send(res, 500, { error: { message: String(error), type: "fake_provider_error" } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(replies) {
      script = [...replies];
    },
    limit(next, named) {
      maxTools = next;
      claimed = named;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An OpenAI-compatible endpoint: `POST /v1/chat/completions` and `POST /v1/responses`. */
export const fakeOpenAi = (options: FakeProviderOptions = {}) => startFake("openai", options);

/** An Anthropic-compatible endpoint: `POST /v1/messages`. */
export const fakeAnthropic = (options: FakeProviderOptions = {}) => startFake("anthropic", options);

/** The completion a Chat Completions stream amounts to (what the SDK's `finalChatCompletion()` assembles). */
export function assembleChatStream(text: string): ChatCompletionLike {
  let content = "";
  let finish: string | null = null;
  const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6)) as {
      choices: { delta: { content?: string; tool_calls?: typeof calls }; finish_reason: string | null }[];
    };
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? "";
      calls.push(...(choice.delta.tool_calls ?? []));
      finish = choice.finish_reason ?? finish;
    }
  }
  return { choices: [{ message: { role: "assistant", content, tool_calls: calls }, finish_reason: finish }] };
}

/** The message an Anthropic stream amounts to (what the SDK's `finalMessage()` assembles). */
export function assembleAnthropicStream(text: string): MessageLike {
  const content: { type: string; [field: string]: unknown }[] = [];
  let stopReason: string | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const event = JSON.parse(line.slice(6)) as {
      type: string;
      content_block?: { type: string };
      delta?: { stop_reason?: string };
    };
    if (event.type === "content_block_start") content.push(event.content_block!);
    if (event.type === "message_delta") stopReason = event.delta?.stop_reason ?? stopReason;
  }
  return { content, stop_reason: stopReason };
}
