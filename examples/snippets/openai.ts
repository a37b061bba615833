import { createVanceClient } from "@vance/client";
import { VanceEngine } from "@vance/engine";
import { chatEmptyResponse, chatRequest, chatToolMessages, readChatCompletion } from "@vance/engine/openai";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

const { VANCE_URL, VANCE_TOKEN, VANCE_TENANT, VANCE_PROJECT } = process.env;
const client = createVanceClient({ baseUrl: VANCE_URL!, token: VANCE_TOKEN! });
const engine = new VanceEngine({ client, tenant: VANCE_TENANT!, project: VANCE_PROJECT! });
const agent = await engine.spawn({ engineDefault: ["greet"], models: ["openai/gpt-4.1"] });
const openai = new OpenAI();
const messages: ChatCompletionMessageParam[] = [{ role: "user", content: "Greet Ada." }];

try {
  for (let step = 0; step < 8; step++) {
    // The manifest, the request built from it, the call; a 400 naming the tool limit: reported, turn rebuilt once.
    const { turn, request, result } = await agent.runTurn(
      (turn) => chatRequest(turn, { model: "gpt-4.1", system: "You greet people.", messages }),
      (request) => openai.chat.completions.create(request),
    );
    const reply = readChatCompletion(result);
    if (reply.empty) {
      await agent.onEmptyResponse(chatEmptyResponse(request, reply)); // once per request id; never for finishReason "length"
      throw new Error("the model answered nothing");
    }
    messages.push(reply.message);
    if (reply.toolCalls.length === 0) {
      console.log(reply.text);
      break;
    }
    const results = await Promise.all(reply.toolCalls.map((call) => agent.handleToolCall(call, turn)));
    messages.push(...chatToolMessages(results));
  }
} finally {
  await agent.end(); // the conversation is over: its record goes, its place under the live cap comes back
}
