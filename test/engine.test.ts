import { createVanceClient, type VanceClient } from "@vance/client";
import { type EngineEvent, type EngineProcess, postJson, ToolLimitError, VanceEngine } from "@vance/engine";
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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureCatalogEndpoint } from "./support/catalog-endpoint";
import { type ServiceHost, serveService } from "./support/engine-host";
import {
  assembleAnthropicStream,
  assembleChatStream,
  type FakeProvider,
  fakeAnthropic,
  fakeOpenAi,
} from "./support/fake-providers";
import {
  DROP_PROMPT,
  GREETER_MAX_TOOLS,
  GREETER_PROMPT,
  GREETER_SCRIPT,
  GREETER_SYSTEM,
  greeterSpawn,
  setUpGreeter,
} from "./support/greeter";
import { expectTheTask } from "./support/greeter-checks";

/**
 * The engine's turn protocol (`@vance/engine`) over plain `fetch` — the OpenAI Chat Completions
 * and Anthropic Messages builders, Node 20 — against the service served as `npm start` serves it
 * and scripted fake endpoints. The same task with the real SDKs and the AI SDK runs on Node 22
 * in `engine-frameworks.test.ts`.
 */

let service: ServiceHost;
let client: VanceClient;
let openai: FakeProvider;
let anthropic: FakeProvider;

beforeAll(async () => {
  service = await serveService();
  client = createVanceClient({ baseUrl: service.base, token: service.token });
  openai = await fakeOpenAi({ maxTools: GREETER_MAX_TOOLS, dropUnknownStreamedCalls: true });
  anthropic = await fakeAnthropic({ maxTools: GREETER_MAX_TOOLS, dropUnknownStreamedCalls: true });
});

afterAll(async () => {
  await Promise.all([service?.close(), openai?.close(), anthropic?.close()]);
});

/**
 * Spawns the greeter for `model` (`instance/slug`), its instance made a catalog endpoint first:
 * the service learns limits only for endpoints the catalog knows.
 */
async function spawnGreeter(
  project: string,
  model: string,
  events: EngineEvent[],
  wireType: "openai" | "anthropic" = "openai",
): Promise<EngineProcess> {
  await ensureCatalogEndpoint(service, model.split("/")[0]!, wireType);
  await setUpGreeter(client, "acme", project);
  const engine = new VanceEngine({ client, tenant: "acme", project, onEvent: (event) => events.push(event) });
  return engine.spawn(greeterSpawn(model));
}

describe("the engine over plain fetch: OpenAI Chat Completions", () => {
  it("learns the limit once, activates greet in turn 1 and calls it in turn 2, and reports the dropped call once", async () => {
    const events: EngineEvent[] = [];
    const process = await spawnGreeter("chat", "fakechat/model", events);
    const from = openai.requests.length;
    openai.script(GREETER_SCRIPT);
    const limitReports = service.callsTo("/v1/models/observed-limits").length;
    const diagnoses = service.callsTo("/diagnostics/empty-response").length;
    const url = `${openai.baseUrl}/chat/completions`;
    const messages: { role: string; content?: unknown }[] = [{ role: "user", content: GREETER_PROMPT }];
    let answer = "";
    for (let step = 0; step < 5 && !answer; step++) {
      const { turn, result } = await process.runTurn(
        (turn) => chatRequest(turn, { model: "m", system: GREETER_SYSTEM, messages }),
        (request) => postJson<ChatCompletionLike>(url, request),
      );
      const reply = readChatCompletion(result);
      messages.push(reply.message);
      if (reply.toolCalls.length === 0) answer = reply.text;
      const results = await Promise.all(reply.toolCalls.map((call) => process.handleToolCall(call, turn)));
      messages.push(...chatToolMessages(results));
    }
    expect(answer).toBe("I greeted Ada: Hello, Ada!");

    // Streamed: the endpoint drops the call to farewell, which is outside the tools array.
    messages.push({ role: "user", content: DROP_PROMPT });
    const turn = await process.turn();
    const request = chatRequest(turn, { model: "m", system: GREETER_SYSTEM, messages, stream: true });
    const streamed = await fetch(url, { method: "POST", body: JSON.stringify(request) });
    const reply = readChatCompletion(assembleChatStream(await streamed.text()));
    expect(reply.empty).toBe(true);
    const empty = chatEmptyResponse(request, reply, "chat-drop-1");
    const diagnosis = await process.onEmptyResponse(empty);
    expect(diagnosis?.kind).toBe("phantom");
    expect(diagnosis?.candidates).toContainEqual({ name: "farewell", origin: "prompt" });
    expect(await process.onEmptyResponse(empty)).toBeUndefined(); // once per request id

    expectTheTask(service, openai, from, "chat");
    expect(service.callsTo("/v1/models/observed-limits").length - limitReports).toBe(1);
    expect(service.callsTo("/diagnostics/empty-response").length - diagnoses).toBe(1);
    expect(events.filter((event) => event.type === "limit_learned")).toMatchObject([
      { model: "fakechat/model", maxTools: GREETER_MAX_TOOLS, rejected: 8 },
    ]);
  });
});

