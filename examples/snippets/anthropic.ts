import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { createVanceClient } from "@vance/client";
import { VanceEngine } from "@vance/engine";
import {
  messagesEmptyResponse,
  messagesRequest,
  readMessage,
  toolResultMessage,
} from "@vance/engine/anthropic";

const { VANCE_URL, VANCE_TOKEN, VANCE_TENANT, VANCE_PROJECT } = process.env;
const client = createVanceClient({ baseUrl: VANCE_URL!, token: VANCE_TOKEN! });
const engine = new VanceEngine({ client, tenant: VANCE_TENANT!, project: VANCE_PROJECT! });
const agent = await engine.spawn({ engineDefault: ["greet"], models: ["anthropic/claude-sonnet-4-5"] });
const anthropic = new Anthropic();
const messages: MessageParam[] = [{ role: "user", content: "Greet Ada." }];
const options = { model: "claude-sonnet-4-5", max_tokens: 1024, system: "You greet people." };

try {
  for (let step = 0; step < 8; step++) {
    // The static block goes out with cache_control (the prompt-cache marker), the demoted block after it.
    const { turn, request, result } = await agent.runTurn(
      (turn) => messagesRequest(turn, { ...options, messages }),
      (request) => anthropic.messages.create(request),
      { format: "anthropic" },
    );
    const reply = readMessage(result);
    if (reply.empty) {
      await agent.onEmptyResponse(messagesEmptyResponse(request, reply)); // once per request id; never for finishReason "length"
      throw new Error("the model answered nothing");
    }
    messages.push(reply.message);
    if (reply.toolCalls.length === 0) {
      console.log(reply.text);
      break;
    }
    messages.push(
      toolResultMessage(await Promise.all(reply.toolCalls.map((call) => agent.handleToolCall(call, turn)))),
    );
  }
} finally {
  await agent.end(); // the conversation is over: its record goes, its place under the live cap comes back
}
