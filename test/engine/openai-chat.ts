// Runs on Node 22 (test/engine-frameworks.test.ts): the greeter task through @vance/engine/openai's
// Chat Completions builders with the openai SDK, then a streamed turn whose call the endpoint drops.
import { chatEmptyResponse, chatRequest, chatToolMessages, readChatCompletion } from "@vance/engine/openai";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { DROP_PROMPT, GREETER_PROMPT, GREETER_SYSTEM, greeterFromEnv, printLine } from "../support/greeter";

const { process: engineProcess, providerUrl } = await greeterFromEnv();
const openai = new OpenAI({ baseURL: providerUrl, apiKey: "test", maxRetries: 0 });
const messages: ChatCompletionMessageParam[] = [{ role: "user", content: GREETER_PROMPT }];

for (let step = 0; step < 6; step++) {
  const { turn, result } = await engineProcess.runTurn(
    (turn) => chatRequest(turn, { model: "fake-model", system: GREETER_SYSTEM, messages }),
    (request) => openai.chat.completions.create(request),
  );
  const reply = readChatCompletion(result);
  messages.push(reply.message);
  if (reply.toolCalls.length === 0) {
    printLine({ event: "answer", text: reply.text });
    break;
  }
  for (const call of reply.toolCalls) printLine({ event: "tool_call", name: call.name });
  const results = await Promise.all(reply.toolCalls.map((call) => engineProcess.handleToolCall(call, turn)));
  messages.push(...chatToolMessages(results));
}

messages.push({ role: "user", content: DROP_PROMPT });
const turn = await engineProcess.turn();
const request = chatRequest(turn, { model: "fake-model", system: GREETER_SYSTEM, messages });
const completion = await openai.chat.completions.stream(request).finalChatCompletion();
const reply = readChatCompletion(completion);
if (reply.empty) await engineProcess.onEmptyResponse(chatEmptyResponse(request, reply));
printLine({ event: "streamed", empty: reply.empty });
