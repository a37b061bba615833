import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGuardedFetch } from "@vance/adapters";
import { SdkMcpClient } from "@vance/adapters/mcp";
import { createNetworkPolicy, DocumentCascade, MCP_SERVER_DOCUMENTS_DIR, SecretService } from "@vance/core";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import { startMcpTestServer } from "./support/mcp-test-server";

const T = "/v1/tenants/acme/projects/shop";
const OWN_KEY = "own-key-7f6e5d4c3b2a1908";

type App = Awaited<ReturnType<typeof testApp>>["app"];

interface Listed {
  name: string;
  pack?: string;
  stale?: true;
}

/** The sub-tool name a server tool gets in `pack` (API.md: lower case, other characters `_`). */
const subTool = (pack: string, name: string) => `${pack}__${name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;

function mcpServerDoc(url: string, extra = "") {
  return `url: ${url}\ntimeoutMs: 5000\n${extra}`;
}

async function request(
  app: App,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
) {
  const res = await app.request(`${T}${path}`, {
    method,
    headers: {
      ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
      ...(body === undefined ? {} : { "content-type": contentType }),
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

async function put(app: App, path: string, yaml: string) {
  const res = await request(app, "PUT", `/${path}`, yaml, "application/yaml");
  if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

async function listTools(app: App): Promise<Listed[]> {
  const res = await request(app, "GET", "/tools");
  expect(res.status).toBe(200);
  return res.body.tools as Listed[];
}

/** server-everything's own tools/list, read with the SDK's client as any MCP client would. */
async function fetchEverythingTools(): Promise<{ name: string; execution?: { taskSupport?: string } }[]> {
  const client = new Client({ name: "packs-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(inject("mcpEverythingUrl"))));
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const invoke = (app: App, name: string, params: unknown) =>
  request(app, "POST", `/tools/${name}/invoke`, { params });

describe("MCP packs and mcp tools over HTTP, against the test server and server-everything", () => {
  const ownUrl = inject("mcpTestServerUrl");
  const everythingUrl = inject("mcpEverythingUrl");
  let app: App;
  let everythingTools: string[];

  beforeAll(async () => {
    ({ app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } }));
    const admin = await bearer({ tenant: "acme", roles: ["admin"] });
    const stored = await app.request("/v1/tenants/acme/secrets/OWN_KEY", {
      method: "PUT",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ value: OWN_KEY }),
    });
    expect(stored.status).toBe(204);
    await put(
      app,
      "documents/mcp-servers/own.yaml",
      mcpServerDoc(ownUrl, "headers:\n  X-Api-Key: ${secret:OWN_KEY}\n"),
    );
    await put(app, "documents/mcp-servers/everything.yaml", mcpServerDoc(everythingUrl));
    await put(
      app,
      "tools/own",
      "type: mcp_server\ndescription: The test server's tools\nprimary: true\nlabels: [widgets]\ndisabledSubTools: [tiny_image]\nparameters:\n  server: own\n  promptHint: Widgets of the test server\n",
    );
    await put(
      app,
      "tools/ev",
      "type: mcp_server\ndescription: The reference server's tools\nprimary: true\ndefaultDeferred: true\ndisabledSubTools: [get_env]\nparameters:\n  server: everything\n  promptHint: The MCP reference server\n",
    );
    await put(
      app,
      "tools/weather",
      "type: mcp\ndescription: Weather of a city\nparameters:\n  server: own\n  toolName: get-weather\n",
    );
    await put(
      app,
      "tools/ev_sum",
      "type: mcp\ndescription: Adds two numbers\nparameters:\n  server: everything\n  toolName: get-sum\n",
    );

    // The reference server's tools are read at test time, not hard-coded.
    const mcp = new SdkMcpClient({ fetch: createGuardedFetch(createNetworkPolicy(["127.0.0.1"])) });
    const at = { key: "packs-test", url: everythingUrl, headers: {}, timeoutMs: 5000 };
    everythingTools = (await mcp.listTools(at, new AbortController().signal)).tools.map((tool) => tool.name);
    mcp.close();
  });

  it("lists every server tool as a sub-tool with its pack, minus the disabled ones, and never the pack document", async () => {
    const tools = await listTools(app);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ["own__echo", "own__fail", "own__get_weather", "own__add_tool"]) {
      expect(byName.get(name)).toMatchObject({ pack: "own" });
    }
    expect(byName.has("own__tiny_image")).toBe(false);
    expect(byName.has("own")).toBe(false);
    expect(byName.has("ev")).toBe(false);
    const expected = everythingTools.filter((name) => name !== "get-env").map((name) => subTool("ev", name));
    expect(
      tools
        .filter((tool) => tool.pack === "ev")
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(expected.sort());
    expect(byName.has("ev__get_env")).toBe(false);
    expect(byName.get("weather")).toBeDefined();
    expect(byName.get("weather")?.pack).toBeUndefined();
  });

  it("does not offer a tool that requires task augmentation (server-everything's simulate-research-query), and the pack says why", async () => {
    // The server does offer it, marked as answering only as a task.
    const raw = (await fetchEverythingTools()).find((tool) => tool.name === "simulate-research-query");
    expect(raw?.execution?.taskSupport).toBe("required");
    expect(everythingTools).not.toContain("simulate-research-query");
    const tools = await listTools(app);
    expect(tools.some((tool) => tool.name === "ev__simulate_research_query")).toBe(false);
    expect(tools.filter((tool) => tool.pack === "ev").length).toBeGreaterThan(5);
    const listed = await request(app, "GET", "/tools");
    const pack = (listed.body.packs as { pack: string; status: string; leftOut: string[] }[]).find(
      (entry) => entry.pack === "ev",
    );
    expect(pack?.status).toBe("current");
    expect(pack?.leftOut).toContain(
      `MCP server 'everything': 'simulate-research-query' is not offered: it requires task augmentation (execution.taskSupport: "required"), which this service does not support`,
    );
    const called = await invoke(app, "ev__simulate_research_query", { topic: "x" });
    expect(called.status).toBe(404);
    // A single mcp tool naming it is not offered either, and the listing says why.
    await put(
      app,
      "tools/research",
      "type: mcp\ndescription: Researches\nparameters:\n  server: everything\n  toolName: simulate-research-query\n",
    );
    const after = await request(app, "GET", "/tools");
    expect((after.body.tools as Listed[]).some((tool) => tool.name === "research")).toBe(false);
    const invalid = (after.body.invalid as { path: string; errors: { message: string }[] }[]).find(
      (entry) => entry.path === "server-tools/research.yaml",
    );
    expect(invalid?.errors[0]?.message).toMatch(
      /'simulate-research-query' is not offered: it requires task augmentation/,
    );
    await request(app, "DELETE", "/tools/research");
  });

  it("shows the server's input schema on GET T/tools/{pack}__{op} and on a single mcp tool", async () => {
    const weather = await request(app, "GET", "/tools/own__get_weather");
    expect(weather.status).toBe(200);
    expect(weather.body).toMatchObject({
      name: "own__get_weather",
      pack: { name: "own", sourceName: "get-weather" },
      inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
    const single = await request(app, "GET", "/tools/weather");
    expect(single.body.inputSchema).toEqual(weather.body.inputSchema);
    const sum = await request(app, "GET", "/tools/ev__get_sum");
    expect(sum.body.inputSchema).toMatchObject({
      properties: { a: { type: "number" }, b: { type: "number" } },
    });
    expect((await request(app, "GET", "/tools/own__tiny_image")).status).toBe(404);
  });

  it("invokes sub-tools and mcp tools: text, structuredContent, isError, secrets scrubbed", async () => {
    expect((await invoke(app, "own__echo", { message: "hi" })).body).toMatchObject({ value: "hi" });
    expect((await invoke(app, "own__get_weather", { city: "Oslo" })).body).toMatchObject({
      value: { city: "Oslo", temperatureC: 21.5, conditions: "sunny" },
    });
    expect((await invoke(app, "weather", { city: "Rome" })).body).toMatchObject({ value: { city: "Rome" } });
    const failed = await invoke(app, "own__fail", { reason: "flux" });
    expect([failed.status, failed.body.error, failed.body.message]).toEqual([
      200,
      "McpToolError",
      "the widget failed: flux",
    ]);
    // The server saw the secret; the answer does not show it.
    const echoed = await invoke(app, "own__echo_header", { name: "x-api-key" });
    expect(echoed.body).toMatchObject({ value: "header x-api-key: ***" });
    expect(JSON.stringify(echoed.body)).not.toContain(OWN_KEY);

    expect((await invoke(app, "ev__echo", { message: "hi" })).body).toMatchObject({ value: "Echo: hi" });
    expect(JSON.stringify((await invoke(app, "ev_sum", { a: 2, b: 3 })).body.value)).toContain("5");
  });

  it("a sub-tool's call looks its server document up at most once: the pack's listing in the same request located it", async () => {
    await invoke(app, "own__echo", { message: "warm" });
    const lookup = vi.spyOn(DocumentCascade.prototype, "lookup");
    try {
      const serverLookups = () =>
        lookup.mock.calls.filter(([, , path]) => path.startsWith(MCP_SERVER_DOCUMENTS_DIR)).length;
      for (let call = 1; call <= 5; call++) {
        const before = serverLookups();
        expect((await invoke(app, "own__echo", { message: `call ${call}` })).body).toMatchObject({
          value: `call ${call}`,
        });
        expect(serverLookups() - before).toBeLessThanOrEqual(1);
      }
      expect(serverLookups()).toBeGreaterThan(0);
    } finally {
      lookup.mockRestore();
    }
  });

  it("a type: mcp tool's call looks its server document up once and resolves its secrets once: the listing that gave its schema located the server", async () => {
    await invoke(app, "weather", { city: "warm" });
    const lookup = vi.spyOn(DocumentCascade.prototype, "lookup");
    const lookupFor = SecretService.prototype.lookupFor;
    let secretReads = 0;
    const secrets = vi.spyOn(SecretService.prototype, "lookupFor").mockImplementation(function (
      this: SecretService,
      tenant,
      layer,
    ) {
      const read = lookupFor.call(this, tenant, layer);
      return async (name) => {
        if (name === "OWN_KEY") secretReads++;
        return read(name);
      };
    });
    try {
      const serverLookups = () =>
        lookup.mock.calls.filter(([, , path]) => path.startsWith(MCP_SERVER_DOCUMENTS_DIR)).length;
      for (let call = 1; call <= 3; call++) {
        const [lookupsBefore, secretsBefore] = [serverLookups(), secretReads];
        expect((await invoke(app, "weather", { city: `City ${call}` })).body).toMatchObject({
          value: { city: `City ${call}` },
        });
        expect([serverLookups() - lookupsBefore, secretReads - secretsBefore]).toEqual([1, 1]);
      }
    } finally {
      lookup.mockRestore();
      secrets.mockRestore();
    }
  });

  it("a type: mcp tool with its own inputSchema looks its server document up once per call", async () => {
    await put(
      app,
      "tools/weather_fixed",
      "type: mcp\ndescription: Weather of a city, schema fixed\nparameters:\n  server: own\n  toolName: get-weather\n  inputSchema:\n    type: object\n    properties:\n      city: { type: string }\n",
    );
    await invoke(app, "weather_fixed", { city: "warm" });
    const lookup = vi.spyOn(DocumentCascade.prototype, "lookup");
    try {
      const serverLookups = () =>
        lookup.mock.calls.filter(([, , path]) => path.startsWith(MCP_SERVER_DOCUMENTS_DIR)).length;
      for (let call = 1; call <= 3; call++) {
        const before = serverLookups();
        expect((await invoke(app, "weather_fixed", { city: `City ${call}` })).body).toMatchObject({
          value: { city: `City ${call}` },
        });
        expect(serverLookups() - before).toBe(1);
      }
    } finally {
      lookup.mockRestore();
    }
  });

  it("checks params against the server's schema (422 invalid_params) and refuses the pack document itself", async () => {
    const bad = await invoke(app, "own__echo", { message: 5 });
    expect([bad.status, bad.body.code]).toEqual([422, "invalid_params"]);
    expect((await invoke(app, "ev_sum", { a: "two" })).status).toBe(422);
    const pack = await invoke(app, "own", {});
    expect(pack.status).toBe(404);
  });

  // Both packs are primary; only ev's defaultDeferred keeps its sub-tools out of the tools array.
  it("a process: pack names in the recipe, defaultDeferred in the manifest, promptHint in discovery and tool_list, invoke_tool", async () => {
    const client = await projectClient(app);
    const spawned = await client.spawn({ allowedToolsAdd: ["ev", "@widgets", "weather", "invoke_tool"] });
    expect(spawned.allowedTools).toEqual(
      expect.arrayContaining(["own__echo", "ev__echo", "ev__get_sum", "weather"]),
    );
    expect(spawned.allowedTools).not.toContain("own__tiny_image");
    expect(spawned.allowedTools).not.toContain("own");

    const manifest = await client.manifest(spawned.processId);
    expect(manifest.deferred).toEqual(expect.arrayContaining(["ev__echo", "ev__get_sum"]));
    expect(manifest.deferred).not.toContain("own__echo");
    expect(manifest.tools.map((tool) => tool.function.name)).toContain("own__get_weather");
    expect(manifest.tools.map((tool) => tool.function.name)).not.toContain("ev__echo");
    expect(manifest.discoveryBlock).toContain("ev__*");
    expect(manifest.discoveryBlock).toContain("The MCP reference server");

    const listed = await client.invoke(spawned.processId, "tool_list");
    expect(listed.body.value).toMatchObject({
      packHints: { ev: "The MCP reference server", own: "Widgets of the test server" },
    });
    const viaMeta = await client.invoke(spawned.processId, "invoke_tool", {
      name: "ev__echo",
      params: { message: "via invoke_tool" },
    });
    expect(viaMeta.body).toMatchObject({ value: "Echo: via invoke_tool" });
    const direct = await client.invoke(spawned.processId, "own__get_weather", { city: "Lima" });
    expect(direct.body).toMatchObject({ value: { city: "Lima" } });
  });

  it("a scripted tool calls sub-tools and mcp tools through vance.tools.call", async () => {
    await put(
      app,
      "tools/script_mcp",
      `type: scripted\ndescription: Calls MCP tools\nparameters:\n  timeoutMs: 10000\n  inputs: []\n  source: ${JSON.stringify(
        'const a = vance.tools.call("own__echo", { message: "from a script" }); const b = vance.tools.call("ev_sum", { a: 1, b: 2 }); let c; try { vance.tools.call("own__fail", {}); } catch (e) { c = { error: e.name, message: e.message }; } ({ a, b: JSON.stringify(b), c })',
      )}\n`,
    );
    const res = await invoke(app, "script_mcp", {});
    expect(res.status).toBe(200);
    const value = res.body.value as { a: unknown; b: string; c: unknown };
    expect(value.a).toBe("from a script");
    expect(value.b).toContain("3");
    // A tool's failure is an exception in a script, named by its class.
    expect(value.c).toMatchObject({
      error: "McpToolError",
      message: expect.stringContaining("the widget failed"),
    });
  });
});

describe("MCP packs when the server goes away or is not allowed", () => {
  it("a stopped server: McpUnavailable on the refused connection (not its timeoutMs), and GET T/tools still answers", async () => {
    const server = await startMcpTestServer();
    const { app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
    try {
      await put(app, "documents/mcp-servers/local.yaml", `url: ${server.url}\ntimeoutMs: 1000\n`);
      await put(app, "tools/local", "type: mcp_server\ndescription: Local\nparameters:\n  server: local\n");
      await put(
        app,
        "tools/local_echo",
        "type: mcp\ndescription: Echo\nparameters:\n  server: local\n  toolName: echo\n",
      );
      expect((await listTools(app)).map((tool) => tool.name)).toContain("local__echo");
      expect((await invoke(app, "local__echo", { message: "up" })).body).toMatchObject({ value: "up" });
      await server.stop();

      for (const name of ["local__echo", "local_echo"]) {
        const down = await invoke(app, name, { message: "down" });
        expect([down.status, down.body.error]).toEqual([200, "McpUnavailable"]);
        // The refusal itself ended the call, not its deadline.
        expect(String(down.body.message)).toMatch(/could not connect.*ECONN(REFUSED|RESET)/);
        expect(String(down.body.message)).not.toContain("within");
      }

      const tools = await listTools(app);
      // The last known list, flagged: the failed calls dropped the connection, so it is read again and fails.
      expect(tools.find((tool) => tool.name === "local__echo")).toMatchObject({ pack: "local", stale: true });
    } finally {
      await server.stop();
    }
  });

  it("a server on a loopback address is refused unless allowlisted: BlockedAddress, and the listing answers", async () => {
    const { app } = await testApp();
    const url = inject("mcpTestServerUrl").replace("127.0.0.1", "localhost");
    await put(app, "documents/mcp-servers/sneaky.yaml", `url: ${url}\ntimeoutMs: 1000\n`);
    await put(app, "tools/sneaky", "type: mcp_server\ndescription: Sneaky\nparameters:\n  server: sneaky\n");
    await put(
      app,
      "tools/sneaky_echo",
      "type: mcp\ndescription: Echo\nparameters:\n  server: sneaky\n  toolName: echo\n",
    );
    const tools = await listTools(app);
    expect(tools.some((tool) => tool.pack === "sneaky")).toBe(false);
    const refused = await invoke(app, "sneaky_echo", { message: "x" });
    expect(refused.body).toMatchObject({
      error: "BlockedAddress",
      message: expect.stringContaining("loopback"),
    });
  });
});

describe("a pack is one family under the budget", () => {
  it("a 40-tool pack is demoted whole when a limit cuts, and the demoted block names it once", async () => {
    const { app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
    const paged = `${new URL(inject("mcpTestServerUrl")).origin}/paged?tools=40&page=15`;
    await put(app, "documents/mcp-servers/paged.yaml", mcpServerDoc(paged));
    await put(
      app,
      "tools/forty",
      "type: mcp_server\ndescription: Forty tools\nprimary: true\nparameters:\n  server: paged\n  promptHint: Forty numbered tools\n",
    );
    const packTools = (await listTools(app)).filter((tool) => tool.pack === "forty").map((tool) => tool.name);
    expect(packTools).toHaveLength(40);
    // 100 client tools of their own families and the pack: openai's 128 (127 after the reserve) must cut.
    const clientTools = Array.from({ length: 100 }, (_, index) => ({
      name: `c${index}_tool`,
      description: `Client tool ${index}.`,
      inputSchema: { type: "object" },
    }));
    const spawned = await request(app, "POST", "/processes", {
      allowedToolsAdd: ["forty"],
      clientTools,
      models: ["openai/gpt-4.1"],
    });
    expect(spawned.status).toBe(201);
    const manifest = await request(app, "GET", `/processes/${spawned.body.processId}/manifest`);
    const { primary, demoted, demotedDiscoveryBlock } = manifest.body as {
      primary: string[];
      demoted: string[];
      demotedDiscoveryBlock: string;
    };
    expect(primary.length).toBeLessThanOrEqual(127);
    expect(demoted.length).toBeGreaterThan(0);
    // Packs go before single tools (spec §14.2 class order), and a family moves as one.
    expect(packTools.filter((name) => primary.includes(name))).toEqual([]);
    expect(demoted).toEqual(expect.arrayContaining(packTools));
    expect(demotedDiscoveryBlock.match(/forty__\*/g)).toHaveLength(1);
    expect(demotedDiscoveryBlock).toContain("Forty numbered tools");
  });
});
