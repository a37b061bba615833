import type { AnthropicWireTool } from "@vance/client";
import { type EmptyResponse, staticPrefix, type ToolCall, type ToolCallResult, type Turn } from "./engine.js";
import type { Reply } from "./openai.js";

/**
 * Anthropic Messages request builders and response readers, as plain JSON: hand their requests to
 * `@anthropic-ai/sdk` or to `fetch` alike.
 */

/** A system text block; the static prefix carries the prompt-cache marker. */
export interface SystemBlock {
  readonly type: "text";
  readonly text: string;
  readonly cache_control?: { readonly type: "ephemeral" };
}

/** A tool as Messages takes it: the manifest's, its `input_schema` typed as the object schema it is. */
export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: { readonly type: "object"; readonly [keyword: string]: unknown };
}

export type MessagesRequest<Message, Extra> = Omit<Extra, "system" | "messages"> & {
  readonly model: string;
  readonly max_tokens: number;
  system: SystemBlock[];
  messages: Message[];
  tools: AnthropicTool[];
};

/** A turn's tools for Messages (the service's input schemas are object schemas). */
export function anthropicTools(turn: Turn<"anthropic">): AnthropicTool[] {
  return turn.tools.map((tool: AnthropicWireTool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.input_schema, type: "object" },
  }));
}

/**
 * The Messages request for a turn: `system` is the system text and the static discovery block as
 * one block carrying `cache_control` (the marker: everything up to it is cached, and its bytes
 * are the same every turn), then the demoted block as a block after the marker when the budget
 * demoted anything; the turn's tools in the Anthropic wire format. Other fields pass through.
 */
export function messagesRequest<Message extends { readonly role: string }, Extra extends object>(
  turn: Turn<"anthropic">,
  options: Extra & {
    readonly model: string;
    readonly max_tokens: number;
    readonly system?: string;
    readonly messages: readonly Message[];
  },
): MessagesRequest<Message, Extra> {
  const { system, messages, ...rest } = options;
  const prefix = staticPrefix(system, turn);
  const blocks: SystemBlock[] = [
    ...(prefix
      ? [{ type: "text" as const, text: prefix, cache_control: { type: "ephemeral" as const } }]
      : []),
    ...(turn.demotedBlock ? [{ type: "text" as const, text: turn.demotedBlock }] : []),
  ];
  return {
    ...(rest as Omit<Extra, "system" | "messages"> & { model: string; max_tokens: number }),
    system: blocks,
    messages: [...messages],
    tools: anthropicTools(turn),
  };
}

/** A Messages answer (or the one a stream assembles: `stream.finalMessage()`). */
export interface MessageLike {
  readonly content: readonly { readonly type: string }[];
  readonly stop_reason: string | null;
}

/** The assistant message of an answer, as it goes back into the conversation. */
export interface AssistantMessage<Block> {
  readonly role: "assistant";
  readonly content: Block[];
}

/** Reads a Messages answer: its text, its `tool_use` blocks, whether it is empty. */
export function readMessage<M extends MessageLike>(
  message: M,
): Reply<AssistantMessage<M["content"][number]>> {
  const toolCalls: ToolCall[] = [];
  const texts: string[] = [];
  for (const block of message.content as readonly { type: string; [field: string]: unknown }[]) {
    if (block.type === "tool_use") {
      toolCalls.push({ id: String(block.id), name: String(block.name), arguments: block.input ?? {} });
    } else if (block.type === "text" && typeof block.text === "string") {
      texts.push(block.text);
    }
  }
  const text = texts.join("");
  return {
    message: { role: "assistant", content: [...message.content] },
    text,
    toolCalls,
    finishReason: message.stop_reason === "max_tokens" ? "length" : message.stop_reason,
    empty: text.trim() === "" && toolCalls.length === 0,
  };
}

/** The user message of `tool_result` blocks that answers a turn's tool calls. */
export function toolResultMessage(results: readonly ToolCallResult[]) {
  return {
    role: "user" as const,
    content: results.map((result) => ({
      type: "tool_result" as const,
      tool_use_id: result.id ?? "",
      content: result.content,
      ...(result.ok ? {} : { is_error: true }),
    })),
  };
}

/** The empty-response report for a Messages request and its reply: the system blocks as a system message. */
export function messagesEmptyResponse(
  request: {
    readonly system: readonly SystemBlock[];
    readonly messages: readonly { readonly role: string; readonly content?: unknown }[];
    readonly tools: readonly AnthropicTool[];
  },
  reply: Pick<Reply<unknown>, "finishReason">,
  requestId?: string,
): EmptyResponse {
  return {
    ...(requestId === undefined ? {} : { requestId }),
    messages: [
      ...(request.system.length > 0
        ? [{ role: "system", content: request.system.map((block) => block.text) }]
        : []),
      ...request.messages,
    ],
    offeredTools: request.tools.map((tool) => tool.name),
    finishReason: reply.finishReason,
  };
}
