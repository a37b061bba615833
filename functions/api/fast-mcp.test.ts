import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "@vance/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, closeTestApps, SECRET, testApp } from "../../test/support/app";
import { createApp } from "./app";
import { type Claims, mintToken } from "./auth";
import { DEFAULT_BODY_BYTES } from "./body-limits";
import { fastProcessMcp } from "./fast-mcp";
import { closeWhenBodyUnread } from "./keep-alive";

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

interface Exchange {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly log: Record<string, unknown>[];
}

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
const stops: (() => Promise<void>)[] = [];
const lines: Record<string, unknown>[] = [];
let processId = "";

const capturing: Logger = {
  info: (event, fields) => lines.push({ event, ...fields }),
  warn: (event, fields) => lines.push({ event, ...fields }),
};

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
  ({ services } = await testApp({ logger: capturing }));
  apps = { fast: createApp(services), hono: createApp(services, { fastRoutes: false }) };
  processId = await spawn();
  servers = { fast: await listen(apps.fast), hono: await listen(apps.hono) };
});

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  await closeTestApps();
});

/** Serves `app` as `npm start` does (functions/api/node.ts). */
async function listen(app: ReturnType<typeof createApp>): Promise<string> {
  const server = serve({ fetch: closeWhenBodyUnread(app.fetch), port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  stops.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

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

/** Sends through `app.request`, as Lambda's adapter calls `app.fetch`. */
async function inProcess(app: ReturnType<typeof createApp>, test: Case): Promise<Exchange> {
  const path = await pathOf(test);
  const from = lines.length;
  const body = bodyOf(test);
  const response = await app.request(path, {
    method: test.method ?? "POST",
    headers: await headersOf(test, body),
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  await expect.poll(() => lines.slice(from).some((line) => line.event === "http.request")).toBe(true);
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: text,
    log: lines.slice(from),
  };
}

/** Sends over a keep-alive-less `node:http` request: the headers as they are written on the wire. */
async function overHttp(base: string, test: Case): Promise<Exchange> {
  const path = await pathOf(test);
  const from = lines.length;
  const body = bodyOf(test);
  const headers = await headersOf(test, body);
  const answer = await new Promise<{ status: number; headers: Record<string, string>; body: string }>(
    (resolve, reject) => {
      const req = httpRequest(`${base}${path}`, { method: test.method ?? "POST", headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const { date: _date, ...rest } = res.headers;
          resolve({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(Object.entries(rest).map(([name, value]) => [name, String(value)])),
            body: Buffer.concat(chunks).toString("utf8"),
          });
        });
        res.on("error", reject);
      });
      // A refusal before the body is read may close the socket while it is still being sent.
      req.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
      });
      req.end(body);
    },
  );
  await expect.poll(() => lines.slice(from).some((line) => line.event === "http.request")).toBe(true);
  return { ...answer, log: lines.slice(from) };
}

/** What may differ between two answers to the same request: a new request id, the time taken. */
function comparable(exchange: Exchange, test: Case): Exchange {
  const id = exchange.headers["x-request-id"]!;
  if (test.freshRequestId)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  else expect(id).toBe(REQUEST_ID);
  const fresh = (text: string) => text.replaceAll(id, "<request id>");
  return {
    status: exchange.status,
    headers: { ...exchange.headers, "x-request-id": fresh(id) },
    body: fresh(exchange.body),
    log: exchange.log.map(({ durationMs, requestId, ...line }) => {
      if (line.event === "http.request") expect(typeof durationMs).toBe("number");
      return { ...line, ...(requestId === undefined ? {} : { requestId: fresh(String(requestId)) }) };
    }),
  };
}

function expectAnswer(exchange: Exchange, test: Case): void {
  expect(exchange.status).toBe(test.status);
  if (test.code !== undefined) expect(JSON.parse(exchange.body)).toMatchObject({ code: test.code });
  if (test.contains !== undefined) expect(exchange.body).toContain(test.contains);
  expect(exchange.log.filter((line) => line.event === "http.request")).toHaveLength(1);
}

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
