import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { StoreUnavailableError } from "@vance/core";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../functions/api/config";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

type App = Awaited<ReturnType<typeof testApp>>["app"];

const T = "/v1/tenants/acme/projects/shop";
const BASE = "http://127.0.0.1:8787";

const scripted = (description: string, source: string, inputs = "[]") =>
  `type: scripted\ndescription: ${description}\nprimary: true\nparameters:\n  engine: javascript\n  timeoutMs: 2000\n  inputs: ${inputs}\n  source: |\n    ${source}\n`;
const NUMBERS = "[{name: a, type: number}, {name: b, type: number}]";
const doc = (description: string) =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting_started.md\n`;

/** A project with primary scripted tools, two deferred documents and a failing tool. */
async function project(app: App) {
  const api = await projectClient(app);
  await api.putTool("add_numbers", scripted("Add two numbers.", "a + b", NUMBERS));
  await api.putTool(
    "sum_report",
    scripted("Report a sum as an object.", "({ sum: a + b, of: [a, b] })", NUMBERS),
  );
  await api.putTool("always_fails", scripted("Fails every time.", 'throw new Error("boom")'));
  await api.putTool("notes_a", doc("Note A, read on demand."));
  await api.putTool("notes_b", doc("Note B, read on demand."));
  await api.putTool("notes_secret", doc("Not for these processes."));
  return api;
}

const ALLOWED = ["add_numbers", "sum_report", "always_fails", "notes_a", "notes_b", "invoke_tool"];

/** Routes a fetch to one app, or in turn to several (instances behind one load balancer). */
function fetchVia(...apps: App[]) {
  const served: number[] = [];
  let next = 0;
  const fetch = async (url: string | URL, init?: RequestInit) => {
    const index = next++ % apps.length;
    served.push(index);
    return apps[index]!.fetch(new Request(url, init));
  };
  return { fetch, served };
}

/** The SDK's client over Streamable HTTP, against the app (no socket). */
async function connect(
  app: App | App[],
  path: string,
  headers: Record<string, string> | undefined,
  onListChanged?: () => void,
) {
  const route = fetchVia(...(Array.isArray(app) ? app : [app]));
  const client = new Client({ name: "mcp-served-test", version: "1.0.0" });
  if (onListChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, onListChanged);
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}${path}`), {
    fetch: route.fetch,
    ...(headers ? { requestInit: { headers } } : {}),
  });
  await client.connect(transport);
  return { client, transport, served: route.served };
}

/** One raw MCP POST (what a client sends), for the status codes the SDK client hides. */
function post(app: App, path: string, body: unknown, headers: Record<string, string> = {}) {
  return app.fetch(
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(body),
    }),
  );
}

const initialize = (protocolVersion = LATEST_PROTOCOL_VERSION) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

async function spawned(models: string[] = []) {
  const { app, dataDir } = await testApp();
  const api = await project(app);
  const { processId } = await api.spawn({ engineDefault: ALLOWED, models });
  const reader = await bearer({ tenant: "acme", roles: ["read"] });
  return { app, api, processId, reader, dataDir, path: `${T}/processes/${processId}/mcp` };
}

