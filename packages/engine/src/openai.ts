import type { OpenAiWireTool } from "@vance/client";
import { type EmptyResponse, staticPrefix, type ToolCall, type ToolCallResult, type Turn } from "./engine.js";

/**
 * OpenAI request builders and response readers, as plain JSON in the wire formats of Chat
 * Completions and Responses: hand their requests to the `openai` SDK or to `fetch` alike.
 */

/** A message the builders add: the system text, static block, or demoted block. */
export interface SystemMessage {
  readonly role: "system";
  readonly content: string;
}

/** A function call of an assistant message in Chat Completions. */
export interface ChatToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A Chat Completions request: the caller's fields, with `messages` and `tools` from the turn. */
export type ChatRequest<Message, Extra> = Omit<Extra, "system" | "messages"> & {
  readonly model: string;
  messages: (SystemMessage | Message)[];
  tools: OpenAiWireTool[];
};

/**
 * The Chat Completions request for a turn: the system text and the static discovery block as the
 * first system message (the cacheable prefix, identical every turn), the demoted block as a
 * second system message after it when the budget demoted anything, then the conversation; the
 * turn's tools in the wire format. Other fields (`temperature`, `stream`, …) pass through.
 */
export function chatRequest<Message extends { readonly role: string }, Extra extends object>(
  turn: Turn<"openai">,
  options: Extra & {
    readonly model: string;
    readonly system?: string;
    readonly messages: readonly Message[];
  },
): ChatRequest<Message, Extra> {
  const { system, messages, ...rest } = options;
  const prefix = staticPrefix(system, turn);
  const head: SystemMessage[] = [
    ...(prefix ? [{ role: "system" as const, content: prefix }] : []),
    ...(turn.demotedBlock ? [{ role: "system" as const, content: turn.demotedBlock }] : []),
  ];
  return {
    ...(rest as Omit<Extra, "system" | "messages"> & { model: string }),
    messages: [...head, ...messages],
    tools: [...turn.tools],
  };
}

/** What a model answered, read for the engine's loop. */
export interface Reply<Message> {
  /** The assistant's message, to append to the conversation as it came. */
  readonly message: Message;
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  /** `stop`, `tool_calls`, `length` (the answer hit its token limit), … */
  readonly finishReason: string | null;
  /** Neither text nor a tool call: the turn died (spec §13.2) — report it with `onEmptyResponse`. */
  readonly empty: boolean;
}

/** A Chat Completion (or the one a stream assembles: `stream.finalChatCompletion()`). */
export interface ChatCompletionLike {
  readonly choices: readonly {
    readonly message: {
      readonly role: string;
      readonly content?: string | null;
      readonly tool_calls?:
        | readonly {
            readonly id: string;
            readonly type: string;
            readonly function?: { readonly name: string; readonly arguments: string };
          }[]
        | null;
    };
    readonly finish_reason: string | null;
  }[];
}

/** The assistant message of a Chat Completion, as it goes back into the conversation. */
export interface ChatAssistantMessage {
  readonly role: "assistant";
  readonly content: string | null;
  readonly tool_calls?: ChatToolCall[];
}

