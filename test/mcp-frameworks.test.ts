import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createVanceClient } from "@vance/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoveringModel } from "./support/discovering-model";
import { runOnNode22, type ServiceHost, serveService } from "./support/engine-host";
import { type FakeProvider, fakeOpenAi, type ProviderRequest } from "./support/fake-providers";
import { PLAIN_TOOLS, setUpGreeter } from "./support/greeter";
import { ensureNode22, NODE_22, NODE_22_SUPPORTED } from "./support/mcp-conformance";
import { ensureNpmPackage } from "./support/npm-on-demand";

/**
 * Issue 36: every MCP framework completes activate-then-call over a served process, first try and
 * with no engine-side code — the real packages, each in a child process on Node 22, against the
 * service on 127.0.0.1 and a fake OpenAI-compatible model that reads the tools it is offered
 * (`discoveringModel`). `greet` is deferred: it is in no tool list at first, and the model learns
 * its name only from the discovery summary in `tool_description`'s description (none of these
 * frameworks passes `initialize`'s instructions on). Frameworks that fetch their tools once (the
 * AI SDK, LangChain) reach the activated tool through the served `invoke_tool`; the OpenAI Agents
 * SDK re-lists and calls it directly (Activate-First); the MCP Inspector's CLI connects per call.
 */

/** The MCP Inspector, pinned; its 2.x CLI needs Node ≥ 22.19 (docs/mcp.md). */
const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const TASK = { tool: "greet", arguments: { name: "Ada" }, query: "greet a person" };
const SUMMARY_LINE = "- greet — Greets someone by name.";

