import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { type DispatchResult, type Manifest, type ProcessService, VanceError } from "@vance/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ProcessMcpServer } from "./process-server";

const KEY = { tenant: "acme", project: "p", processId: "proc-1" };

/** A process with two tools: `add` (sums a and b, refuses anything else) and `fails`. */
const processes: Pick<ProcessService, "manifest" | "invoke"> = {
  manifest: async () =>
    ({
      tools: [
        { name: "add", description: "Adds", input_schema: { type: "object" } },
        { name: "fails", description: "Fails", input_schema: { type: "object" } },
      ],
      primary: ["add", "fails"],
      deferred: [],
      demoted: [],
      budget: { maxTools: null, reserve: 1, limit: null },
      discoveryBlock: "Tools: add, fails",
      demotedDiscoveryBlock: "",
      stalePacks: [],
    }) satisfies Manifest,
  invoke: async (_key, name, params): Promise<DispatchResult> => {
    if (name === "fails") return { error: "tool_failed", message: "it failed", durationMs: 1 };
    if (name !== "add") throw new VanceError("tool_not_found", `no tool named '${name}'`);
    const { a, b } = params as { a?: unknown; b?: unknown };
    if (typeof a !== "number" || typeof b !== "number") {
      throw new VanceError("invalid_params", "the parameters do not match the schema", [
        { path: "a", message: "a number" },
      ]);
    }
    return { value: { sum: a + b }, durationMs: 1 };
  },
};

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
};

const call = (params: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params,
  ...extra,
});

/**
 * Every kind of message a client sends — those of the official conformance run (initialize,
 * notifications/initialized, ping, tools/list, tools/call) and the other JSON-RPC kinds (a
 * response and an error answering a server's request) — and the tools/call variants the fast path
 * must take or leave exactly as the SDK's schemas do. `fast`: whether the fast path answers it.
 */
const MESSAGES: readonly {
  name: string;
  message: unknown;
  headers?: Record<string, string>;
  fast: boolean;
}[] = [
  {
    name: "initialize",
    message: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "parity", version: "1" },
      },
    },
    fast: false,
  },
  {
    name: "notifications/initialized",
    message: { jsonrpc: "2.0", method: "notifications/initialized" },
    fast: false,
  },
  { name: "ping", message: { jsonrpc: "2.0", id: 2, method: "ping" }, fast: false },
  { name: "tools/list", message: { jsonrpc: "2.0", id: 3, method: "tools/list" }, fast: false },
  { name: "a result response", message: { jsonrpc: "2.0", id: 4, result: {} }, fast: false },
  {
    name: "an error response",
    message: { jsonrpc: "2.0", id: 5, error: { code: -32601, message: "Method not found" } },
    fast: false,
  },
  { name: "tools/call", message: call({ name: "add", arguments: { a: 2, b: 3 } }), fast: true },
  {
    name: "tools/call, string id",
    message: { ...call({ name: "add", arguments: { a: 1, b: 1 } }), id: "x-1" },
    fast: true,
  },
  { name: "tools/call without arguments", message: call({ name: "fails" }), fast: true },
  { name: "tools/call, a tool's failure", message: call({ name: "fails", arguments: {} }), fast: true },
  {
    name: "tools/call, invalid arguments",
    message: call({ name: "add", arguments: { a: "two" } }),
    fast: true,
  },
  { name: "tools/call, unknown tool", message: call({ name: "nope", arguments: {} }), fast: true },
  {
    name: "tools/call with _meta",
    message: call({ name: "add", arguments: { a: 1, b: 2 }, _meta: { progressToken: "t" } }),
    fast: true,
  },
  {
    name: "tools/call with an unknown params key (dropped by the schema)",
    message: call({ name: "add", arguments: { a: 1, b: 2 }, colour: "red" }),
    fast: true,
  },
  {
    name: "tools/call, a string id",
    message: { ...call({ name: "add", arguments: { a: 1, b: 2 } }), id: "c-1" },
    fast: true,
  },
  { name: "tools/call without arguments", message: call({ name: "add" }), fast: true },
  {
    name: "tools/call, an argument named __proto__",
    message: JSON.parse(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"__proto__":{"a":1},"a":1,"b":2}}}',
    ),
    fast: true,
  },
  { name: "tools/call, fractional id", message: { ...call({ name: "add" }), id: 1.5 }, fast: false },
  {
    name: "tools/call, no jsonrpc",
    message: { id: 8, method: "tools/call", params: { name: "add" } },
    fast: false,
  },
  {
    name: "tools/call, an unknown top-level key",
    message: call({ name: "add" }, { colour: "red" }),
    fast: false,
  },
  { name: "tools/call, name not a string", message: call({ name: 3, arguments: {} }), fast: false },
  { name: "tools/call, arguments a list", message: call({ name: "add", arguments: [1, 2] }), fast: false },
  { name: "tools/call, no params", message: { jsonrpc: "2.0", id: 9, method: "tools/call" }, fast: false },
  {
    name: "tools/call, task-augmented",
    message: call({ name: "add", arguments: {}, task: { ttl: 1000 } }),
    fast: false,
  },
  {
    name: "tools/call of tool_description (activating)",
    message: call({ name: "tool_description", arguments: {} }),
    fast: false,
  },
  {
    name: "a notification of tools/call (no id)",
    message: { jsonrpc: "2.0", method: "tools/call", params: { name: "add" } },
    fast: false,
  },
  {
    name: "a batch of one tools/call",
    message: [call({ name: "add", arguments: { a: 2, b: 3 } })],
    fast: false,
  },
  {
    name: "tools/call, unsupported protocol version",
    message: call({ name: "add", arguments: { a: 2, b: 3 } }),
    headers: { "mcp-protocol-version": "1999-01-01" },
    fast: false,
  },
  {
    name: "tools/call, Accept without event streams",
    message: call({ name: "add", arguments: { a: 2, b: 3 } }),
    headers: { accept: "application/json" },
    fast: false,
  },
];