describe("the engine over plain fetch: Anthropic Messages", () => {
  it("marks the static block for the prompt cache and runs the same task", async () => {
    const events: EngineEvent[] = [];
    const process = await spawnGreeter("messages", "fakeanthropic/model", events, "anthropic");
    const from = anthropic.requests.length;
    anthropic.script(GREETER_SCRIPT);
    const limitReports = service.callsTo("/v1/models/observed-limits").length;
    const diagnoses = service.callsTo("/diagnostics/empty-response").length;
    const url = `${anthropic.baseUrl}/messages`;
    const messages: { role: string; content: unknown }[] = [{ role: "user", content: GREETER_PROMPT }];
    const options = { model: "m", max_tokens: 512, system: GREETER_SYSTEM };
    let answer = "";
    for (let step = 0; step < 5 && !answer; step++) {
      const { turn, result } = await process.runTurn(
        (turn) => messagesRequest(turn, { ...options, messages }),
        (request) => postJson<MessageLike>(url, request),
        { format: "anthropic" },
      );
      const reply = readMessage(result);
      messages.push(reply.message);
      if (reply.toolCalls.length === 0) answer = reply.text;
      else
        messages.push(
          toolResultMessage(await Promise.all(reply.toolCalls.map((c) => process.handleToolCall(c, turn)))),
        );
    }
    expect(answer).toBe("I greeted Ada: Hello, Ada!");
    const rebuilt = anthropic.requests[from + 1]!.body;
    expect(rebuilt.system).toMatchObject([{ cache_control: { type: "ephemeral" } }, { type: "text" }]);
    expect((rebuilt.system as object[])[1]).not.toHaveProperty("cache_control");
    expect(rebuilt.tools).toContainEqual(
      expect.objectContaining({ name: "tool_description", input_schema: expect.any(Object) }),
    );

    messages.push({ role: "user", content: DROP_PROMPT });
    const turn = await process.turn({ format: "anthropic" });
    const request = messagesRequest(turn, { ...options, messages, stream: true });
    const streamed = await fetch(url, { method: "POST", body: JSON.stringify(request) });
    const reply = readMessage(assembleAnthropicStream(await streamed.text()));
    expect(reply.empty).toBe(true);
    const diagnosis = await process.onEmptyResponse(messagesEmptyResponse(request, reply));
    expect(diagnosis?.kind).toBe("phantom");
    expect(diagnosis?.candidates).toContainEqual({ name: "farewell", origin: "prompt" });

    expectTheTask(service, anthropic, from, "messages");
    expect(service.callsTo("/v1/models/observed-limits").length - limitReports).toBe(1);
    expect(service.callsTo("/diagnostics/empty-response").length - diagnoses).toBe(1);
  });
});

