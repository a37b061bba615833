// Runs on Node 22 (test/mcp-frameworks.test.ts): a LangGraph ReAct agent with
// `@langchain/mcp-adapters`' tools over a served process, with no engine-side code — the tools
// fetched once, as the adapters do.
import type { BaseMessage } from "@langchain/core/messages";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { ChatOpenAI } from "@langchain/openai";
import { printLine } from "../support/greeter";

const { MCP_URL, VANCE_TOKEN, PROVIDER_URL } = process.env;
const client = new MultiServerMCPClient({
  mcpServers: {
    vance: {
      url: MCP_URL!,
      headers: { Authorization: `Bearer ${VANCE_TOKEN}` },
      automaticSSEFallback: false,
    },
  },
});
try {
  const agent = createReactAgent({
    llm: new ChatOpenAI({ model: "fake-model", apiKey: "test", configuration: { baseURL: PROVIDER_URL } }),
    tools: await client.getTools(),
    prompt: "You greet people. Use your tools.",
  });
  const result = await agent.invoke(
    { messages: [{ role: "user", content: "Greet Ada, please." }] },
    { recursionLimit: 12 },
  );
  const messages = result.messages as BaseMessage[];
  for (const message of messages) {
    const calls = (message as { tool_calls?: { name: string }[] }).tool_calls ?? [];
    for (const call of calls) printLine({ event: "tool_call", name: call.name });
    if (message.getType() === "tool" && (message as { status?: string }).status === "error") {
      printLine({ event: "tool_error", error: String(message.content) });
    }
  }
  printLine({ event: "answer", text: String(messages.at(-1)?.content ?? "") });
} finally {
  await client.close();
}
