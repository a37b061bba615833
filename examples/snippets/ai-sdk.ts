import { openai } from "@ai-sdk/openai";
import { createVanceClient } from "@vance/client";
import { VanceEngine } from "@vance/engine";
import { vanceAiSdk } from "@vance/engine/ai-sdk";
import { generateText, stepCountIs } from "ai";

const { VANCE_URL, VANCE_TOKEN, VANCE_TENANT, VANCE_PROJECT } = process.env;
const client = createVanceClient({ baseUrl: VANCE_URL!, token: VANCE_TOKEN! });
const engine = new VanceEngine({ client, tenant: VANCE_TENANT!, project: VANCE_PROJECT! });
const agent = await engine.spawn({ engineDefault: ["greet"], models: ["openai/gpt-4.1"] });
try {
  const vance = await vanceAiSdk(agent, { system: "You greet people. Use your tools." });

  const { text } = await generateText({
    model: vance.wrap(openai("gpt-4.1")), // a 400 naming the tool limit: reported, step rebuilt; empty answers reported
    tools: vance.tools, // the whole allow set, executed through the service
    prepareStep: vance.prepareStep, // each step: the manifest's tools active, the discovery blocks placed
    stopWhen: stepCountIs(8),
    prompt: "Greet Ada.",
  });
  console.log(text);
} finally {
  await agent.end(); // the conversation is over: its record goes, its place under the live cap comes back
}
