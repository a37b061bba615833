// Runs on Node 22 (test/mcp-frameworks.test.ts): the OpenAI Agents SDK's Runner over a served
// process, with no engine-side code — it lists the tools every turn.
import { Agent, MCPServerStreamableHttp, run, setOpenAIAPI } from "@openai/agents";
import { printLine } from "../support/greeter";

const { MCP_URL, VANCE_TOKEN } = process.env;
// The fake endpoint reads Chat Completions; OPENAI_BASE_URL points the SDK's client at it.
setOpenAIAPI("chat_completions");
const vance = new MCPServerStreamableHttp({
  name: "vance",
  url: MCP_URL!,
  requestInit: { headers: { Authorization: `Bearer ${VANCE_TOKEN}` } },
});
await vance.connect();
try {
  const agent = new Agent({
    name: "greeter",
    instructions: "You greet people. Use your tools.",
    model: "fake-model",
    mcpServers: [vance],
  });
  const result = await run(agent, "Greet Ada, please.", { maxTurns: 6 });
  for (const item of result.newItems) {
    if (item.type === "tool_call_item") {
      const raw = item.rawItem as { name?: string };
      printLine({ event: "tool_call", name: raw.name });
    }
  }
  printLine({ event: "answer", text: String(result.finalOutput ?? "") });
} finally {
  await vance.close();
}
