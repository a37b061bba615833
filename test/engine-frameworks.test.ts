import { readFileSync } from "node:fs";
import { createVanceClient } from "@vance/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureCatalogEndpoint } from "./support/catalog-endpoint";
import { runOnNode22, type ScriptRun, type ServiceHost, serveService } from "./support/engine-host";
import { type FakeProvider, fakeAnthropic, fakeOpenAi } from "./support/fake-providers";
import { GREETER_MAX_TOOLS, GREETER_SCRIPT, setUpGreeter } from "./support/greeter";
import { expectTheTask } from "./support/greeter-checks";
import { ensureNode22, NODE_22_SUPPORTED } from "./support/mcp-conformance";

/**
 * The adapters of `@vance/engine` with the frameworks' real packages — `ai` 7 with
 * `@ai-sdk/openai` and `@ai-sdk/anthropic`, `openai` 7 (Chat Completions and Responses),
 * `@anthropic-ai/sdk` — each in a child process on Node 22 (what these packages require; the
 * binary the MCP conformance suite installs), against the service on 127.0.0.1 and the scripted
 * fake endpoints. Each child runs the greeter task (`test/support/greeter.ts`) and a streamed turn
 * whose call the endpoint drops; this process checks what the endpoint and the service received.
 */
describe.skipIf(!NODE_22_SUPPORTED)("the adapters with the frameworks' packages, on Node 22", () => {
  let service: ServiceHost;
  let openai: FakeProvider;
  let anthropic: FakeProvider;

  beforeAll(async () => {
    ensureNode22();
    service = await serveService();
    openai = await fakeOpenAi({ maxTools: GREETER_MAX_TOOLS, dropUnknownStreamedCalls: true });
    anthropic = await fakeAnthropic({ maxTools: GREETER_MAX_TOOLS, dropUnknownStreamedCalls: true });
  }, 220_000);

  afterAll(async () => {
    await Promise.all([service?.close(), openai?.close(), anthropic?.close()]);
  });

  /**
   * Runs `test/engine/{script}.ts` for a fresh project and model instance — a catalog endpoint
   * (the service learns limits only for those); checks the task.
   */
  async function runTask(
    script: string,
    fake: FakeProvider,
    project: string,
    env: Record<string, string> = {},
  ) {
    await ensureCatalogEndpoint(service, project, fake === anthropic ? "anthropic" : "openai");
    const from = fake.requests.length;
    const limitReports = service.callsTo("/v1/models/observed-limits").length;
    const diagnoses = service.callsTo("/diagnostics/empty-response").length;
    fake.script(GREETER_SCRIPT);
    const run: ScriptRun = await runOnNode22(`test/engine/${script}.ts`, {
      VANCE_URL: service.base,
      VANCE_TOKEN: service.token,
      VANCE_TENANT: "acme",
      VANCE_PROJECT: project,
      PROVIDER_URL: fake.baseUrl,
      MODEL: `${project}/model`,
      ...env,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(0);
    expectTheTask(service, fake, from, project);
    expect(service.callsTo("/v1/models/observed-limits").length - limitReports, output).toBe(1);
    const reports = service.callsTo("/diagnostics/empty-response").slice(diagnoses);
    expect(reports.length, output).toBe(1);
    expect((reports[0]!.answer as { candidates: unknown[] }).candidates).toContainEqual({
      name: "farewell",
      origin: "prompt",
    });
    const events = run.lines;
    expect(
      events.filter((line) => line.event === "limit_learned"),
      output,
    ).toMatchObject([{ model: `${project}/model`, maxTools: GREETER_MAX_TOOLS }]);
    expect(
      events.filter((line) => line.event === "empty_response"),
      output,
    ).toHaveLength(1);
    return { run, events, requests: fake.requests.slice(from) };
  }

  it("AI SDK (@ai-sdk/openai): generateText + stopWhen calls the tool tool_description activated at the next step", async () => {
    const { events } = await runTask("ai-sdk", openai, "aisdk");
    expect(events.filter((line) => line.event === "tool_call").map((line) => line.name)).toEqual([
      "tool_description",
      "greet",
    ]);
    expect(events.filter((line) => line.event === "tool_error")).toEqual([]);
    expect(events.find((line) => line.event === "answer")).toMatchObject({
      text: "I greeted Ada: Hello, Ada!",
    });
  });

  it("without the adapter (the AI SDK over MCP) the same loop fails: greet, activated, is no tool of the call", async () => {
    const project = "aisdkmcp";
    openai.limit(undefined);
    openai.script(GREETER_SCRIPT.slice(0, 3));
    const from = openai.requests.length;
    try {
      const run = await runOnNode22("test/engine/ai-sdk-mcp.ts", {
        VANCE_URL: service.base,
        VANCE_TOKEN: service.token,
        VANCE_TENANT: "acme",
        VANCE_PROJECT: project,
        PROVIDER_URL: openai.baseUrl,
        MODEL: `${project}/model`,
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(run.code, output).toBe(0);
      // The service activated greet (its next tools/list holds it), but the call's tool set was fixed.
      expect(
        run.lines.filter((line) => line.event === "tool_error"),
        output,
      ).toMatchObject([
        {
          name: "greet",
          error: expect.stringContaining("AI_NoSuchToolError: Model tried to call unavailable tool 'greet'"),
        },
      ]);
      expect(openai.requests.slice(from).every((request) => !request.toolNames.includes("greet"))).toBe(true);
    } finally {
      openai.limit(GREETER_MAX_TOOLS);
    }
  });

  it("AI SDK (@ai-sdk/anthropic): the static block carries Anthropic's cache marker, the demoted block none", async () => {
    const { events, requests } = await runTask("ai-sdk", anthropic, "aisdkanthropic", {
      PROVIDER: "anthropic",
    });
    expect(events.filter((line) => line.event === "tool_call").map((line) => line.name)).toEqual([
      "tool_description",
      "greet",
    ]);
    const system = requests[1]!.body.system as { text: string; cache_control?: unknown }[];
    expect(system.map((block) => block.cache_control ?? null)).toEqual([{ type: "ephemeral" }, null]);
  });

  it.each([
    ["openai-chat", "OpenAI Chat Completions (openai SDK)", "chat"],
    ["openai-responses", "OpenAI Responses (openai SDK)", "responses"],
  ])("%s: %s", async (script, _title, project) => {
    const { events, requests } = await runTask(script, openai, project);
    expect(events.filter((line) => line.event === "tool_call").map((line) => line.name)).toEqual([
      "tool_description",
      "greet",
    ]);
    expect(events.find((line) => line.event === "answer")).toMatchObject({
      text: "I greeted Ada: Hello, Ada!",
    });
    const path = project === "chat" ? "/v1/chat/completions" : "/v1/responses";
    expect(requests.map((request) => request.path)).toEqual(Array(5).fill(path));
    expect(requests[4]!.stream).toBe(true);
  });

  it("Anthropic Messages (@anthropic-ai/sdk): cache_control on the static block, streamed drop reported once", async () => {
    const { events, requests } = await runTask("anthropic", anthropic, "anthropic");
    expect(events.filter((line) => line.event === "tool_call").map((line) => line.name)).toEqual([
      "tool_description",
      "greet",
    ]);
    const system = requests[2]!.body.system as { cache_control?: unknown }[];
    expect(system.map((block) => block.cache_control ?? null)).toEqual([{ type: "ephemeral" }, null]);
    expect(requests[4]!.stream).toBe(true);
  });

  /** The README's snippets (`examples/snippets/`), each run as written with the environment a real one reads. */
  describe("the README's snippets", () => {
    const SNIPPET_SCRIPT = GREETER_SCRIPT.slice(0, 3);

    it.each([
      ["ai-sdk", "openai"],
      ["openai", "openai"],
      ["anthropic", "anthropic"],
      ["openai-agents-mcp", "openai"],
    ] as const)(
      "%s runs the greeter task: greet described in one turn, called in the next",
      async (snippet, wire) => {
        const project = `snippet-${snippet}`;
        const client = createVanceClient({ baseUrl: service.base, token: service.token });
        await setUpGreeter(client, "acme", project);
        const fake = wire === "openai" ? openai : anthropic;
        fake.limit(undefined);
        fake.script(SNIPPET_SCRIPT);
        const from = fake.requests.length;
        try {
          const run = await runOnNode22(`examples/snippets/${snippet}.ts`, {
            VANCE_URL: service.base,
            VANCE_TOKEN: service.token,
            VANCE_TENANT: "acme",
            VANCE_PROJECT: project,
            OPENAI_BASE_URL: openai.baseUrl,
            OPENAI_API_KEY: "test",
            ANTHROPIC_BASE_URL: anthropic.baseUrl.replace(/\/v1$/, ""),
            ANTHROPIC_API_KEY: "test",
            OPENAI_AGENTS_DISABLE_TRACING: "1",
          });
          const output = `${run.stdout}\n${run.stderr}`;
          expect(run.code, output).toBe(0);
          expect(run.stdout.trim().split("\n").at(-1), output).toBe("I greeted Ada: Hello, Ada!");
          const requests = fake.requests.slice(from);
          expect(requests.length, output).toBe(3);
          expect(requests[0]!.toolNames).not.toContain("greet");
          expect(requests[1]!.toolNames).toContain("greet");
          const greeted = service.calls.filter(
            (call) =>
              call.path.includes(`/projects/${project}/`) &&
              JSON.stringify(call.answer ?? "").includes("Hello, Ada!"),
          );
          expect(greeted.length, output).toBeGreaterThan(0);
          if (snippet !== "openai-agents-mcp") {
            // The conversation over, the snippet ended its process: the record gone, its place given back.
            const spawned = service.callsTo(`/projects/${project}/processes`, "POST");
            const ids = spawned.map((call) => (call.answer as { processId: string }).processId);
            expect(ids.length, output).toBe(1);
            const ended = service.callsTo(`/projects/${project}/processes/${ids[0]}`, "DELETE");
            expect(
              ended.map((call) => call.status),
              output,
            ).toEqual([204]);
          }
        } finally {
          fake.limit(GREETER_MAX_TOOLS);
        }
      },
    );

    it("are in docs/engines.md as they are in examples/snippets/", () => {
      const readme = readFileSync("docs/engines.md", "utf8");
      for (const snippet of ["ai-sdk", "openai", "anthropic", "openai-agents-mcp"]) {
        const source = readFileSync(`examples/snippets/${snippet}.ts`, "utf8");
        expect(readme, snippet).toContain(`\`\`\`ts\n// examples/snippets/${snippet}.ts\n${source}\`\`\``);
      }
    });
  });
});
