// Runs on Node 22 (test/engine-frameworks.test.ts): the greeter task through @vance/engine/openai's
// Responses builders with the openai SDK, then a streamed turn whose call the endpoint drops.
import {
  readResponse,
  responsesEmptyResponse,
  responsesRequest,
  responsesToolOutputs,
} from "@vance/engine/openai";
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { DROP_PROMPT, GREETER_PROMPT, GREETER_SYSTEM, greeterFromEnv, printLine } from "../support/greeter";

const { process: engineProcess, providerUrl } = await greeterFromEnv();
const openai = new OpenAI({ baseURL: providerUrl, apiKey: "test", maxRetries: 0 });
const input: ResponseInputItem[] = [{ role: "user", content: GREETER_PROMPT }];

for (let step = 0; step < 6; step++) {
  const { turn, result } = await engineProcess.runTurn(
    (turn) => responsesRequest(turn, { model: "fake-model", system: GREETER_SYSTEM, input }),
    (request) => openai.responses.create(request),
  );
  const reply = readResponse(result);
  input.push(...(reply.message as ResponseInputItem[]));
  if (reply.toolCalls.length === 0) {
    printLine({ event: "answer", text: reply.text });
    break;
  }
  for (const call of reply.toolCalls) printLine({ event: "tool_call", name: call.name });
  const results = await Promise.all(reply.toolCalls.map((call) => engineProcess.handleToolCall(call, turn)));
  input.push(...responsesToolOutputs(results));
}

input.push({ role: "user", content: DROP_PROMPT });
const turn = await engineProcess.turn();
const request = responsesRequest(turn, { model: "fake-model", system: GREETER_SYSTEM, input });
const response = await openai.responses.stream(request).finalResponse();
const reply = readResponse(response);
if (reply.empty) await engineProcess.onEmptyResponse(responsesEmptyResponse(request, reply));
printLine({ event: "streamed", empty: reply.empty });
