// Runs on Node 22 (test/engine-frameworks.test.ts): the greeter task through @vance/engine/ai-sdk
// with an unmodified generateText + stopWhen loop, then a streamText whose call the endpoint drops.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { vanceAiSdk } from "@vance/engine/ai-sdk";
import { generateText, type ModelMessage, stepCountIs, streamText } from "ai";
import { DROP_PROMPT, GREETER_PROMPT, GREETER_SYSTEM, greeterFromEnv, printLine } from "../support/greeter";

const { process: engineProcess, providerUrl } = await greeterFromEnv();
const model =
  process.env.PROVIDER === "anthropic"
    ? createAnthropic({ baseURL: providerUrl, apiKey: "test" })("fake-model")
    : createOpenAI({ baseURL: providerUrl, apiKey: "test" }).chat("fake-model");

const vance = await vanceAiSdk(engineProcess, { system: GREETER_SYSTEM });
const result = await generateText({
  model: vance.wrap(model),
  tools: vance.tools,
  prepareStep: vance.prepareStep,
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

const messages: ModelMessage[] = [
  { role: "user", content: GREETER_PROMPT },
  ...result.response.messages,
  { role: "user", content: DROP_PROMPT },
];
const stream = streamText({
  model: vance.wrap(model),
  tools: vance.tools,
  prepareStep: vance.prepareStep,
  stopWhen: stepCountIs(3),
  messages,
});
printLine({ event: "streamed", text: await stream.text, finishReason: await stream.finishReason });
