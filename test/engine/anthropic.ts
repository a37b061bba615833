// Runs on Node 22 (test/engine-frameworks.test.ts): the greeter task through @vance/engine/anthropic
// with @anthropic-ai/sdk, then a streamed turn whose call the endpoint drops.
import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import {
  messagesEmptyResponse,
  messagesRequest,
  readMessage,
  toolResultMessage,
} from "@vance/engine/anthropic";
import { DROP_PROMPT, GREETER_PROMPT, GREETER_SYSTEM, greeterFromEnv, printLine } from "../support/greeter";

const { process: engineProcess, providerUrl } = await greeterFromEnv();
// The SDK appends /v1/messages to its base URL.
const anthropic = new Anthropic({ baseURL: providerUrl.replace(/\/v1$/, ""), apiKey: "test", maxRetries: 0 });
const messages: MessageParam[] = [{ role: "user", content: GREETER_PROMPT }];
const options = { model: "fake-model", max_tokens: 1024, system: GREETER_SYSTEM };

for (let step = 0; step < 6; step++) {
  const { turn, result } = await engineProcess.runTurn(
    (turn) => messagesRequest(turn, { ...options, messages }),
    (request) => anthropic.messages.create(request),
    { format: "anthropic" },
  );
  const reply = readMessage(result);
  messages.push(reply.message);
  if (reply.toolCalls.length === 0) {
    printLine({ event: "answer", text: reply.text });
    break;
  }
  for (const call of reply.toolCalls) printLine({ event: "tool_call", name: call.name });
  const results = await Promise.all(reply.toolCalls.map((call) => engineProcess.handleToolCall(call, turn)));
  messages.push(toolResultMessage(results));
}

messages.push({ role: "user", content: DROP_PROMPT });
const turn = await engineProcess.turn({ format: "anthropic" });
const request = messagesRequest(turn, { ...options, messages });
const message = await anthropic.messages.stream(request).finalMessage();
const reply = readMessage(message);
if (reply.empty) await engineProcess.onEmptyResponse(messagesEmptyResponse(request, reply));
printLine({ event: "streamed", empty: reply.empty });
