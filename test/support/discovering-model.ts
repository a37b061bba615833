import type { ProviderRequest, ScriptedReply } from "./fake-providers";

/**
 * A fake model that reads what it is offered (issue 36), for the MCP frameworks' loop over a
 * served surface: it calls the task's tool when it is among the request's tools; else it finds its
 * way through what the surface offers — `invoke_tool` once `tool_description` or `tool_search`
 * described the tool, `tool_description` when an offered tool's description names it (the
 * discovery summary reached it), `tool_search` otherwise — and answers with the tool's result. It
 * never learns the tool's name from anywhere but the request, so a summary that does not reach
 * the model leaves it searching or giving up. OpenAI Chat Completions requests.
 */
export interface DiscoveryTask {
  /** The tool that does the task (`greet`). */
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  /** What the model would search for when no description names the tool. */
  readonly query: string;
}

interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { id: string; function: { name: string; arguments: string } }[];
}

/** Text of a message's content: a string, or the text parts of an array. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part?.text === "string" ? part.text : JSON.stringify(part)))
      .join("");
  }
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

/** The reply for one request of the loop; `reasons` collects why it chose what it did. */
export function discoveringModel(task: DiscoveryTask): (request: ProviderRequest) => ScriptedReply {
  return (request) => {
    const messages = (request.body.messages ?? []) as ChatMessage[];
    const offered = new Map(
      ((request.body.tools ?? []) as { function: { name: string; description?: string } }[]).map((tool) => [
        tool.function.name,
        tool.function.description ?? "",
      ]),
    );
    const calls = messages.flatMap((message) =>
      (message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        args: JSON.parse(call.function.arguments || "{}") as Record<string, unknown>,
      })),
    );
    const results = new Map(
      messages
        .filter((message) => message.role === "tool")
        .map((message) => [message.tool_call_id ?? "", textOf(message.content)]),
    );
    const last = messages.at(-1);
    if (last?.role === "tool") {
      const call = calls.find((candidate) => candidate.id === last.tool_call_id);
      const reached =
        call?.name === task.tool || (call?.name === "invoke_tool" && call.args.name === task.tool);
      if (reached) return { text: `Done: ${textOf(last.content)}` };
    }
    const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ name, arguments: args }],
    });
    if (offered.has(task.tool)) return call(task.tool, task.arguments);
    const described = calls.some(
      (candidate) =>
        (candidate.name === "tool_description" || candidate.name === "tool_search") &&
        (results.get(candidate.id) ?? "").includes("paramsSchema") &&
        (results.get(candidate.id) ?? "").includes(task.tool),
    );
    if (described) {
      if (offered.has("invoke_tool")) return call("invoke_tool", { name: task.tool, params: task.arguments });
      return { text: `I found ${task.tool} but cannot call it: it is not among my tools.` };
    }
    const named = [...offered.values()].some((description) =>
      new RegExp(`\\b${task.tool}\\b`).test(description),
    );
    const tried = (name: string) => calls.some((candidate) => candidate.name === name);
    if (named && offered.has("tool_description") && !tried("tool_description")) {
      return call("tool_description", { names: [task.tool] });
    }
    if (offered.has("tool_search") && !tried("tool_search"))
      return call("tool_search", { query: task.query });
    return { text: "I found no tool for this." };
  };
}
