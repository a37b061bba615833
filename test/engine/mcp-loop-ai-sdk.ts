// Runs on Node 22 (test/mcp-frameworks.test.ts): the Vercel AI SDK (`ai` 7 + `@ai-sdk/mcp`) over a
// served process, with no engine-side code — the tools fetched once, as the SDK does.
import { createMCPClient } from "@ai-sdk/mcp";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs } from "ai";
import { printLine } from "../support/greeter";

const { MCP_URL, VANCE_TOKEN, PROVIDER_URL } = process.env;
const mcp = await createMCPClient({
  transport: { type: "http", url: MCP_URL!, headers: { Authorization: `Bearer ${VANCE_TOKEN}` } },
});
try {
  const result = await generateText({
    model: createOpenAI({ baseURL: PROVIDER_URL!, apiKey: "test" }).chat("fake-model"),
    tools: await mcp.tools(),
    system: "You greet people. Use your tools.",
    stopWhen: stepCountIs(6),
    prompt: "Greet Ada, please.",
  });
  for (const step of result.steps) {
    for (const call of step.toolCalls) printLine({ event: "tool_call", name: call.toolName });
    for (const error of step.content.filter((part) => part.type === "tool-error")) {
      printLine({ event: "tool_error", name: error.toolName, error: String(error.error) });
    }
  }
  printLine({ event: "answer", text: result.text });
} finally {
  await mcp.close();
}