describe("the engine's resilience rules", () => {
  it("a rebuilt turn that is rejected again is a ToolLimitError naming the fix, after one report", async () => {
    const process = await spawnGreeter("stubborn", "fakestubborn/model", []);
    const reports = service.callsTo("/v1/models/observed-limits").length;
    const url = `${openai.baseUrl}/chat/completions`;
    const from = openai.requests.length;
    // An endpoint whose error names 6 while it takes 3: the rebuilt turn (5 tools) is refused too.
    openai.limit(3, 6);
    try {
      const sent = process.runTurn(
        (turn) => chatRequest(turn, { model: "m", messages: [{ role: "user", content: "hi" }] }),
        (request) => postJson(url, request),
      );
      await expect(sent).rejects.toThrow(ToolLimitError);
      await expect(sent).rejects.toThrow(/rejected the tools array again .* set maxTools/);
    } finally {
      openai.limit(GREETER_MAX_TOOLS);
    }
    expect(openai.requests.slice(from).map((request) => request.toolNames.length)).toEqual([8, 5]);
    expect(service.callsTo("/v1/models/observed-limits").length - reports).toBe(1);
  });

  it("a limit below the floor is a ToolLimitError with the service's reason", async () => {
    const process = await spawnGreeter("floor", "fakefloor/model", []);
    const reports = service.callsTo("/v1/models/observed-limits").length;
    const url = `${openai.baseUrl}/chat/completions`;
    const from = openai.requests.length;
    openai.limit(1);
    try {
      const sent = process.runTurn(
        (turn) => chatRequest(turn, { model: "m", messages: [{ role: "user", content: "hi" }] }),
        (request) => postJson(url, request),
      );
      await expect(sent).rejects.toThrow(ToolLimitError);
      // The service refuses to learn a limit below the floor plus the reserve (422), and says why.
      await expect(sent).rejects.toThrow(/limit 1 is below the capability floor .* nothing was learned/);
    } finally {
      openai.limit(GREETER_MAX_TOOLS);
    }
    const reported = service.callsTo("/v1/models/observed-limits").slice(reports);
    expect(reported.map((call) => [call.status, (call.answer as { code?: string }).code])).toEqual([
      [422, "budget_floor_exceeded"],
    ]);
    // Nothing learned, so no rebuilt turn was sent.
    expect(openai.requests.slice(from).map((request) => request.toolNames.length)).toEqual([8]);
    const budget = await fetch(`${service.base}/v1/models/budget?chain=fakefloor/model`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    expect(((await budget.json()) as { maxTools: number | null }).maxTools).toBeNull();
  });

  it("a rejection that names no tool limit is thrown as it came, and nothing is reported", async () => {
    const process = await spawnGreeter("other-error", "fakeother/model", []);
    const reports = service.callsTo("/v1/models/observed-limits").length;
    const turn = await process.turn();
    const error = Object.assign(new Error("400 Invalid 'messages': empty"), { status: 400 });
    await expect(process.onProviderError(error, turn)).rejects.toBe(error);
    expect(service.callsTo("/v1/models/observed-limits").length).toBe(reports);
  });

  it("an empty answer that hit its token limit is never reported", async () => {
    const process = await spawnGreeter("length", "fakelength/model", []);
    const diagnoses = service.callsTo("/diagnostics/empty-response").length;
    const found = await process.onEmptyResponse({
      messages: [{ role: "user", content: "hi" }],
      offeredTools: ["tool_list"],
      finishReason: "length",
    });
    expect(found).toBeUndefined();
    expect(service.callsTo("/diagnostics/empty-response").length).toBe(diagnoses);
  });

  it("tool failures, bad arguments and names outside the allow set come back for the model to read", async () => {
    const process = await spawnGreeter("failures", "fakefailures/model", []);
    const invokes = () => service.callsTo(`/processes/${process.processId}/invoke`).length;
    const before = invokes();
    expect(await process.handleToolCall({ name: "greet", arguments: "{not json" })).toMatchObject({
      ok: false,
      error: "InvalidArguments",
    });
    expect(invokes()).toBe(before); // refused before any request
    expect(await process.handleToolCall({ name: "greet", arguments: { name: 7 } })).toMatchObject({
      ok: false,
      error: "invalid_params",
    });
    expect(await process.handleToolCall({ name: "whoami", arguments: {} })).toMatchObject({
      ok: false,
      error: "tool_not_allowed",
    });
    const ok = await process.handleToolCall({ name: "greet", arguments: '{"name":"Bo"}', id: "c1" });
    expect(ok).toEqual({ ok: true, name: "greet", id: "c1", value: "Hello, Bo!", content: "Hello, Bo!" });
  });

  it("runs client tools here: declared at spawn, answered by the engine's own handler", async () => {
    await setUpGreeter(client, "acme", "client-tools");
    const engine = new VanceEngine({ client, tenant: "acme", project: "client-tools" });
    const seen: unknown[] = [];
    const process = await engine.spawn({
      ...greeterSpawn("fakeclient/model"),
      allowedToolsAdd: ["local_clock"],
      clientTools: [
        {
          name: "local_clock",
          description: "The engine's clock.",
          inputSchema: { type: "object", properties: { zone: { type: "string" } } },
          execute: (params) => {
            seen.push(params);
            return { time: "12:00" };
          },
        },
      ],
    });
    const result = await process.handleToolCall({ name: "local_clock", arguments: { zone: "UTC" } });
    expect(result).toMatchObject({ ok: true, value: { time: "12:00" }, content: '{"time":"12:00"}' });
    expect(seen).toEqual([{ zone: "UTC" }]);
  });
});

describe("ending a process through the kit", () => {
  it("a process ended with end() no longer counts under the tenant's live cap, its record is gone, and ending it again resolves", async () => {
    const capped = await serveService({ VANCE_QUOTA_LIVE_PROCESSES: "2" });
    try {
      // The default retries: a 429 quota_exceeded is not sent again.
      const cappedClient = createVanceClient({ baseUrl: capped.base, token: capped.token });
      const engine = new VanceEngine({ client: cappedClient, tenant: "acme", project: "ends" });
      const first = await engine.spawn({ models: [] });
      const second = await engine.spawn({ models: [] });
      await expect(engine.spawn({ models: [] })).rejects.toMatchObject({
        status: 429,
        code: "quota_exceeded",
      });

      await first.end();
      expect(capped.callsTo(`/processes/${first.processId}`, "DELETE").map((call) => call.status)).toEqual([
        204,
      ]);
      await expect(engine.attach(first.processId, { models: [] })).rejects.toMatchObject({
        status: 404,
        code: "process_not_found",
      });
      expect(await first.handleToolCall({ name: "tool_list", arguments: {} })).toMatchObject({
        ok: false,
        error: "process_not_found",
      });
      await expect(first.end()).resolves.toBeUndefined();

      const third = await engine.spawn({ models: [] });
      expect(capped.callsTo("/projects/ends/processes", "POST").map((call) => call.status)).toEqual([
        201, 201, 429, 201,
      ]);
      await expect(engine.spawn({ models: [] })).rejects.toMatchObject({ code: "quota_exceeded" });
      // The processes not ended live on.
      expect((await engine.attach(second.processId, { models: [] })).allowedTools).toEqual(
        second.allowedTools,
      );
      expect(third.processId).not.toBe(first.processId);
    } finally {
      await capped.close();
    }
  });
});
