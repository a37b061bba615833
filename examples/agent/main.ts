// npm run example:agent — a small agent on @vance/engine against a running service (npm start).
//
//   VANCE_URL (default http://127.0.0.1:8787), VANCE_TOKEN, VANCE_TENANT (default demo),
//   VANCE_PROJECT (default example): the service, addressed as the CLI addresses it.
//   OPENAI_API_KEY or ANTHROPIC_API_KEY: use that provider (model: VANCE_EXAMPLE_MODEL, or a small
//   default); without either, a scripted fake endpoint on 127.0.0.1 stands in for the model.
//   --drop: the fake endpoint drops the model's call to a tool outside its tools array (as
//   endpoints with restricted tool-call decoding do): the turn dies, is reported, and the example fails.
//
// It puts the two tools it needs into the project, spawns a process with them deferred, and runs
// the task turn by turn, printing each turn's tool calls; it exits 1 when the task fails.
import { createVanceClient } from "@vance/client";
import {
  type EngineEvent,
  type EngineProcess,
  postJson,
  type ToolCallResult,
  VanceEngine,
} from "@vance/engine";
import {
  type MessageLike,
  messagesEmptyResponse,
  messagesRequest,
  readMessage,
  toolResultMessage,
} from "@vance/engine/anthropic";
import {
  type ChatCompletionLike,
  chatEmptyResponse,
  chatRequest,
  chatToolMessages,
  readChatCompletion,
} from "@vance/engine/openai";
import { assembleChatStream, fakeOpenAi } from "../../test/support/fake-providers";

const TOOLS: Record<string, string> = {
  add_numbers: `type: scripted
description: Add two numbers and return the sum.
parameters:
  inputs:
    - { name: a, type: number }
    - { name: b, type: number }
  source: a + b
`,
  greet: `type: scripted
description: Greets someone by name.
parameters:
  inputs:
    - { name: name, type: string }
  source: '"Hello, " + name + "!"'
`,
};

const SYSTEM =
  "You are a careful assistant. Use your tools for arithmetic and greetings, then answer in one sentence.";
const TASK = "Add 17 and 25 with your tool, greet Ada with your tool, and tell me both results.";
const MAX_TURNS = 8;