async function callError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe("T/processes/{id}/mcp: the process's tool surface over MCP", () => {
  it("initialize names the server, offers tools with listChanged, and instructs with the discovery block", async () => {
    const { app, api, processId, reader, path } = await spawned();
    const { client } = await connect(app, path, reader);
    expect(client.getServerVersion()).toEqual({ name: "vance-server-tools", version: "0.1.0" });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    const manifest = await api.manifest(processId);
    expect(manifest.discoveryBlock).toContain("notes_a");
    expect(manifest.demotedDiscoveryBlock).toBe("");
    expect(client.getInstructions()).toBe(manifest.discoveryBlock);
    await client.close();
  });

  it("the demoted block follows the static one when the budget demotes tools", async () => {
    const { app, dataDir } = await testApp();
    const api = await project(app);
    const { writeFileSync, mkdirSync } = await import("node:fs");
    mkdirSync(`${dataDir}/catalog/model/tiny`, { recursive: true });
    writeFileSync(`${dataDir}/catalog/model/tiny/_provider.yaml`, "maxTools: 4\nwireType: openai\n");
    const { processId } = await api.spawn({ engineDefault: ALLOWED, models: ["tiny/m"] });
    const manifest = await api.manifest(processId);
    expect(manifest.demoted.length).toBeGreaterThan(0);
    const { client } = await connect(
      app,
      `${T}/processes/${processId}/mcp`,
      await bearer({ tenant: "acme", roles: ["read"] }),
    );
    expect(client.getInstructions()).toBe(`${manifest.discoveryBlock}\n\n${manifest.demotedDiscoveryBlock}`);
    // The manifest's 3 (4 less the reserve), and invoke_tool in the reserve's slot: 4, the limit.
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
      [...manifest.tools.map((tool) => tool.function.name), "invoke_tool"].sort(),
    );
    await client.close();
  });

  it("accepts protocol revisions 2025-06-18 and 2025-11-25", async () => {
    const { app, reader, path } = await spawned();
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const res = await post(app, path, initialize(version), reader);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(res.headers.get("mcp-session-id")).toBeNull();
      const body = (await res.json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).toBe(version);
      const listed = await post(
        app,
        path,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          ...reader,
          "mcp-protocol-version": version,
        },
      );
      expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(
        0,
      );
    }
  });

  it("tools/list is the manifest's tools: same names, descriptions and input schemas, in order", async () => {
    const { app, api, processId, reader, path } = await spawned(["openai/gpt-4.1"]);
    const { client } = await connect(app, path, reader);
    const { tools } = await client.listTools();
    const manifest = await api.manifest(processId, { format: "anthropic" });
    expect(
      tools.map(({ name, description, inputSchema }) => ({ name, description, input_schema: inputSchema })),
    ).toEqual(manifest.tools);
    // The three meta-tools are primary (spec §13): invoke_tool too, when allowed.
    expect(tools.map((tool) => tool.name)).toEqual([
      "add_numbers",
      "always_fails",
      "invoke_tool",
      "sum_report",
      "tool_description",
      "tool_list",
    ]);
    await client.close();
  });

  it("tools/call runs a scripted tool: text content, plus structuredContent for an object", async () => {
    const { app, reader, path } = await spawned();
    const { client } = await connect(app, path, reader);
    expect(await client.callTool({ name: "add_numbers", arguments: { a: 2, b: 3 } })).toEqual({
      content: [{ type: "text", text: "5" }],
    });
    expect(await client.callTool({ name: "sum_report", arguments: { a: 2, b: 3 } })).toEqual({
      content: [{ type: "text", text: '{"sum":5,"of":[2,3]}' }],
      structuredContent: { sum: 5, of: [2, 3] },
    });
    await client.close();
  });

  it("a deferred tool activated through tool_description is announced, then listed and callable", async () => {
    const { app, reader, path } = await spawned();
    let announced = 0;
    const { client } = await connect(app, path, reader, () => announced++);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("notes_a");
    const described = await client.callTool({ name: "tool_description", arguments: { names: ["notes_a"] } });
    expect(described.isError).toBeUndefined();
    expect(described.structuredContent).toMatchObject({ tools: [{ name: "notes_a" }] });
    expect(announced).toBe(1);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === "notes_a");
    expect(listed).toMatchObject({ name: "notes_a", description: "Note A, read on demand." });
    const read = await client.callTool({ name: "notes_a", arguments: {} });
    expect(read.isError).toBeUndefined();
    expect(JSON.stringify(read.content)).toContain("Getting started");
    await client.close();
  });

  it("invoke_tool calls a tool inside the process and activates a deferred one", async () => {
    const { app, reader, path } = await spawned();
    let announced = 0;
    const { client } = await connect(app, path, reader, () => announced++);
    const sum = await client.callTool({
      name: "invoke_tool",
      arguments: { name: "add_numbers", params: { a: 1, b: 2 } },
    });
    expect(sum.content).toEqual([{ type: "text", text: "3" }]);
    const note = await client.callTool({ name: "invoke_tool", arguments: { name: "notes_b", params: {} } });
    expect(JSON.stringify(note.content)).toContain("Getting started");
    expect(announced).toBe(2);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("notes_b");
    const refused = await client.callTool({
      name: "invoke_tool",
      arguments: { name: "notes_secret", params: {} },
    });
    expect(refused.isError).toBe(true);
    await client.close();
  });

  it("a served surface offers invoke_tool though the process does not allow it: it reaches a deferred tool the first list lacked, never a tool outside the allow set; tool_description says to use it", async () => {
    const { app } = await testApp();
    const api = await project(app);
    const allowed = ALLOWED.filter((name) => name !== "invoke_tool");
    const { processId } = await api.spawn({ engineDefault: allowed });
    expect((await api.manifest(processId)).primary).not.toContain("invoke_tool");
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const { client } = await connect(app, `${T}/processes/${processId}/mcp`, reader);
    const first = (await client.listTools()).tools.map((tool) => tool.name);
    expect(first).toContain("invoke_tool");
    expect(first).not.toContain("notes_b");
    const described = await client.callTool({ name: "tool_description", arguments: { names: ["notes_b"] } });
    expect(described.structuredContent).toMatchObject({
      activated: ["notes_b"],
      howToCall: expect.stringContaining('call invoke_tool with {"name": "<tool name>"'),
    });
    const note = await client.callTool({ name: "invoke_tool", arguments: { name: "notes_b", params: {} } });
    expect(JSON.stringify(note.content)).toContain("Getting started");
    const refused = await client.callTool({
      name: "invoke_tool",
      arguments: { name: "notes_secret", params: {} },
    });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: "ToolNotAllowed" });
    // Outside the served surface the process's own allow set holds: no invoke_tool.
    const direct = await api.invoke(processId, "invoke_tool", { name: "notes_b", params: {} });
    expect(direct.status).toBe(403);
    await client.close();
  });

  it("a tool's failure and arguments that fail the schema are results with isError; unknown and disallowed names are JSON-RPC errors", async () => {
    const { app, reader, path } = await spawned();
    const { client } = await connect(app, path, reader);
    const failed = await client.callTool({ name: "always_fails", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(JSON.stringify(failed.content)).toContain("boom");
    const bad = await client.callTool({ name: "add_numbers", arguments: { a: "two", b: 3 } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ error: "invalid_params" });
    for (const name of ["no_such_tool", "notes_secret"]) {
      const error = await callError(client.callTool({ name, arguments: {} }));
      expect(error.code, name).toBe(ErrorCode.InvalidParams);
    }
    await client.close();
  });

  it("a plain tools/call (answered without the SDK's server) answers exactly as the SDK does for the same call in a batch", async () => {
    const { app, reader, path } = await spawned();
    const headers = { ...reader, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
    const calls: [string, unknown][] = [
      ["add_numbers", { a: 2, b: 3 }],
      ["sum_report", { a: 2, b: 3 }],
      ["always_fails", {}],
      ["add_numbers", { a: "two", b: 3 }],
      ["no_such_tool", {}],
      ["notes_secret", {}],
    ];
    const throughSdk = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
    let id = 10;
    for (const [name, args] of calls) {
      const message = { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } };
      const before = throughSdk.mock.calls.length;
      const plain = await post(app, path, message, headers);
      expect(throughSdk.mock.calls.length, name).toBe(before);
      const batched = await post(app, path, [message], headers);
      expect(throughSdk.mock.calls.length, name).toBe(before + 1);
      expect(plain.status, name).toBe(200);
      expect(plain.headers.get("content-type"), name).toMatch(/^application\/json/);
      // The SDK answers a batch of one request with its one response, not a list.
      expect(await plain.json(), name).toEqual(await batched.json());
    }
    // What the SDK's transport refuses still reaches it: an unsupported protocol revision.
    const refused = await post(
      app,
      path,
      {
        jsonrpc: "2.0",
        id: 99,
        method: "tools/call",
        params: { name: "add_numbers", arguments: { a: 1, b: 2 } },
      },
      { ...reader, "mcp-protocol-version": "1999-01-01" },
    );
    expect(refused.status).toBe(400);
    throughSdk.mockRestore();
  });

  it("counts usage once per call, a wrapper call once, as POST …/invoke does", async () => {
    const { app, api, reader, path } = await spawned();
    const { client } = await connect(app, path, reader);
    await client.callTool({ name: "add_numbers", arguments: { a: 1, b: 1 } });
    await client.callTool({
      name: "invoke_tool",
      arguments: { name: "add_numbers", params: { a: 1, b: 1 } },
    });
    await client.callTool({ name: "tool_description", arguments: { names: ["notes_a"] } });
    await client.close();
    const insights = await api.call("GET", "/insights/tool-usage");
    expect(insights.body).toEqual({
      roles: [
        {
          role: "default",
          tools: [
            { name: "add_numbers", calls: 2, discoveryHits: 0, lastUsedAt: expect.any(String) },
            { name: "notes_a", calls: 0, discoveryHits: 1, lastUsedAt: expect.any(String) },
          ],
        },
      ],
    });
  });

  it("two instances over the same stores answer alternate requests of one client", async () => {
    const { app, reader, path, dataDir } = await spawned();
    const { app: other } = await testApp({ dataDir });
    let announced = 0;
    const { client, served } = await connect([app, other], path, reader, () => announced++);
    await client.callTool({ name: "tool_description", arguments: { names: ["notes_b"] } });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("notes_b");
    expect((await client.callTool({ name: "add_numbers", arguments: { a: 4, b: 5 } })).content).toEqual([
      { type: "text", text: "9" },
    ]);
    expect(JSON.stringify((await client.callTool({ name: "notes_b", arguments: {} })).content)).toContain(
      "Getting started",
    );
    expect(announced).toBe(1);
    expect(new Set(served)).toEqual(new Set([0, 1]));
    await client.close();
  });

  it("a failure of the request, not of a tool, is its HTTP answer: 503 when the state store is down", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-mcp-outage-"));
    const store = new SqliteStateStore(join(dataDir, "state.sqlite"));
    let down = false;
    const state = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (down) throw new StoreUnavailableError("state store", "stopped by the test");
          return value.apply(target, args);
        };
      },
    });
    const { app } = await testApp({ dataDir, state });
    const api = await project(app);
    const { processId } = await api.spawn({ engineDefault: ALLOWED });
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const path = `${T}/processes/${processId}/mcp`;
    expect((await post(app, path, initialize(), reader)).status).toBe(200);
    down = true;
    const listed = await post(app, path, { jsonrpc: "2.0", id: 2, method: "tools/list" }, reader);
    expect(listed.status).toBe(503);
    expect(listed.headers.get("retry-after")).toBe("1");
    expect(await listed.json()).toMatchObject({ code: "store_unavailable" });
    const call = { name: "tool_description", arguments: { names: ["notes_a"] } };
    const described = await post(
      app,
      path,
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: call },
      reader,
    );
    expect(described.status).toBe(503);
    down = false;
    expect((await post(app, path, { jsonrpc: "2.0", id: 4, method: "tools/list" }, reader)).status).toBe(200);
  });

  it("keeps no standalone stream: GET answers 405 with Allow", async () => {
    const { app, reader, path } = await spawned();
    const res = await app.fetch(
      new Request(`${BASE}${path}`, { headers: { ...reader, accept: "text/event-stream" } }),
    );
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("an unknown process answers 404 at initialize", async () => {
    const { app, reader } = await spawned();
    const res = await post(
      app,
      `${T}/processes/00000000-0000-0000-0000-000000000000/mcp`,
      initialize(),
      reader,
    );
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "process_not_found" });
  });
});