async function answer(server: ProcessMcpServer, message: unknown, headers: Record<string, string> = {}) {
  const request = new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: JSON.stringify(message),
  });
  const response = await server.answer(request, message, KEY);
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: await response.text(),
  };
}

describe("ProcessMcpServer: the tools/call fast path against the SDK's own path", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(MESSAGES)(
    "$name: the same answer as the SDK's server and transport",
    async ({ message, headers, fast }) => {
      const withFastPath = new ProcessMcpServer({ processes, version: "1.0.0" });
      const sdkOnly = new ProcessMcpServer({ processes, version: "1.0.0", fastPath: false });
      const throughSdk = vi.spyOn(WebStandardStreamableHTTPServerTransport.prototype, "handleRequest");
      const fastAnswer = await answer(withFastPath, message, headers);
      expect(throughSdk.mock.calls.length, "the SDK's transport was used").toBe(fast ? 0 : 1);
      const sdkAnswer = await answer(sdkOnly, message, headers);
      expect(fastAnswer.status).toBe(sdkAnswer.status);
      expect(fastAnswer.type).toBe(sdkAnswer.type);
      if (sdkAnswer.type?.startsWith("application/json")) {
        expect(JSON.parse(fastAnswer.body)).toEqual(JSON.parse(sdkAnswer.body));
      } else {
        expect(fastAnswer.body).toBe(sdkAnswer.body);
      }
    },
  );

  it("the fast path answers a call with the tool's result, the SDK's JSON-RPC errors for unknown names", async () => {
    const server = new ProcessMcpServer({ processes, version: "1.0.0" });
    const sum = await answer(server, call({ name: "add", arguments: { a: 2, b: 3 } }));
    expect(JSON.parse(sum.body)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: '{"sum":5}' }], structuredContent: { sum: 5 } },
    });
    const unknown = await answer(server, call({ name: "nope", arguments: {} }));
    expect(JSON.parse(unknown.body)).toMatchObject({ id: 7, error: { code: -32602 } });
  });
});
