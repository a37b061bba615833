import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, closeTestApps, SECRET, testApp } from "../../test/support/app";
import {
  comparable as comparableAs,
  type Exchange,
  expectAnswer,
  ParityHarness,
} from "../../test/support/route-parity";
import { createApp } from "./app";
import { type Claims, mintToken } from "./auth";
import { DEFAULT_BODY_BYTES } from "./body-limits";
import { fastProcessMcp } from "./fast-mcp";

/**
 * The process MCP endpoint's fast route (`fast-mcp.ts`, before Hono) against its Hono route, over
 * the same services: every request of the table — each MCP message kind, and the refusals of the
 * body, the token and the browser guard — is sent to an app with the fast routes and to one
 * without, in process (`app.request`, what Lambda's adapter calls) and over `node:http` (what
 * `npm start` serves); the two must answer the same status, headers (all but `date`) and body,
 * and log the same lines. `fast` says whether the fast route claims the request.
 */

const T = "/v1/tenants/acme/projects/hello";
const REQUEST_ID = "parity-mcp-0001";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const READER: Claims = { tenant: "acme", roles: ["read"] };

interface Case {
  readonly name: string;
  /** The JSON-RPC message (sent as JSON), or the body's exact text or bytes. */
  readonly message?: unknown;
  readonly raw?: string | Buffer;
  /** The path; `{id}` is the spawned process. */
  readonly path?: string;
  /** The message changes the process (an activation): each app is sent it for a process of its own. */
  readonly fresh?: boolean;
  readonly method?: string;
  /** The token's claims (`null`: no header). */
  readonly claims?: Claims | null;
  /** Headers over the MCP client's (`null` removes one). */
  readonly headers?: Record<string, string | null>;
  readonly freshRequestId?: boolean;
  readonly status: number;
  /** The problem's code, or what the JSON-RPC answer holds. */
  readonly code?: string;
  readonly contains?: string;
  readonly fast: boolean;
}

const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

const INITIALIZE = rpc(1, "initialize", {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: "parity", version: "1" },
});

