// Runs on Node 22 (test/engine-frameworks.test.ts): the greeter task as the AI SDK does it over MCP
// without the adapter (@ai-sdk/mcp's tools, fixed for the whole generateText call) — the failure
// the adapter exists for: greet, activated by tool_description, is not among the call's tools.
import { createMCPClient } from "@ai-sdk/mcp";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs } from "ai";
import { GREETER_PROMPT, GREETER_SYSTEM, greeterFromEnv, printLine } from "../support/greeter";

const { process: engineProcess, providerUrl } = await greeterFromEnv();
const { VANCE_URL, VANCE_TOKEN, VANCE_TENANT, VANCE_PROJECT } = process.env;
const mcp = await createMCPClient({
  transport: {
    type: "http",
    url: `${VANCE_URL}/v1/tenants/${VANCE_TENANT}/projects/${VANCE_PROJECT}/processes/${engineProcess.processId}/mcp`,
    headers: { Authorization: `Bearer ${VANCE_TOKEN}` },
  },
});
try {
  const result = await generateText({
    model: createOpenAI({ baseURL: providerUrl, apiKey: "test" }).chat("fake-model"),
    tools: await mcp.tools(),
    system: GREETER_SYSTEM,
    stopWhen: stepCountIs(6),
    prompt: GREETER_PROMPT,
  });
  for (const step of result.steps) {
    for (const call of step.toolCalls) printLine({ event: "tool_call", name: call.toolName });
    for (const error of step.content.filter((part) => part.type === "tool-error")) {
      printLine({ event: "tool_error", name: error.toolName, error: String(error.error) });
    }
  }
  printLine({ event: "answer", text: result.text });
} catch (error) {
  const failure = error as { name?: string; message?: string };
  printLine({ event: "failed", error: `${failure.name}: ${failure.message}` });
} finally {
  await mcp.close();
}
