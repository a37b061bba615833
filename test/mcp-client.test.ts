import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
import { gzipSync } from "node:zlib";
import { createGuardedFetch, createGuardedHttp } from "@vance/adapters";
import { SdkMcpClient } from "@vance/adapters/mcp";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  createNetworkPolicy,
  MCP_ERROR_RESPONSE_NAME,
  MCP_TIMEOUT_ERROR_NAME,
  type McpServerTarget,
  mcpOutcome,
} from "@vance/core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type RpcMessage, sseEvent, startHostileMcp } from "./hostile/support";
import { MCP_TEST_TOOLS, startMcpTestServer } from "./support/mcp-test-server";

const allowLoopback = createNetworkPolicy(["127.0.0.1"]);
const strict = createNetworkPolicy([]);
const SECRET = "Sup3r-s3cret-t0ken-value";

let keys = 0;
/** A target of its own key, so that each test starts on a fresh connection. */
function target(url: string, overrides: Partial<McpServerTarget> = {}): McpServerTarget {
  return { key: `test-${++keys}`, url, headers: {}, timeoutMs: 5000, ...overrides };
}

const clients: SdkMcpClient[] = [];
function client(options: { policy?: ReturnType<typeof createNetworkPolicy>; maxConnections?: number } = {}) {
  const guarded = createGuardedHttp(options.policy ?? allowLoopback);
  const made = new SdkMcpClient({
    fetch: guarded.fetch,
    exchange: guarded.exchange,
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
  });
  clients.push(made);
  return made;
}

const never = () => new AbortController().signal;

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<{ error: Error }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return { error };
}