describe("MCP endpoints: tokens, origins and hosts", () => {
  it("VANCE_MCP_ALLOWED_ORIGINS takes origins only, and normalises them", () => {
    expect(
      loadConfig({ VANCE_MCP_ALLOWED_ORIGINS: " http://localhost:6274/ , HTTPS://App.Example " })
        .VANCE_MCP_ALLOWED_ORIGINS,
    ).toEqual(["http://localhost:6274", "https://app.example"]);
    expect(loadConfig({}).VANCE_MCP_ALLOWED_ORIGINS).toEqual([]);
    for (const bad of ["*", "localhost:6274", "https://app.example/path", "file:///tmp"]) {
      expect(() => loadConfig({ VANCE_MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(/VANCE_MCP_ALLOWED_ORIGINS/);
    }
  });

  it("401 with WWW-Authenticate naming the endpoint's resource metadata without a token; 403 for another tenant's token", async () => {
    const { app, path } = await spawned();
    const anonymous = await post(app, path, initialize());
    expect(anonymous.status).toBe(401);
    // The service's public URL (testApp's is http://localhost), never the request's host.
    expect(anonymous.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="http://localhost/.well-known/oauth-protected-resource${path}"`,
    );
    expect(await anonymous.json()).toMatchObject({ code: "unauthenticated" });
    await expect(connect(app, path, undefined)).rejects.toThrow(/401/);

    const foreign = await post(app, path, initialize(), await bearer({ tenant: "other", roles: ["read"] }));
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ code: "forbidden" });
    const writeOnly = await post(app, path, initialize(), await bearer({ tenant: "acme", roles: ["write"] }));
    expect(writeOnly.status).toBe(403);
  });

  it("refuses a foreign Origin; accepts none, the server's own and a listed one (with CORS)", async () => {
    const { app, dataDir, reader, path } = await spawned();
    const refused = await post(app, path, initialize(), { ...reader, origin: "https://evil.example" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "origin_not_allowed" });
    expect((await post(app, path, initialize(), { ...reader, origin: "null" })).status).toBe(403);
    expect((await post(app, path, initialize(), { ...reader, origin: BASE })).status).toBe(200);

    const { app: listing } = await testApp({
      dataDir,
      env: { VANCE_MCP_ALLOWED_ORIGINS: "http://localhost:6274/, https://app.example" },
    });
    const listed = await post(listing, path, initialize(), { ...reader, origin: "http://localhost:6274" });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("access-control-allow-origin")).toBe("http://localhost:6274");
    expect(listed.headers.get("access-control-expose-headers")).toContain("mcp-session-id");
    const preflight = await listing.fetch(
      new Request(`${BASE}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type, mcp-protocol-version",
        },
      }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("mcp-protocol-version");
    expect(
      (await post(listing, path, initialize(), { ...reader, origin: "https://evil.example" })).status,
    ).toBe(403);
  });

  it("on a loopback-bound server the Host must be loopback (any port); bound elsewhere, any Host passes", async () => {
    const { app, dataDir, reader, path } = await spawned();
    for (const host of [
      "evil.example",
      "evil.example:8787",
      "127.0.0.1.evil.example",
      "localhost@evil.example",
    ]) {
      const res = await post(app, path, initialize(), { ...reader, host });
      expect(res.status, host).toBe(403);
      expect(await res.json()).toMatchObject({ code: "host_not_allowed" });
    }
    for (const host of ["localhost", "localhost:3000", "127.0.0.1:8787", "[::1]:9"]) {
      expect((await post(app, path, initialize(), { ...reader, host })).status, host).toBe(200);
    }
    const { app: exposed } = await testApp({ dataDir, env: { HOST: "0.0.0.0" } });
    expect((await post(exposed, path, initialize(), { ...reader, host: "tools.example" })).status).toBe(200);
    // Bound elsewhere, a rebound name is its own origin too: only listed origins pass.
    const rebound = { ...reader, host: "evil.example", origin: "http://evil.example" };
    expect((await post(exposed, path, initialize(), rebound)).status).toBe(403);
  });
});

describe("T/mcp: a process spawned at initialize, addressed by Mcp-Session-Id", () => {
  it("initialize spawns from the query; the session id is the process; DELETE ends the session", async () => {
    const { app } = await testApp();
    const api = await project(app);
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const query =
      "recipe=writer&add=add_numbers,notes_a,notes_b,invoke_tool&defer=notes_*&models=openai/gpt-4.1";
    const { client, transport } = await connect(app, `${T}/mcp?${query}`, reader);
    const processId = transport.sessionId!;
    expect(processId).toMatch(/^[0-9a-f-]{36}$/);
    const record = await api.process(processId);
    expect(record).toMatchObject({
      recipe: "writer",
      role: "writer",
      models: ["openai/gpt-4.1"],
      allowedTools: ["add_numbers", "invoke_tool", "notes_a", "notes_b"],
      allowedToolsDefer: ["notes_*"],
    });
    const manifest = await api.manifest(processId);
    expect(manifest.discoveryBlock).toContain("notes_b");
    expect(client.getInstructions()).toBe(manifest.discoveryBlock);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
      manifest.tools.map((tool) => tool.function.name),
    );
    expect((await client.callTool({ name: "add_numbers", arguments: { a: 20, b: 22 } })).content).toEqual([
      { type: "text", text: "42" },
    ]);

    await transport.terminateSession();
    const after = await post(
      app,
      `${T}/mcp`,
      { jsonrpc: "2.0", id: 9, method: "ping" },
      {
        ...reader,
        "mcp-session-id": processId,
      },
    );
    expect(after.status).toBe(404);
    expect(await after.json()).toMatchObject({ code: "session_not_found" });
    // The process itself stays, for its engine's own API calls.
    expect((await api.process(processId)).processId).toBe(processId);
    await client.close();
  });

  it("docs/mcp.md's URL (?add=doc_getting_started,@docs&models=openai/gpt-4.1): the named tool listed, the label's others discoverable", async () => {
    const { app } = await testApp();
    const reader = await bearer({ tenant: "demo", roles: ["read"] });
    const path = "/v1/tenants/demo/projects/hello/mcp?add=doc_getting_started,@docs&models=openai/gpt-4.1";
    let announced = 0;
    const { client } = await connect(app, path, reader, () => announced++);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      "doc_getting_started",
      "invoke_tool",
      "tool_description",
      "tool_list",
    ]);
    expect(client.getInstructions()).toContain("doc_tools_overview");
    expect((await client.callTool({ name: "doc_getting_started", arguments: {} })).isError).toBeUndefined();
    await client.callTool({ name: "tool_description", arguments: { names: ["doc_tools_overview"] } });
    expect(announced).toBe(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("doc_tools_overview");
    await client.close();
  });

  it("docs/mcp.md: without models= a session has no budget and lists every primary tool; with models=openai/gpt-4.1 at most 127", async () => {
    const { app } = await testApp();
    const api = await projectClient(app);
    const names = Array.from({ length: 140 }, (_, i) => `bulk_${String(i).padStart(3, "0")}`);
    for (const name of names) {
      await api.putTool(name, `${doc(`Bulk note ${name}.`)}primary: true\nlabels: [bulk]\n`);
    }
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const unbudgeted = await connect(app, `${T}/mcp?add=@bulk`, reader);
    const listed = (await unbudgeted.client.listTools()).tools.map((tool) => tool.name);
    expect(listed).toEqual(expect.arrayContaining(names));
    expect(listed.length).toBeGreaterThan(128);
    await unbudgeted.client.close();
    const budgeted = await connect(app, `${T}/mcp?add=@bulk&models=openai/gpt-4.1`, reader);
    const cut = (await budgeted.client.listTools()).tools.map((tool) => tool.name);
    expect(cut.length).toBeLessThanOrEqual(127);
    expect(cut).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
    expect(budgeted.client.getInstructions()).toContain("bulk_");
    await budgeted.client.close();
  });

  it("400 without a session id after initialize; 404 for an unknown one; 422 for a query that describes no process", async () => {
    const { app } = await testApp();
    await project(app);
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
    const missing = await post(app, `${T}/mcp`, ping, reader);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: "session_required" });
    for (const id of ["00000000-0000-0000-0000-000000000000", "../x"]) {
      const unknown = await post(app, `${T}/mcp`, ping, { ...reader, "mcp-session-id": id });
      expect(unknown.status, id).toBe(404);
    }
    const bad = await post(
      app,
      `${T}/mcp?models=not%20a%20model&add=Bad%20Name&colour=red`,
      initialize(),
      reader,
    );
    expect(bad.status).toBe(422);
    const { errors } = (await bad.json()) as { errors: { path: string }[] };
    expect(errors.map((error) => error.path.split(".")[0]).sort()).toEqual(["add", "colour", "models"]);
    const get = await app.fetch(new Request(`${BASE}${T}/mcp`, { headers: reader }));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, DELETE");
  });

  it("a session from another project or tenant is not found, and another tenant's token is refused", async () => {
    const { app } = await testApp();
    await project(app);
    const reader = await bearer({ tenant: "acme", roles: ["read"] });
    const { transport, client } = await connect(app, `${T}/mcp?add=add_numbers`, reader);
    const ping = { jsonrpc: "2.0", id: 3, method: "ping" };
    const elsewhere = await post(app, "/v1/tenants/acme/projects/other/mcp", ping, {
      ...reader,
      "mcp-session-id": transport.sessionId!,
    });
    expect(elsewhere.status).toBe(404);
    const foreign = await post(app, `${T}/mcp`, ping, {
      ...(await bearer({ tenant: "other", roles: ["read"] })),
      "mcp-session-id": transport.sessionId!,
    });
    expect(foreign.status).toBe(403);
    await client.close();
  });
});