/** The scripted model the example uses without an API key: describe, add, greet, answer. */
const FAKE_SCRIPT = [
  { toolCalls: [{ name: "tool_description", arguments: { names: ["add_numbers", "greet"] } }] },
  { toolCalls: [{ name: "add_numbers", arguments: { a: 17, b: 25 } }] },
  { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
  { text: "17 + 25 = 42, and I greeted Ada: Hello, Ada!" },
];
/** With --drop: the model calls a tool it never described, which the endpoint drops from the stream. */
const DROP_SCRIPT = [{ toolCalls: [{ name: "add_numbers", arguments: { a: 17, b: 25 } }] }];

const env = process.env;
const token = env.VANCE_TOKEN;
if (!token) {
  console.error(
    "error: VANCE_TOKEN is not set (npm start prints one; or npm run token -- --tenant demo --roles read,write)",
  );
  process.exit(2);
}
const tenant = env.VANCE_TENANT ?? "demo";
const project = env.VANCE_PROJECT ?? "example";
const drop = process.argv.includes("--drop");

/** One model call of the task, in the provider's wire format: the text, the calls, and a report when empty. */
interface Provider {
  readonly name: string;
  readonly models: readonly string[];
  step(engine: EngineProcess): Promise<{ text: string; calls: number; empty: boolean }>;
}

function openAiProvider(
  baseUrl: string,
  apiKey: string,
  model: string,
  catalogModel: string,
  stream: boolean,
): Provider {
  const messages: { role: string; content?: unknown }[] = [{ role: "user", content: TASK }];
  const headers = { authorization: `Bearer ${apiKey}` };
  return {
    name: `OpenAI Chat Completions (${model})`,
    models: [catalogModel],
    async step(engine) {
      const { turn, request, result } = await engine.runTurn(
        (turn) => chatRequest(turn, { model, system: SYSTEM, messages, stream }),
        async (request) =>
          stream
            ? assembleChatStream(await postText(`${baseUrl}/chat/completions`, request, headers))
            : postJson<ChatCompletionLike>(`${baseUrl}/chat/completions`, request, headers),
      );
      const reply = readChatCompletion(result);
      if (reply.empty) await engine.onEmptyResponse(chatEmptyResponse(request, reply));
      messages.push(reply.message);
      const results = await runCalls(engine, reply.toolCalls, turn);
      messages.push(...chatToolMessages(results));
      return { text: reply.text, calls: results.length, empty: reply.empty };
    },
  };
}

function anthropicProvider(apiKey: string, model: string): Provider {
  const messages: { role: string; content: unknown }[] = [{ role: "user", content: TASK }];
  const headers = { "x-api-key": apiKey, "anthropic-version": "2023-06-01" };
  return {
    name: `Anthropic Messages (${model})`,
    models: [`anthropic/${model}`],
    async step(engine) {
      const { turn, request, result } = await engine.runTurn(
        (turn) => messagesRequest(turn, { model, max_tokens: 1024, system: SYSTEM, messages }),
        (request) => postJson<MessageLike>("https://api.anthropic.com/v1/messages", request, headers),
        { format: "anthropic" },
      );
      const reply = readMessage(result);
      if (reply.empty) await engine.onEmptyResponse(messagesEmptyResponse(request, reply));
      messages.push(reply.message);
      const results = await runCalls(engine, reply.toolCalls, turn);
      if (results.length > 0) messages.push(toolResultMessage(results));
      return { text: reply.text, calls: results.length, empty: reply.empty };
    },
  };
}

async function runCalls(
  engine: EngineProcess,
  calls: readonly { name: string; arguments: unknown; id?: string }[],
  turn: { skillTools: readonly string[] },
): Promise<ToolCallResult[]> {
  const results: ToolCallResult[] = [];
  for (const call of calls) {
    const result = await engine.handleToolCall(call, turn);
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    console.log(
      `  ${call.name}(${args}) → ${result.ok ? result.content : `${result.error}: ${result.message}`}`,
    );
    results.push(result);
  }
  return results;
}

async function postText(url: string, body: unknown, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return response.text();
}

function describeEvent(event: EngineEvent): void {
  if (event.type === "limit_learned") {
    console.log(
      `  the endpoint takes at most ${event.maxTools} tools (it refused ${event.rejected}); reported, turn rebuilt`,
    );
  } else if (event.type === "empty_response") {
    const names = event.diagnosis.candidates.map((candidate) => `${candidate.name} (${candidate.origin})`);
    console.log(
      `  empty answer reported: ${event.diagnosis.kind}${names.length ? ` — ${names.join(", ")}` : ""}`,
    );
  }
}

async function main(): Promise<number> {
  const client = createVanceClient({ baseUrl: env.VANCE_URL ?? "http://127.0.0.1:8787", token: token! });
  const tools = client.project(tenant, project);
  for (const [name, document] of Object.entries(TOOLS)) await tools.putTool(name, document);

  const fake =
    env.OPENAI_API_KEY || env.ANTHROPIC_API_KEY
      ? undefined
      : await fakeOpenAi({ script: drop ? DROP_SCRIPT : FAKE_SCRIPT, dropUnknownStreamedCalls: true });
  const provider = fake
    ? openAiProvider(fake.baseUrl, "fake", "fake-model", "example/fake-model", drop)
    : env.OPENAI_API_KEY
      ? openAiProvider(
          env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
          env.OPENAI_API_KEY,
          env.VANCE_EXAMPLE_MODEL ?? "gpt-4.1-mini",
          `openai/${env.VANCE_EXAMPLE_MODEL ?? "gpt-4.1-mini"}`,
          false,
        )
      : anthropicProvider(env.ANTHROPIC_API_KEY!, env.VANCE_EXAMPLE_MODEL ?? "claude-sonnet-4-5");
  try {
    const engine = new VanceEngine({ client, tenant, project, onEvent: describeEvent });
    const spawned = await engine.spawn({
      engine: "example_agent",
      engineDefault: Object.keys(TOOLS),
      models: [...provider.models],
    });
    console.log(`${provider.name}; process ${spawned.processId} in ${tenant}/${project}`);
    console.log(`task: ${TASK}`);
    try {
      for (let turn = 1; turn <= MAX_TURNS; turn++) {
        console.log(`turn ${turn}:`);
        const { text, calls, empty } = await provider.step(spawned);
        if (empty) {
          console.log("failed: the model's turn came back empty");
          return 1;
        }
        if (calls === 0) {
          console.log(`answer: ${text}`);
          if (text.includes("42")) return 0;
          console.log("failed: the answer does not hold the sum (42)");
          return 1;
        }
      }
      console.log(`failed: no answer within ${MAX_TURNS} turns`);
      return 1;
    } finally {
      // The task is over either way: the process's place among the tenant's live ones is given back.
      await spawned.end();
      console.log(`process ${spawned.processId} ended`);
    }
  } finally {
    await fake?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