/** Waits for a state; the bound only ends a wait that never comes (a loaded machine is slow, not wrong). */
async function until(condition: () => boolean, ms = 50_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterEach(() => {
  for (const made of clients.splice(0)) made.close();
});

describe("SdkMcpClient against the SDK-built test server", () => {
  const url = inject("mcpTestServerUrl");

  it("lists the server's tools with their input schemas", async () => {
    const list = await client().listTools(target(url), never());
    expect(list.tools.map((tool) => tool.name).sort()).toEqual(MCP_TEST_TOOLS);
    const weather = list.tools.find((tool) => tool.name === "get-weather");
    expect(weather?.description).toContain("weather");
    expect(weather?.inputSchema).toMatchObject({ type: "object", properties: { city: { type: "string" } } });
    expect(list.current()).toBe(true);
  });

  it("calls tools: text, isError, structuredContent and an image block", async () => {
    const mcp = client();
    const at = target(url);
    expect(await mcp.callTool(at, "echo", { message: "hello" }, never())).toEqual({
      content: [{ type: "text", text: "hello" }],
    });
    const failed = await mcp.callTool(at, "fail", { reason: "flux" }, never());
    expect(failed.isError).toBe(true);
    expect(mcpOutcome(failed)).toEqual({ error: "McpToolError", message: "the widget failed: flux" });
    const weather = await mcp.callTool(at, "get-weather", { city: "Oslo" }, never());
    expect(mcpOutcome(weather)).toEqual({ value: { city: "Oslo", temperatureC: 21.5, conditions: "sunny" } });
    const image = await mcp.callTool(at, "tiny_image", {}, never());
    expect(image.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(mcpOutcome(image)).toEqual({ value: "a tiny image\n[image: image/png, 68 B]" });
  });

  it("reuses one session per target key", async () => {
    const server = await startMcpTestServer();
    try {
      const mcp = client();
      const at = target(server.url);
      await mcp.listTools(at, never());
      for (let i = 0; i < 5; i++) await mcp.callTool(at, "echo", { message: String(i) }, never());
      expect(server.stats().initialized).toBe(1);
      // Another key is another connection.
      await mcp.callTool({ ...at, key: `${at.key}-other` }, "echo", { message: "x" }, never());
      expect(server.stats().initialized).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it("rejects a JSON-RPC error answer with McpErrorResponse, and keeps the connection", async () => {
    const mcp = client();
    const at = target(`${new URL(url).origin}/paged`);
    const { error } = await rejection(mcp.callTool(at, "refuse", {}, never()));
    expect(error.name).toBe(MCP_ERROR_RESPONSE_NAME);
    expect(error.message).toContain("refused: no such widget");
    expect(await mcp.callTool(at, "tool_1", { n: 1 }, never())).toMatchObject({
      content: [{ text: 'tool_1 ran with {"n":1}' }],
    });
  });

  it("answers an unknown tool or bad arguments as the server does (McpServer: isError)", async () => {
    const mcp = client();
    const unknown = await mcp.callTool(target(url), "no_such_tool", {}, never());
    expect(mcpOutcome(unknown)).toEqual({
      error: "McpToolError",
      message: expect.stringContaining("no_such_tool not found"),
    });
  });

  it("turns current() false when the server sends tools/list_changed, and the next list has the new tool", async () => {
    const mcp = client();
    const at = target(url);
    const before = await mcp.listTools(at, never());
    expect(before.current()).toBe(true);
    await mcp.callTool(at, "add_tool", { name: "added_later" }, never());
    await until(() => !before.current());
    const after = await mcp.listTools(at, never());
    expect(after.tools.map((tool) => tool.name)).toContain("added_later");
    expect(after.current()).toBe(true);
  });

  it("re-initialises after the server forgot the session (404) and answers the same call", async () => {
    const server = await startMcpTestServer();
    try {
      const mcp = client();
      const at = target(server.url);
      const list = await mcp.listTools(at, never());
      await server.forgetSessions();
      expect(await mcp.callTool(at, "echo", { message: "again" }, never())).toMatchObject({
        content: [{ text: "again" }],
      });
      expect(server.stats().initialized).toBe(2);
      // The old session's notifications are lost: its list is no longer trusted.
      expect(list.current()).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it("rejects on the refused connection once the server is stopped, and again, without waiting out timeoutMs", async () => {
    const server = await startMcpTestServer();
    const mcp = client();
    // A deadline no test waits out: an answer that waited for it would fail the test by its time limit.
    const at = target(server.url, { timeoutMs: 600_000 });
    await mcp.listTools(at, never());
    await server.stop();
    for (let i = 0; i < 2; i++) {
      const { error } = await rejection(mcp.callTool(at, "echo", { message: "x" }, never()));
      expect(error.message).toMatch(/could not connect to the MCP server at 127\.0\.0\.1:\d+/);
      // The refusal itself, not the deadline.
      expect(error.message).toMatch(/ECONN(REFUSED|RESET)/);
      expect(error.message).not.toContain("no answer within");
    }
  });

  it("bounds a tools/call by timeoutMs (TimeoutError) and by the caller's signal (AbortError); the server sees each cancel", async () => {
    const server = await startMcpTestServer();
    try {
      const mcp = client();
      const at = target(server.url, { timeoutMs: 400 });
      await mcp.listTools(at, never());
      // The slow tool would answer after 10 minutes: only a cancel ends it sooner.
      const timedOut = await rejection(mcp.callTool(at, "slow", { ms: 600_000 }, never()));
      expect(timedOut.error.name).toBe(MCP_TIMEOUT_ERROR_NAME);
      expect(timedOut.error.message).toContain("within 400 ms");
      await until(() => server.stats().cancelled === 1);

      const caller = new AbortController();
      const cancelled = rejection(
        mcp.callTool({ ...at, timeoutMs: 600_000 }, "slow", { ms: 600_000 }, caller.signal),
      );
      // Once the server runs the call, the caller goes away.
      await until(() => server.stats().running === 1);
      caller.abort(new Error("the caller's deadline passed"));
      expect((await cancelled).error.name).toBe("AbortError");
      await until(() => server.stats().cancelled === 2);
      // The connection stays usable.
      expect(await mcp.callTool(at, "echo", { message: "ok" }, never())).toMatchObject({
        content: [{ text: "ok" }],
      });
      expect(server.stats()).toMatchObject({ initialized: 1, running: 0 });
    } finally {
      await server.stop();
    }
  });

  it("sends the target's headers, and never quotes their values in errors", async () => {
    const mcp = client();
    const at = target(url, { headers: { "x-api-key": SECRET } });
    const echoed = await mcp.callTool(at, "echo_header", { name: "x-api-key" }, never());
    expect(echoed.content).toEqual([{ type: "text", text: `header x-api-key: ${SECRET}` }]);

    const echoing = await listen((req, res) => {
      res
        .writeHead(401, { "content-type": "text/plain" })
        .end(`rejected ${String(req.headers.authorization)}`);
    });
    try {
      const { error } = await rejection(
        mcp.listTools(target(echoing.url, { headers: { authorization: `Bearer ${SECRET}` } }), never()),
      );
      expect(error.message).toContain("401");
      expect(error.message).not.toContain(SECRET);
    } finally {
      await echoing.close();
    }
  });

  it("follows tools/list pages, stops at 1,000 tools and at a repeated cursor", async () => {
    const origin = new URL(url).origin;
    const mcp = client();
    const paged = await mcp.listTools(target(`${origin}/paged?tools=25&page=10`), never());
    expect(paged.tools.map((tool) => tool.name)).toEqual(Array.from({ length: 25 }, (_, i) => `tool_${i}`));
    const capped = await mcp.listTools(target(`${origin}/paged?tools=1500&page=400`), never());
    expect(capped.tools).toHaveLength(1000);
    const looping = await mcp.listTools(target(`${origin}/paged?tools=15&page=10&loop=1`), never());
    expect(looping.tools.length).toBeGreaterThanOrEqual(15);
  });

  it("closes the least recently used connection beyond maxConnections, ending its session", async () => {
    const server = await startMcpTestServer();
    try {
      const mcp = client({ maxConnections: 2 });
      const lists = [];
      for (const key of ["a", "b", "c"])
        lists.push(await mcp.listTools({ ...target(server.url), key }, never()));
      expect(server.stats().initialized).toBe(3);
      await until(() => server.stats().sessions === 2);
      // Evicted, not failed: its list stays current until the sources' TTL.
      expect(lists[0]?.current()).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it("opens a new session when the target's headers change under the same key (a rotated secret)", async () => {
    const server = await startMcpTestServer();
    try {
      const mcp = client();
      const at = target(server.url, { headers: { "x-api-key": "old-key-value" } });
      await mcp.callTool(at, "echo", { message: "1" }, never());
      const rotated = await mcp.callTool(
        { ...at, headers: { "x-api-key": "new-key-value" } },
        "echo_header",
        { name: "x-api-key" },
        never(),
      );
      expect(rotated.content).toEqual([{ type: "text", text: "header x-api-key: new-key-value" }]);
      expect(server.stats().initialized).toBe(2);
    } finally {
      await server.stop();
    }
  });
});

describe("SdkMcpClient's tools/call on the session, answered in every form the transport allows", () => {
  const rpc = (message: RpcMessage, result: unknown) => ({ jsonrpc: "2.0", id: message.id, result });

  it("reads an event stream: answers the server's ping and refuses its sampling request, counts list_changed, skips priming events", async () => {
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list")
        return { json: rpc(message, { tools: [{ name: "echo", inputSchema: { type: "object" } }] }) };
      if (message.method !== "tools/call") return message.id === undefined ? null : undefined;
      return {
        sse: [
          "id: prime\ndata: \n\n",
          sseEvent({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }),
          sseEvent({ jsonrpc: "2.0", id: "ping-1", method: "ping" }),
          sseEvent({ jsonrpc: "2.0", id: "ask-1", method: "sampling/createMessage", params: {} }),
          sseEvent({
            jsonrpc: "2.0",
            id: "not-mine",
            result: { content: [{ type: "text", text: "someone else's" }] },
          }),
          sseEvent(rpc(message, { content: [{ type: "text", text: "streamed" }] })),
        ].join(""),
      };
    });
    try {
      const made = client();
      const at = target(`${server.url}/mcp`);
      const list = await made.listTools(at, never());
      expect(list.current()).toBe(true);
      const result = await made.callTool(at, "echo", { message: "hi" }, never());
      expect(mcpOutcome(result)).toEqual({ value: "streamed" });
      expect(list.current()).toBe(false);
      await until(() => server.messages.some((message) => message.id === "ask-1"));
      await until(() => server.messages.some((message) => message.id === "ping-1"));
      expect(server.messages.find((message) => message.id === "ping-1")).toMatchObject({ result: {} });
      expect(server.messages.find((message) => message.id === "ask-1")).toMatchObject({
        error: { code: -32601 },
      });
    } finally {
      await server.close();
    }
  });

  it("reads a JSON batch answer, and a JSON-RPC error as McpErrorResponse; a result of the wrong shape fails the call", async () => {
    let answer: "batch" | "error" | "shape" = "batch";
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/call") return message.id === undefined ? null : undefined;
      if (answer === "batch")
        return {
          json: [
            { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } },
            rpc(message, { content: [{ type: "text", text: "batched" }], isError: false }),
          ],
        };
      if (answer === "error")
        return {
          json: { jsonrpc: "2.0", id: message.id, error: { code: -32602, message: "bad arguments" } },
        };
      return { json: rpc(message, { content: "not a list" }) };
    });
    try {
      const made = client();
      const at = target(`${server.url}/mcp`);
      expect(mcpOutcome(await made.callTool(at, "echo", {}, never()))).toEqual({ value: "batched" });
      answer = "error";
      const refused = await rejection(made.callTool(at, "echo", {}, never()));
      expect(refused.error.name).toBe(MCP_ERROR_RESPONSE_NAME);
      expect(refused.error.message).toContain("bad arguments");
      answer = "shape";
      const wrong = await rejection(made.callTool(at, "echo", {}, never()));
      expect(wrong.error.message).toMatch(/content is not a list/);
    } finally {
      await server.close();
    }
  });
});

describe("SdkMcpClient and the network policy", () => {
  it("refuses a loopback server unless the allowlist names it (BlockedAddressError), before connecting", async () => {
    let requests = 0;
    const server = await listen((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    try {
      const { error } = await rejection(client({ policy: strict }).listTools(target(server.url), never()));
      expect(error.name).toBe(BLOCKED_ADDRESS_ERROR_NAME);
      expect(error.message).toContain("loopback");
      const viaName = server.url.replace("127.0.0.1", "localhost");
      expect(
        (await rejection(client({ policy: strict }).listTools(target(viaName), never()))).error.name,
      ).toBe(BLOCKED_ADDRESS_ERROR_NAME);
      expect(requests).toBe(0);
      expect(server.connections()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("does not follow a redirect to another address", async () => {
    const redirecting = await listen((_req, res) => {
      res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    });
    try {
      const { error } = await rejection(client().listTools(target(redirecting.url), never()));
      expect(error.message).toMatch(/307|[Rr]edirect/);
    } finally {
      await redirecting.close();
    }
  });

  it("rejects at timeoutMs when the server accepts but never answers, and hangs up", async () => {
    const sockets = new Set<Socket>();
    let closed = 0;
    const silent: TcpServer = createTcpServer((socket) => {
      sockets.add(socket);
      // Read (and drop) what arrives, so that the client's hang-up is seen as a close.
      socket.resume();
      socket.on("close", () => closed++);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const at = target(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, { timeoutMs: 500 });
      const { error } = await rejection(client().listTools(at, never()));
      expect(error.message).toMatch(/could not connect.*within 500 ms/);
      // The deadline ended the request: its connection is closed, not left waiting.
      expect(sockets.size).toBeGreaterThan(0);
      await until(() => closed === sockets.size);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

describe("SdkMcpClient's tools/call over the guarded exchange", () => {
  type Answer = "events" | "events in pieces" | "json" | "gzip events" | "gzip json" | "large";
  /** An MCP server whose tools/call answer is the case's; it counts its connections. */
  async function server(answer: () => Answer) {
    return listen((req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RpcMessage;
        if (message.method === "initialize") {
          const text = JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: "2025-06-18",
              capabilities: { tools: {} },
              serverInfo: { name: "t", version: "1" },
            },
          });
          return void res.writeHead(200, { "content-type": "application/json" }).end(text);
        }
        if (message.id === undefined) return void res.writeHead(202).end();
        const kind = answer();
        const text = kind === "large" ? "x".repeat(60_000) : `answered as ${kind}`;
        const rpc = { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text }] } };
        if (kind === "json" || kind === "gzip json") {
          const body = Buffer.from(JSON.stringify(rpc));
          if (kind === "json")
            return void res.writeHead(200, { "content-type": "application/json" }).end(body);
          return void res
            .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
            .end(gzipSync(body));
        }
        const event = sseEvent(rpc);
        if (kind === "gzip events") {
          return void res
            .writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" })
            .end(gzipSync(event));
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        if (kind !== "events in pieces") return void res.end(event);
        // The event split mid-line, the second half written on a later turn.
        res.write(event.slice(0, 20));
        setImmediate(() => res.end(event.slice(20)));
      });
    });
  }

  it("reuses one keep-alive connection for the calls of a warm session, event stream or JSON answer", async () => {
    const kinds: Answer[] = ["events", "json", "events in pieces"];
    let call = 0;
    const mcp = await server(() => kinds[call++ % kinds.length]!);
    try {
      const made = client();
      const at = target(mcp.url);
      await made.callTool(at, "echo", {}, never());
      const opened = mcp.connections();
      const texts: string[] = [];
      for (let i = 1; i <= 30; i++) {
        const outcome = mcpOutcome(await made.callTool(at, "echo", {}, never()));
        texts.push("value" in outcome ? String(outcome.value) : outcome.message);
      }
      expect(new Set(texts)).toEqual(new Set(kinds.map((kind) => `answered as ${kind}`)));
      expect(mcp.connections()).toBe(opened);
    } finally {
      await mcp.close();
    }
  });

  it("decodes gzip answers, and fails an answer over the byte cap with ResponseTooLargeError", async () => {
    let kind: Answer = "gzip events";
    const mcp = await server(() => kind);
    try {
      const guarded = createGuardedHttp(allowLoopback, { maxResponseBytes: 50_000 });
      const made = new SdkMcpClient({ fetch: guarded.fetch, exchange: guarded.exchange });
      clients.push(made);
      const at = target(mcp.url);
      expect(mcpOutcome(await made.callTool(at, "echo", {}, never()))).toEqual({
        value: "answered as gzip events",
      });
      kind = "gzip json";
      expect(mcpOutcome(await made.callTool(at, "echo", {}, never()))).toEqual({
        value: "answered as gzip json",
      });
      kind = "large";
      const { error } = await rejection(made.callTool(at, "echo", {}, never()));
      expect(error.name).toBe("ResponseTooLargeError");
    } finally {
      await mcp.close();
    }
  });
});

describe("createGuardedFetch hands text/event-stream bodies on as they arrive", () => {
  it("delivers an event before the stream ends, under the byte limit, and stops on abort", async () => {
    const sse = await listen((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      const timer = setInterval(() => res.write(`data: ${"x".repeat(1000)}\n\n`), 5);
      res.on("close", () => clearInterval(timer));
    });
    try {
      const controller = new AbortController();
      const response = await createGuardedFetch(allowLoopback)(sse.url, { signal: controller.signal });
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first).toContain("data: first");
      controller.abort(new Error("done listening"));
      await expect(reader.read()).rejects.toThrow("done listening");

      const limited = await createGuardedFetch(allowLoopback, { maxResponseBytes: 20_000 })(sse.url, {});
      const { error } = await rejection(limited.text());
      expect(error.name).toBe("ResponseTooLargeError");
    } finally {
      await sse.close();
    }
  });
});

describe("SdkMcpClient against @modelcontextprotocol/server-everything", () => {
  const url = inject("mcpEverythingUrl");
  let mcp: SdkMcpClient;
  let at: McpServerTarget;

  beforeAll(() => {
    mcp = new SdkMcpClient({ fetch: createGuardedFetch(allowLoopback) });
    at = target(url);
  });
  afterAll(() => mcp.close());

  it("lists its tools, hyphenated names included", async () => {
    const list = await mcp.listTools(at, never());
    const names = list.tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum"]));
    expect(names.some((name) => name.includes("-"))).toBe(true);
    for (const tool of list.tools) expect(tool.inputSchema).toMatchObject({ type: "object" });
  });

  it("calls echo and get-sum", async () => {
    expect(mcpOutcome(await mcp.callTool(at, "echo", { message: "hi" }, never()))).toEqual({
      value: "Echo: hi",
    });
    const sum = mcpOutcome(await mcp.callTool(at, "get-sum", { a: 2, b: 3 }, never()));
    expect(JSON.stringify(sum)).toContain("5");
  });

  it("answers its image tool with a placeholder, never the base64", async () => {
    const list = await mcp.listTools(at, never());
    const imageTool = list.tools.find((tool) => /image/.test(tool.name) && !tool.inputSchema.required);
    expect(imageTool).toBeDefined();
    const result = await mcp.callTool(at, imageTool!.name, {}, never());
    const image = result.content.find((block) => block.type === "image");
    expect(typeof image?.data).toBe("string");
    const outcome = mcpOutcome(result);
    expect(outcome).toEqual({ value: expect.stringMatching(/\[image: image\/png, [\d.]+ (B|KiB)\]/) });
    expect(JSON.stringify(outcome)).not.toContain(String(image?.data).slice(0, 40));
  });

  it("answers a structuredContent tool with its structured content", async () => {
    const list = await mcp.listTools(at, never());
    const structured = list.tools.find((tool) => /structured/.test(tool.name));
    expect(structured).toBeDefined();
    const required = (structured!.inputSchema.required as string[] | undefined) ?? [];
    const properties = (structured!.inputSchema.properties ?? {}) as Record<string, { enum?: string[] }>;
    const args = Object.fromEntries(
      required.map((name) => [name, properties[name]?.enum?.[0] ?? "New York"]),
    );
    const outcome = mcpOutcome(await mcp.callTool(at, structured!.name, args, never()));
    expect(outcome).toEqual({ value: expect.objectContaining({ temperature: expect.any(Number) }) });
  });
});

async function listen(
  handler: Parameters<typeof createHttpServer>[1],
): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const server: HttpServer = createHttpServer(handler);
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
