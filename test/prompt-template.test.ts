import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import {
  anthropicMessage,
  fakeLlmEndpoint,
  openAiCompletion,
  type ReceivedRequest,
} from "./support/fake-llm";

/**
 * Issue 14: `prompt_template` calls a model of the catalog — OpenAI chat completions and
 * Anthropic Messages, against two fake endpoints started here on 127.0.0.1 that check what they
 * receive — through the guarded fetch (loopback allowlisted), with the provider's key from a
 * platform secret that no answer ever shows.
 */

const OPENAI_KEY = "sk-fake-openai-0123456789abcdef";
const ANTHROPIC_KEY = "sk-ant-fake-fedcba9876543210";
const T = "/v1/tenants/acme/projects/shop";

type Endpoint = Awaited<ReturnType<typeof fakeLlmEndpoint>>;
type App = Awaited<ReturnType<typeof testApp>>["app"];
let openai: Endpoint;
let anthropic: Endpoint;
let app: App;
let client: Awaited<ReturnType<typeof projectClient>>;
/** Every answer any route gave in this file: none may hold a key. */
const answers: string[] = [];

/** The user message of an OpenAI request. */
const userOf = (request: ReceivedRequest) =>
  (request.body.messages as { role: string; content: string }[]).find((m) => m.role === "user")?.content;

async function platformPut(path: string, yaml: string) {
  const res = await app.request(`/v1/models/${path}`, {
    method: "PUT",
    headers: { ...(await bearer({ tenant: "*", roles: ["admin"] })), "content-type": "application/yaml" },
    body: yaml,
  });
  answers.push(await res.clone().text());
  if (res.status >= 300) throw new Error(`PUT /v1/models/${path}: ${res.status} ${await res.text()}`);
}