/** Reads a Chat Completion: its text, its (function) tool calls, whether it is empty. */
export function readChatCompletion(completion: ChatCompletionLike): Reply<ChatAssistantMessage> {
  const choice = completion.choices[0];
  const message = choice?.message ?? { role: "assistant", content: null };
  const calls: ChatToolCall[] = (message.tool_calls ?? []).flatMap((call) =>
    call.type === "function" && call.function
      ? [{ id: call.id, type: "function" as const, function: call.function }]
      : [],
  );
  const toolCalls = calls.map((call) => ({
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  }));
  const text = message.content ?? "";
  const finishReason = choice?.finish_reason ?? null;
  return {
    message: {
      role: "assistant",
      content: message.content ?? null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
    text,
    toolCalls,
    finishReason: finishReason === "max_tokens" ? "length" : finishReason,
    empty: text.trim() === "" && toolCalls.length === 0,
  };
}

/** A `tool` message answering one tool call. */
export interface ChatToolMessage {
  readonly role: "tool";
  readonly tool_call_id: string;
  readonly content: string;
}

/** The `tool` messages that answer a turn's tool calls. */
export function chatToolMessages(results: readonly ToolCallResult[]): ChatToolMessage[] {
  return results.map((result) => ({ role: "tool", tool_call_id: result.id ?? "", content: result.content }));
}

/** The empty-response report for a Chat Completions request and its reply. */
export function chatEmptyResponse(
  request: {
    readonly messages: readonly { readonly role: string }[];
    readonly tools: readonly OpenAiWireTool[];
  },
  reply: Pick<Reply<unknown>, "finishReason">,
  requestId?: string,
): EmptyResponse {
  return {
    ...(requestId === undefined ? {} : { requestId }),
    messages: request.messages,
    offeredTools: request.tools.map((tool) => tool.function.name),
    finishReason: reply.finishReason,
  };
}

/** A Responses API item (the fields this module reads; others pass through). */
export interface ResponseItem {
  readonly type?: string;
  readonly role?: string;
  readonly content?: unknown;
  readonly [field: string]: unknown;
}

/** A function tool as the Responses API takes it (flat, not under `function`). */
export interface ResponsesFunctionTool {
  readonly type: "function";
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly strict: false;
}

export type ResponsesRequest<Item, Extra> = Omit<Extra, "system" | "input"> & {
  readonly model: string;
  instructions?: string;
  input: (SystemMessage | Item)[];
  tools: ResponsesFunctionTool[];
};

/** A turn's tools in the Responses API's flat function format (schemas as the service gave them, not strict). */
export function responsesTools(turn: Turn<"openai">): ResponsesFunctionTool[] {
  return turn.tools.map((tool) => ({
    type: "function",
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
    strict: false,
  }));
}

/**
 * The Responses API request for a turn: the system text and the static block as `instructions`
 * (the cacheable prefix), the demoted block as the first input item (a `system` message), then
 * the conversation's items.
 */
export function responsesRequest<Item, Extra extends object>(
  turn: Turn<"openai">,
  options: Extra & { readonly model: string; readonly system?: string; readonly input: readonly Item[] },
): ResponsesRequest<Item, Extra> {
  const { system, input, ...rest } = options;
  const prefix = staticPrefix(system, turn);
  const demoted: SystemMessage[] = turn.demotedBlock ? [{ role: "system", content: turn.demotedBlock }] : [];
  return {
    ...(rest as Omit<Extra, "system" | "input"> & { model: string }),
    ...(prefix ? { instructions: prefix } : {}),
    input: [...demoted, ...input],
    tools: responsesTools(turn),
  };
}

/** A Responses API answer (or the one a stream assembles: `stream.finalResponse()`). */
export interface ResponseLike {
  readonly status?: string | null;
  readonly incomplete_details?: { readonly reason?: string | null } | null;
  readonly output: readonly object[];
}

/** Reads a Responses API answer; `message` is its output items, to append to the input as they came. */
export function readResponse<R extends ResponseLike>(response: R): Reply<R["output"][number][]> {
  const toolCalls: ToolCall[] = [];
  const texts: string[] = [];
  for (const item of response.output as readonly ResponseItem[]) {
    if (item.type === "function_call") {
      toolCalls.push({ id: String(item.call_id), name: String(item.name), arguments: item.arguments });
    } else if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content as { type?: string; text?: string }[]) {
        if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
      }
    }
  }
  const text = texts.join("");
  const length =
    response.status === "incomplete" && response.incomplete_details?.reason === "max_output_tokens";
  return {
    message: [...response.output],
    text,
    toolCalls,
    finishReason: length ? "length" : toolCalls.length > 0 ? "tool_calls" : (response.status ?? null),
    empty: text.trim() === "" && toolCalls.length === 0,
  };
}

/** A `function_call_output` item answering one tool call. */
export interface FunctionCallOutput {
  readonly type: "function_call_output";
  readonly call_id: string;
  readonly output: string;
}

/** The `function_call_output` items that answer a turn's tool calls. */
export function responsesToolOutputs(results: readonly ToolCallResult[]): FunctionCallOutput[] {
  return results.map((result) => ({
    type: "function_call_output",
    call_id: result.id ?? "",
    output: result.content,
  }));
}

/** The empty-response report for a Responses API request and its reply. */
export function responsesEmptyResponse(
  request: {
    readonly instructions?: string;
    readonly input: readonly unknown[];
    readonly tools: readonly ResponsesFunctionTool[];
  },
  reply: Pick<Reply<unknown>, "finishReason">,
  requestId?: string,
): EmptyResponse {
  return {
    ...(requestId === undefined ? {} : { requestId }),
    messages: [
      ...(request.instructions ? [{ role: "system", content: request.instructions }] : []),
      ...(request.input as readonly ResponseItem[]).map((item) => ({
        ...item,
        role: item.role ?? item.type ?? "context",
      })),
    ],
    offeredTools: request.tools.map((tool) => tool.name),
    finishReason: reply.finishReason,
  };
}