const CASES: readonly Case[] = [
  { name: "initialize", message: INITIALIZE, status: 200, contains: '"serverInfo"', fast: true },
  {
    name: "notifications/initialized",
    message: { jsonrpc: "2.0", method: "notifications/initialized" },
    status: 202,
    fast: true,
  },
  { name: "ping", message: rpc(2, "ping"), status: 200, contains: '"result":{}', fast: true },
  { name: "tools/list", message: rpc(3, "tools/list"), status: 200, contains: '"whoami"', fast: true },
  {
    name: "tools/call, ok",
    message: rpc(4, "tools/call", { name: "whoami", arguments: {} }),
    status: 200,
    contains: '"result"',
    fast: true,
  },
  {
    name: "tools/call of a tool outside the allow set (a JSON-RPC error)",
    message: rpc(5, "tools/call", { name: "doc_nowhere", arguments: {} }),
    status: 200,
    contains: '"error"',
    fast: true,
  },
  {
    name: "tools/call with bad arguments (a tool error)",
    message: rpc(6, "tools/call", { name: "tool_list", arguments: { page: "many" } }),
    status: 200,
    contains: '"isError":true',
    fast: true,
  },
  {
    name: "tools/call of tool_description (an event stream)",
    message: rpc(7, "tools/call", { name: "tool_description", arguments: { names: ["execute_javascript"] } }),
    fresh: true,
    status: 200,
    contains: "notifications/tools/list_changed",
    fast: true,
  },
  {
    name: "a batch",
    message: [rpc(8, "ping"), rpc(9, "tools/list")],
    status: 200,
    fast: true,
  },
  {
    name: "a response to the server (no request)",
    message: { jsonrpc: "2.0", id: 10, result: {} },
    status: 202,
    fast: true,
  },
  {
    name: "tools/call for no such process",
    path: `${T}/processes/${UNKNOWN}/mcp`,
    message: rpc(11, "tools/call", { name: "whoami", arguments: {} }),
    status: 404,
    code: "process_not_found",
    fast: true,
  },
  {
    name: "Accept without event streams (the SDK's 406)",
    message: rpc(12, "tools/call", { name: "whoami", arguments: {} }),
    headers: { accept: "application/json" },
    status: 406,
    fast: true,
  },
  { name: "bad JSON", raw: '{"jsonrpc": "2.0",', status: 400, code: "invalid_json", fast: true },
  {
    name: "a body that is not UTF-8",
    raw: Buffer.from([0x7b, 0xff, 0x7d]),
    status: 400,
    code: "invalid_json",
    fast: true,
  },
  {
    name: "JSON nested too deep",
    raw: `${"[".repeat(5000)}${"]".repeat(5000)}`,
    status: 413,
    code: "payload_too_large",
    fast: true,
  },
  {
    name: "text/plain",
    message: rpc(13, "ping"),
    headers: { "content-type": "text/plain" },
    status: 415,
    code: "unsupported_media_type",
    fast: true,
  },
  {
    name: "a body over the limit",
    raw: JSON.stringify({ ...rpc(14, "ping"), pad: "x".repeat(DEFAULT_BODY_BYTES) }),
    status: 413,
    code: "payload_too_large",
    fast: false,
  },
  {
    name: "a body over the limit, no token",
    raw: JSON.stringify({ ...rpc(14, "ping"), pad: "x".repeat(DEFAULT_BODY_BYTES) }),
    claims: null,
    status: 413,
    code: "payload_too_large",
    fast: false,
  },
  {
    name: "no token",
    message: rpc(15, "ping"),
    claims: null,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "no token, no x-request-id",
    message: rpc(15, "ping"),
    claims: null,
    freshRequestId: true,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "another tenant's token",
    message: rpc(16, "tools/call", { name: "whoami", arguments: {} }),
    claims: { tenant: "other", roles: ["read"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a token without read",
    message: rpc(17, "ping"),
    claims: { tenant: "acme", roles: ["write"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "an engine's token (--processes)",
    message: rpc(18, "tools/call", { name: "whoami", arguments: {} }),
    claims: { ...READER, reach: "processes" },
    status: 200,
    fast: true,
  },
  {
    name: "an Origin not listed",
    message: rpc(19, "ping"),
    headers: { origin: "https://evil.example" },
    status: 403,
    code: "origin_not_allowed",
    fast: false,
  },
  { name: "GET", method: "GET", status: 405, code: "method_not_allowed", fast: false },
  { name: "DELETE", method: "DELETE", status: 405, code: "method_not_allowed", fast: false },
  {
    name: "a bad tenant id",
    path: "/v1/tenants/ACME/projects/hello/processes/{id}/mcp",
    message: rpc(20, "ping"),
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  {
    name: "an encoded path",
    path: "/v1/tenants/ac%6De/projects/hello/processes/{id}/mcp",
    message: rpc(21, "ping"),
    status: 200,
    fast: false,
  },
];

let services: Awaited<ReturnType<typeof testApp>>["services"];
let apps: { readonly fast: ReturnType<typeof createApp>; readonly hono: ReturnType<typeof createApp> };
let servers: { readonly fast: string; readonly hono: string };
const harness = new ParityHarness();
let processId = "";

/** A process allowing `whoami`, with `execute_javascript` deferred. */
async function spawn(): Promise<string> {
  const spawned = await apps.hono.request(`${T}/processes`, {
    method: "POST",
    headers: {
      ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
      "content-type": "application/json",
    },
    body: JSON.stringify({
      models: ["openai/gpt-4.1"],
      allowedToolsAdd: ["whoami", "execute_javascript"],
      allowedToolsDefer: ["execute_javascript"],
    }),
  });
  expect(spawned.status).toBe(201);
  return ((await spawned.json()) as { processId: string }).processId;
}

beforeAll(async () => {
  ({ services } = await testApp({ logger: harness.logger }));
  apps = { fast: createApp(services), hono: createApp(services, { fastRoutes: false }) };
  processId = await spawn();
  servers = { fast: await harness.listen(apps.fast), hono: await harness.listen(apps.hono) };
});

afterAll(async () => {
  await harness.stop();
  await closeTestApps();
});

const pathOf = async (test: Case) =>
  (test.path ?? `${T}/processes/{id}/mcp`).replace("{id}", test.fresh ? await spawn() : processId);

function bodyOf(test: Case): Uint8Array<ArrayBuffer> | undefined {
  if (test.raw !== undefined) return new Uint8Array(Buffer.from(test.raw));
  if (test.message !== undefined) return new TextEncoder().encode(JSON.stringify(test.message));
  return undefined;
}

/** The MCP SDK client's headers, the body's length, the token and the test's own. */
async function headersOf(test: Case, body: Uint8Array | undefined): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
  };
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  if (!test.freshRequestId) headers["x-request-id"] = REQUEST_ID;
  if (test.claims !== null) {
    headers.authorization = `Bearer ${await mintToken(SECRET, test.claims ?? READER, 3600)}`;
  }
  for (const [name, value] of Object.entries(test.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return headers;
}

/** The request a case sends (a `fresh` case spawns its process here). */
async function sentOf(test: Case) {
  const path = await pathOf(test);
  const body = bodyOf(test);
  return { path, method: test.method ?? "POST", headers: await headersOf(test, body), body };
}

const inProcess = async (app: ReturnType<typeof createApp>, test: Case): Promise<Exchange> =>
  harness.inProcess(app, await sentOf(test));
const overHttp = async (base: string, test: Case): Promise<Exchange> =>
  harness.overHttp(base, await sentOf(test));
const comparable = (exchange: Exchange, test: Case): Exchange =>
  comparableAs(exchange, test.freshRequestId ? undefined : REQUEST_ID);

describe("the process MCP endpoint's fast route against its Hono route", () => {
  it.each(CASES)("$name: claimed as the table says", async (test) => {
    const body = bodyOf(test);
    const request = new Request(`http://localhost${await pathOf(test)}`, {
      method: test.method ?? "POST",
      headers: await headersOf(test, body),
      ...(body === undefined ? {} : { body }),
    });
    const route = fastProcessMcp(services.processes, services.verifier, {
      version: services.version,
      settings: services.mcp,
    });
    expect(route(request, undefined) !== undefined).toBe(test.fast);
  });

  it.each(CASES)("$name: the same answer and log lines in process (app.request)", async (test) => {
    const hono = await inProcess(apps.hono, test);
    const fast = await inProcess(apps.fast, test);
    expectAnswer(hono, test);
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
  });

  it.each(CASES)("$name: the same answer and log lines on the wire (node:http)", async (test) => {
    const hono = await overHttp(servers.hono, test);
    const fast = await overHttp(servers.fast, test);
    expectAnswer(hono, test);
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
  });

  it("on a loopback-bound server, a Host that is not loopback is refused as the guard refuses it (403 host_not_allowed)", async () => {
    const settings = { ...services.mcp, loopbackOnly: true };
    const loopback = { ...services, mcp: settings };
    const test: Case = {
      name: "rebound host",
      message: rpc(22, "ping"),
      headers: { host: "rebound.example:8080" },
      status: 403,
      code: "host_not_allowed",
      fast: true,
    };
    const hono = await inProcess(createApp(loopback, { fastRoutes: false }), test);
    const fast = await inProcess(createApp(loopback), test);
    expectAnswer(hono, test);
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
    const passed = await inProcess(createApp(loopback), { ...test, headers: { host: "127.0.0.1:8080" } });
    expect(passed.status).toBe(200);
  });

  it("leaves the session endpoint (T/mcp) to Hono", async () => {
    const body = new TextEncoder().encode(JSON.stringify(INITIALIZE));
    const request = new Request(`http://localhost${T}/mcp`, {
      method: "POST",
      headers: await headersOf({ name: "session", status: 200, fast: false }, body),
      body,
    });
    const route = fastProcessMcp(services.processes, services.verifier, {
      version: services.version,
      settings: services.mcp,
    });
    expect(route(request, undefined)).toBeUndefined();
  });
});