describe.skipIf(!NODE_22_SUPPORTED)("MCP frameworks over a served process: activate, then call", () => {
  let service: ServiceHost;
  let model: FakeProvider;

  beforeAll(async () => {
    ensureNode22();
    service = await serveService();
    model = await fakeOpenAi();
  }, 220_000);

  afterAll(async () => {
    await Promise.all([service?.close(), model?.close()]);
  });

  /** The greeter's tools in `project` and a process with greet deferred; its MCP URL. */
  async function servedProcess(project: string): Promise<string> {
    const client = createVanceClient({ baseUrl: service.base, token: service.token });
    await setUpGreeter(client, "acme", project);
    const spawned = await fetch(`${service.base}/v1/tenants/acme/projects/${project}/processes`, {
      method: "POST",
      headers: { authorization: `Bearer ${service.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        engine: "greeter",
        engineDefault: ["greet", "farewell", ...PLAIN_TOOLS],
        models: [],
      }),
    });
    expect(spawned.status).toBe(201);
    const { processId } = (await spawned.json()) as { processId: string };
    return `${service.base}/v1/tenants/acme/projects/${project}/processes/${processId}/mcp`;
  }

  /** Runs `test/engine/{script}.ts` against a fresh process; what it did and what the model was sent. */
  async function runLoop(script: string, project: string) {
    const url = await servedProcess(project);
    model.script(Array.from({ length: 8 }, () => discoveringModel(TASK)));
    const from = model.requests.length;
    const run = await runOnNode22(
      `test/engine/${script}.ts`,
      {
        MCP_URL: url,
        VANCE_TOKEN: service.token,
        PROVIDER_URL: model.baseUrl,
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: "test",
        OPENAI_AGENTS_DISABLE_TRACING: "1",
      },
      120_000,
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(0);
    const requests = model.requests.slice(from);
    const calls = run.lines.filter((line) => line.event === "tool_call").map((line) => line.name);
    expect(
      run.lines.filter((line) => line.event === "tool_error"),
      output,
    ).toEqual([]);
    expect(
      run.lines.find((line) => line.event === "answer"),
      output,
    ).toMatchObject({
      text: expect.stringContaining("Hello, Ada!"),
    });
    expectSummaryReachedTheModel(requests);
    return { calls, requests, output };
  }

  /** Greet was in no first tool list; the summary named it, in the same bytes in every request. */
  function expectSummaryReachedTheModel(requests: readonly ProviderRequest[]) {
    // First try: describe, call, answer — three model requests, no retry.
    expect(requests.length).toBe(3);
    expect(requests[0]!.toolNames).not.toContain("greet");
    const descriptions = requests.map((request) => {
      const tools = request.body.tools as { function: { name: string; description: string } }[];
      return tools.find((tool) => tool.function.name === "tool_description")!.function.description;
    });
    expect(descriptions[0]).toContain(SUMMARY_LINE);
    expect(new Set(descriptions).size).toBe(1);
  }

  it("Vercel AI SDK (ai 7 + @ai-sdk/mcp, tools fetched once): tool_description, then invoke_tool reaches greet", async () => {
    const { calls, requests, output } = await runLoop("mcp-loop-ai-sdk", "fw-aisdk");
    expect(calls, output).toEqual(["tool_description", "invoke_tool"]);
    // The list stayed the first one: greet was never offered, invoke_tool always.
    expect(requests.every((request) => !request.toolNames.includes("greet"))).toBe(true);
    expect(requests.every((request) => request.toolNames.includes("invoke_tool"))).toBe(true);
  });

  it("LangChain (@langchain/mcp-adapters + a LangGraph ReAct agent, tools fetched once): tool_description, then invoke_tool reaches greet", async () => {
    const { calls, requests, output } = await runLoop("mcp-loop-langchain", "fw-langchain");
    expect(calls, output).toEqual(["tool_description", "invoke_tool"]);
    expect(requests.every((request) => !request.toolNames.includes("greet"))).toBe(true);
  });

  it("OpenAI Agents SDK (re-lists every turn): tool_description, then greet itself (Activate-First)", async () => {
    const { calls, requests, output } = await runLoop("mcp-loop-openai-agents", "fw-agents");
    expect(calls, output).toEqual(["tool_description", "greet"]);
    expect(requests.at(-2)!.toolNames).toContain("greet");
  });

  it("MCP Inspector CLI (2.12.0, one connection per command): the summary in tools/list, tool_description, then greet", async () => {
    const inspector = join(
      ensureNpmPackage("mcp-inspector", INSPECTOR, "@modelcontextprotocol/inspector"),
      "clients/launcher/build/index.js",
    );
    const url = await servedProcess("fw-inspector");
    const catalog = join(mkdtempSync(join(tmpdir(), "vance-inspector-")), "mcp.json");
    const cli = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          NODE_22,
          [
            inspector,
            "--cli",
            url,
            "--transport",
            "http",
            "--header",
            `Authorization: Bearer ${service.token}`,
            ...args,
          ],
          { env: { ...process.env, MCP_CATALOG_PATH: catalog, NO_COLOR: "1" }, timeout: 60_000 },
          (error, stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
        );
      });
    const listed = await cli(["--method", "tools/list"]);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = (JSON.parse(listed.stdout) as { tools: { name: string; description: string }[] }).tools;
    expect(tools.map((tool) => tool.name)).not.toContain("greet");
    expect(tools.find((tool) => tool.name === "tool_description")?.description).toContain(SUMMARY_LINE);

    const described = await cli([
      "--method",
      "tools/call",
      "--tool-name",
      "tool_description",
      "--tool-arg",
      'names=["greet"]',
    ]);
    expect(described.code, described.stderr).toBe(0);
    expect(JSON.parse(described.stdout)).toMatchObject({
      structuredContent: { activated: ["greet"], howToCall: expect.stringContaining("invoke_tool") },
    });

    const greeted = await cli(["--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=Ada"]);
    expect(greeted.code, greeted.stderr).toBe(0);
    expect(JSON.parse(greeted.stdout)).toMatchObject({ content: [{ type: "text", text: "Hello, Ada!" }] });
  }, 600_000);
});
