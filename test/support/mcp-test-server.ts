import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

/** A 1×1 transparent PNG (68 bytes). */
export const TINY_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** The tools every session of the test server starts with. */
export const MCP_TEST_TOOLS = [
  "add_tool",
  "echo",
  "echo_header",
  "fail",
  "get-weather",
  "slow",
  "tiny_image",
];

/** A running test MCP server. */
export interface McpTestServer {
  /** The Streamable HTTP endpoint with sessions, `http://127.0.0.1:{port}/mcp`. */
  readonly url: string;
  /**
   * A stateless endpoint whose `tools/list` pages: `{origin}/paged?tools=N&page=M` lists `tool_0`…
   * `tool_{N-1}`, M per page (`&loop=1`: the last page names its own cursor again); its `tools/call`
   * of `refuse` answers a JSON-RPC error.
   */
  readonly origin: string;
  /**
   * Sessions held now, sessions ever initialised, `slow` calls running now, and `slow` calls the
   * client cancelled before they answered.
   */
  stats(): { sessions: number; initialized: number; running: number; cancelled: number };
  /** Forgets every session, as a restarted server would: a request on one answers 404. */
  forgetSessions(): Promise<void>;
  /** Stops listening and ends every connection. Idempotent. */
  stop(): Promise<void>;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly server: McpServer;
}

/**
 * A small MCP server on the SDK (`McpServer` + `StreamableHTTPServerTransport`) on 127.0.0.1, for
 * the client's tests and benches. Its tools: `fail` answers `isError`, `get-weather` (a hyphen in
 * its name) answers `structuredContent` under an `outputSchema`, `tiny_image` an image block,
 * `add_tool` registers one more tool in the caller's session (so `tools/list_changed` goes out),
 * `echo`, `echo_header` (a request header's value, to test scrubbing) and `slow`. Admin hooks over
 * HTTP for tests in other processes: `POST /admin/forget-sessions`, `GET /admin/stats`.
 */
export async function startMcpTestServer(options: { port?: number } = {}): Promise<McpTestServer> {
  const sessions = new Map<string, Session>();
  let initialized = 0;
  const counts = { running: 0, cancelled: 0 };

  async function forgetSessions(): Promise<void> {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map((session) => session.server.close().catch(() => {})));
  }

  async function handleMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) {
        json(res, 404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
        return;
      }
      await session.transport.handleRequest(req, res);
      return;
    }
    const server = buildServer(counts);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        initialized++;
        sessions.set(id, { transport, server });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialize: the transport refused it, and nothing holds the server.
    if (transport.sessionId === undefined) await server.close();
  }

  const http = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const route = async () => {
      if (url.pathname === "/mcp") return handleMcp(req, res);
      if (url.pathname === "/paged") return handlePaged(req, res, url);
      if (url.pathname === "/admin/forget-sessions" && req.method === "POST") {
        await forgetSessions();
        return json(res, 200, { forgotten: true });
      }
      if (url.pathname === "/admin/stats")
        return json(res, 200, { sessions: sessions.size, initialized, ...counts });
      json(res, 404, { error: "not found" });
    };
    route().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  let stopping: Promise<void> | undefined;
  return {
    url: `${origin}/mcp`,
    origin,
    stats: () => ({ sessions: sessions.size, initialized, ...counts }),
    forgetSessions,
    stop() {
      stopping ??= (async () => {
        await forgetSessions();
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      })();
      return stopping;
    },
  };
}

/** One session's server: a fresh `McpServer` with the test tools; `counts` is shared by every session. */
function buildServer(counts: { running: number; cancelled: number }): McpServer {
  const server = new McpServer({ name: "vance-test-mcp", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Answers the message it was given", inputSchema: { message: z.string() } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  server.registerTool(
    "fail",
    { description: "Always fails, as a tool", inputSchema: { reason: z.string().optional() } },
    async ({ reason }) => ({
      isError: true,
      content: [{ type: "text", text: `the widget failed: ${reason ?? "no reason given"}` }],
    }),
  );
  server.registerTool(
    "get-weather",
    {
      description: "Current weather of a city, as structured content",
      inputSchema: { city: z.string().describe("City name") },
      outputSchema: { city: z.string(), temperatureC: z.number(), conditions: z.string() },
    },
    async ({ city }) => {
      const weather = { city, temperatureC: 21.5, conditions: "sunny" };
      return { structuredContent: weather, content: [{ type: "text", text: JSON.stringify(weather) }] };
    },
  );
  server.registerTool("tiny_image", { description: "A tiny PNG image with a caption" }, async () => ({
    content: [
      { type: "text", text: "a tiny image" },
      { type: "image", data: TINY_PNG_BASE64, mimeType: "image/png" },
    ],
  }));
  server.registerTool(
    "add_tool",
    { description: "Registers one more tool in this session", inputSchema: { name: z.string() } },
    async ({ name }) => {
      server.registerTool(name, { description: `Added at run time: ${name}` }, async () => ({
        content: [{ type: "text", text: `${name} ran` }],
      }));
      return { content: [{ type: "text", text: `added ${name}` }] };
    },
  );
  server.registerTool(
    "echo_header",
    { description: "Answers the value of a request header", inputSchema: { name: z.string() } },
    async ({ name }, extra) => {
      const value = extra.requestInfo?.headers[name.toLowerCase()];
      return { content: [{ type: "text", text: `header ${name}: ${String(value)}` }] };
    },
  );
  server.registerTool(
    "slow",
    { description: "Answers after ms milliseconds", inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      counts.running++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener("abort", () => {
          counts.cancelled++;
          clearTimeout(timer);
          resolve();
        });
      });
      counts.running--;
      return { content: [{ type: "text", text: `waited ${ms} ms` }] };
    },
  );
  return server;
}

/** A stateless low-level server whose `tools/list` pages as the query says. */
async function handlePaged(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const count = Number(url.searchParams.get("tools") ?? "25");
  const pageSize = Number(url.searchParams.get("page") ?? "10");
  const loop = url.searchParams.get("loop") === "1";
  const server = new Server({ name: "vance-paged-mcp", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const start = Number(request.params?.cursor ?? "0");
    const end = Math.min(count, start + pageSize);
    const tools = [];
    for (let i = start; i < end; i++) {
      tools.push({
        name: `tool_${i}`,
        description: `Paged tool number ${i}`,
        inputSchema: { type: "object" as const, properties: { n: { type: "number" } } },
      });
    }
    const nextCursor = end < count ? String(end) : loop ? String(start) : undefined;
    return nextCursor === undefined ? { tools } : { tools, nextCursor };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    // A JSON-RPC error answer, which McpServer never gives for a tool (it answers isError).
    if (request.params.name === "refuse")
      throw new McpError(ErrorCode.InvalidParams, "refused: no such widget");
    return {
      content: [
        { type: "text", text: `${request.params.name} ran with ${JSON.stringify(request.params.arguments)}` },
      ],
    };
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  res.on("close", () => void server.close());
  await transport.handleRequest(req, res);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