async function invoke(name: string, params: unknown) {
  const res = await app.request(`${T}/tools/${name}/invoke`, {
    method: "POST",
    headers: { ...client.headers, "content-type": "application/json" },
    body: JSON.stringify({ params }),
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
}

function promptTool(parameters: string, description = "A mini-agent.") {
  return `type: prompt_template\ndescription: ${description}\nparameters:\n${parameters}`;
}

beforeAll(async () => {
  openai = await fakeLlmEndpoint(() => ({ json: openAiCompletion("unused") }));
  anthropic = await fakeLlmEndpoint(() => ({ json: anthropicMessage("unused") }));
  ({ app } = await testApp({
    env: {
      VANCE_NETWORK_ALLOWLIST: "127.0.0.1",
      VANCE_SECRET_FAKEAI_KEY: OPENAI_KEY,
      VANCE_SECRET_FAKEANTHROPIC_KEY: ANTHROPIC_KEY,
      VANCE_DEFAULT_MODEL_INSTANCE: "fakeai,globex=fakeanthropic",
    },
  }));
  client = await projectClient(app);
  await platformPut(
    "fakeai/_provider",
    `wireType: openai\nbaseUrl: ${openai.baseUrl}\napiKey: \${secret:FAKEAI_KEY}\n`,
  );
  await platformPut("fakeai/nano", "size: small\n");
  await platformPut("fakeai/mini", "size: small\n");
  await platformPut("fakeai/big", "size: large\n");
  await platformPut(
    "fakeanthropic/_provider",
    `wireType: anthropic\nbaseUrl: ${anthropic.baseUrl}\napiKey: \${secret:FAKEANTHROPIC_KEY}\n`,
  );
  await platformPut("fakeanthropic/claude-small", "size: small\n");

  await client.putTool(
    "summarise",
    promptTool("  promptPrefix: You summarise text in one line.\n  model: fakeai/big\n"),
  );
  await client.putTool(
    "triage_ticket",
    promptTool(
      [
        "  promptPrefix: Classify the ticket. Answer in JSON with fields team and urgent.",
        "  model: fakeai/big",
        "  responseFormat: json",
        "  maxTokens: 200",
        "  inputs:",
        "    - { name: title, type: string }",
        "    - { name: body, type: string }",
        "    - { name: priority, type: integer, required: false }",
        "",
      ].join("\n"),
    ),
  );
  await client.putTool(
    "haiku",
    promptTool("  promptPrefix: You write haiku.\n  model: fakeanthropic/claude-small\n  maxTokens: 64\n"),
  );
  await client.putTool("quick", promptTool("  promptPrefix: Be brief.\n  modelSize: small\n"));
  await client.putTool(
    "slow",
    promptTool("  promptPrefix: Take your time.\n  model: fakeai/big\n  timeoutMs: 200\n"),
  );
});

afterAll(async () => {
  // No answer of any route in this file may show a provider's key.
  expect(answers.length).toBeGreaterThan(10);
  for (const answer of answers) {
    expect(answer).not.toContain(OPENAI_KEY);
    expect(answer).not.toContain(ANTHROPIC_KEY);
  }
  await openai.close();
  await anthropic.close();
});

describe("prompt_template over OpenAI chat completions", () => {
  it("sends the model's slug, the fixed prefix as the system message, the input as the user message and the key; answers the text", async () => {
    openai.answer(() => ({ json: openAiCompletion("Cats sleep a lot.") }));
    const before = openai.requests.length;
    const res = await invoke("summarise", { input: "Cats sleep twelve to sixteen hours a day." });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ value: "Cats sleep a lot." });
    const [request] = openai.requests.slice(before);
    expect(request).toMatchObject({ method: "POST", path: "/v1/chat/completions" });
    expect(request?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(request?.body).toEqual({
      model: "big",
      messages: [
        { role: "system", content: "You summarise text in one line." },
        { role: "user", content: "Cats sleep twelve to sixteen hours a day." },
      ],
    });
  });

  it("renders several inputs into the user message, asks for JSON and answers the parsed value (a fenced answer too)", async () => {
    openai.answer(() => ({ json: openAiCompletion('```json\n{"team": "billing", "urgent": true}\n```') }));
    const before = openai.requests.length;
    const res = await invoke("triage_ticket", { title: "Refund", body: "Charged twice." });
    expect(res.body).toMatchObject({ value: { team: "billing", urgent: true } });
    const [request] = openai.requests.slice(before);
    expect(request?.body).toMatchObject({ max_tokens: 200, response_format: { type: "json_object" } });
    expect(userOf(request!)).toBe("<title>\nRefund\n</title>\n\n<body>\nCharged twice.\n</body>");
  });

  it("an answer that is not JSON where JSON was asked for is LlmInvalidJson; an empty one LlmEmptyResponse", async () => {
    openai.answer(() => ({ json: openAiCompletion("Billing, urgent.") }));
    expect((await invoke("triage_ticket", { title: "a", body: "b" })).body).toMatchObject({
      error: "LlmInvalidJson",
    });
    openai.answer(() => ({ json: openAiCompletion(null, "content_filter") }));
    const empty = await invoke("summarise", { input: "x" });
    expect(empty.body).toMatchObject({ error: "LlmEmptyResponse" });
    expect(String(empty.body.message)).toContain("content_filter");
  });

  it("modelSize picks the first model of that size (by slug) in the tenant's default instance", async () => {
    openai.answer(() => ({ json: openAiCompletion("ok") }));
    const before = openai.requests.length;
    expect((await invoke("quick", { input: "hi" })).body).toMatchObject({ value: "ok" });
    expect(openai.requests.slice(before).map((request) => request.body.model)).toEqual(["mini"]);

    // Another tenant's default instance is another endpoint.
    anthropic.answer(() => ({ json: anthropicMessage("hello from the other instance") }));
    const globex = await projectClient(app, "globex", "web");
    await globex.putTool("quick", promptTool("  promptPrefix: Be brief.\n  modelSize: small\n"));
    const sent = anthropic.requests.length;
    const answered = await globex.call("POST", "/tools/quick/invoke", { params: { input: "hi" } });
    answers.push(JSON.stringify(answered.body));
    expect(answered.body).toMatchObject({ value: "hello from the other instance" });
    expect(anthropic.requests.slice(sent).map((request) => request.body.model)).toEqual(["claude-small"]);
  });

  it("a 500 is LlmHttpError with its status, the key scrubbed from the quoted body; a refused key is said without the body", async () => {
    openai.answer((request) => ({
      status: 500,
      json: { error: { message: `upstream failed for ${String(request.headers.authorization)}` } },
    }));
    const failed = await invoke("summarise", { input: "x" });
    expect(failed.body).toMatchObject({ error: "LlmHttpError", status: 500 });
    expect(String(failed.body.message)).toContain("upstream failed for Bearer ***");

    openai.answer(() => ({
      status: 401,
      json: { error: { message: `Incorrect API key provided: sk-fake-***cdef` } },
    }));
    const refused = await invoke("summarise", { input: "x" });
    expect(refused.body).toMatchObject({ error: "LlmHttpError", status: 401 });
    expect(String(refused.body.message)).not.toContain("cdef");
  });

  it("an endpoint slower than timeoutMs is a TimeoutError, and the request is given up", async () => {
    // An answer no test waits for: only the tool's timeoutMs ends the call.
    openai.answer(() => ({ json: openAiCompletion("late"), delayMs: 600_000 }));
    const before = openai.abandoned();
    const res = await invoke("slow", { input: "x" });
    expect(res.body).toMatchObject({ error: "TimeoutError" });
    await expect.poll(() => openai.abandoned()).toBe(before + 1);
  });
});

describe("prompt_template over Anthropic Messages", () => {
  it("sends x-api-key, the version, the prefix as system and max_tokens; answers the text blocks", async () => {
    anthropic.answer(() => ({ json: anthropicMessage("An old silent pond") }));
    const before = anthropic.requests.length;
    const res = await invoke("haiku", { input: "a frog" });
    expect(res.body).toMatchObject({ value: "An old silent pond" });
    const [request] = anthropic.requests.slice(before);
    expect(request).toMatchObject({ method: "POST", path: "/v1/messages" });
    expect(request?.headers["x-api-key"]).toBe(ANTHROPIC_KEY);
    expect(request?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toEqual({
      model: "claude-small",
      system: "You write haiku.",
      messages: [{ role: "user", content: "a frog" }],
      max_tokens: 64,
    });
  });
});

describe("prompt_template: the platform's key and the guard", () => {
  it("is counted as usage like any tool inside a process", async () => {
    anthropic.answer(() => ({ json: anthropicMessage("ok") }));
    const { processId } = await client.spawn({ recipe: "poet", allowedToolsAdd: ["haiku"] });
    const res = await client.invoke(processId, "haiku", { input: "rain" });
    answers.push(JSON.stringify(res.body));
    expect(res.body).toMatchObject({ value: "ok" });
    const usage = await client.call("GET", "/insights/tool-usage");
    expect(usage.body).toMatchObject({
      roles: [{ role: "poet", tools: [{ name: "haiku", calls: 1 }] }],
    });
  });

  it("a tenant's own document cannot read the platform secret the catalog uses", async () => {
    await client.putTool(
      "steal_key",
      `type: rest\ndescription: x\nparameters:\n  url: ${openai.baseUrl}/echo\n  headers: { x-key: "\${secret:FAKEAI_KEY}" }\n`,
    );
    expect((await invoke("steal_key", {})).body).toMatchObject({ error: "SecretNotFound" });
  });

  it("GET /v1/models shows each provider's baseUrl and models with their sizes, never the key or its secret", async () => {
    const res = await app.request("/v1/models", { headers: client.headers });
    const text = await res.text();
    answers.push(text);
    expect(res.status).toBe(200);
    const fakeai = (JSON.parse(text) as { providers: { instance: string }[] }).providers.find(
      (provider) => provider.instance === "fakeai",
    );
    expect(fakeai).toEqual({
      instance: "fakeai",
      wireType: "openai",
      maxTools: null,
      baseUrl: openai.baseUrl,
      models: [
        { slug: "big", size: "large" },
        { slug: "mini", size: "small" },
        { slug: "nano", size: "small" },
      ],
    });
    expect(text).not.toContain("FAKEAI_KEY");
  });

  it("goes through the guarded fetch: without the loopback allowlist the call is refused", async () => {
    const guarded = await testApp({ env: { VANCE_SECRET_FAKEAI_KEY: OPENAI_KEY } });
    const admin = {
      ...(await bearer({ tenant: "*", roles: ["admin"] })),
      "content-type": "application/yaml",
    };
    const put = await guarded.app.request("/v1/models/fakeai/_provider", {
      method: "PUT",
      headers: admin,
      body: `wireType: openai\nbaseUrl: ${openai.baseUrl}\napiKey: \${secret:FAKEAI_KEY}\n`,
    });
    expect(put.status).toBe(201);
    const guardedClient = await projectClient(guarded.app);
    await guardedClient.putTool("summarise", promptTool("  promptPrefix: p\n  model: fakeai/big\n"));
    const before = openai.requests.length;
    const res = await guardedClient.call("POST", "/tools/summarise/invoke", { params: { input: "x" } });
    answers.push(JSON.stringify(res.body));
    expect(res.body).toMatchObject({ error: "BlockedAddress" });
    expect(openai.requests.length).toBe(before);
  });

  it("a provider without a key set on this deployment, or without a baseUrl, answers ModelNotConfigured", async () => {
    await platformPut(
      "nokey/_provider",
      `wireType: openai\nbaseUrl: ${openai.baseUrl}\napiKey: \${secret:UNSET_KEY}\n`,
    );
    await platformPut("nourl/_provider", "wireType: openai\n");
    await client.putTool("no_key", promptTool("  promptPrefix: p\n  model: nokey/m\n"));
    await client.putTool("no_url", promptTool("  promptPrefix: p\n  model: nourl/m\n"));
    const noKey = await invoke("no_key", { input: "x" });
    expect(noKey.body).toMatchObject({ error: "ModelNotConfigured" });
    expect(String(noKey.body.message)).not.toContain("UNSET_KEY");
    expect((await invoke("no_url", { input: "x" })).body).toMatchObject({ error: "ModelNotConfigured" });
  });

  it("a script's prompt_template calls run on its request's read: 10 calls read the generations as often as 1", async () => {
    // Each call picks its model from the catalog (the request's read) and finds no such instance.
    await client.putTool("ask_missing", promptTool("  promptPrefix: p\n  model: nowhere/none\n"));
    const script = (calls: number) =>
      `type: scripted\ndescription: asks ${calls}\nparameters:\n  inputs: []\n  source: |\n    let missing = 0;\n    for (let i = 0; i < ${calls}; i++) { try { vance.tools.call("ask_missing", { input: "x" }) } catch (e) { if (e.code === "ModelNotFound") missing++ } }\n    missing\n`;
    await client.putTool("ask_once", script(1));
    await client.putTool("ask_ten", script(10));
    const reads = async () => {
      const res = await app.request("/v1/metrics", { headers: await bearer({ tenant: "*", roles: [] }) });
      return ((await res.json()) as { generations: { reads: number } }).generations.reads;
    };
    const readsOf = async (name: string) => {
      const before = await reads();
      const answer = await invoke(name, {});
      expect(answer.body).toMatchObject({ value: name === "ask_once" ? 1 : 10 });
      return (await reads()) - before;
    };
    // Warm: the layers listed, the catalog compiled.
    await readsOf("ask_once");
    await readsOf("ask_ten");
    const once = await readsOf("ask_once");
    const ten = await readsOf("ask_ten");
    expect(once).toBeGreaterThan(0);
    expect(ten).toBe(once);
  });

  it("a document naming neither model nor modelSize is refused on write with the line", async () => {
    const res = await client.call(
      "PUT",
      "/tools/bad_prompt",
      "type: prompt_template\ndescription: d\nparameters:\n  promptPrefix: p\n",
      "application/yaml",
    );
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.errors)).toContain("one of model and modelSize is required");
  });
});
