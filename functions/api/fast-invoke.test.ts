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
import { fastInvoke } from "./fast-invoke";

/**
 * The direct invoke's fast route (`fast-invoke.ts`, before Hono) against its Hono route, over the
 * same services: every request of the table — a scripted tool's answers and failures, a built-in's,
 * and every refusal of the body, the token and the tool — is sent to an app with the fast routes and
 * to one without, in process (`app.request`, what Lambda's adapter calls) and over `node:http` (what
 * `npm start` serves); the two must answer the same status, headers (all but `date`) and body (the
 * run's `durationMs` aside), and log the same lines. `fast` says whether the fast route claims it.
 */

const T = "/v1/tenants/acme/projects/hello";
const REQUEST_ID = "parity-invoke-0001";
const READER: Claims = { tenant: "acme", roles: ["read"] };
const ADD = `${T}/tools/add_numbers/invoke`;

interface Case {
  readonly name: string;
  /** The body (sent as JSON), or its exact text or bytes. */
  readonly json?: unknown;
  readonly raw?: string | Buffer;
  readonly path?: string;
  readonly method?: string;
  /** The token's claims (`null`: no header); `authorization` replaces the header. */
  readonly claims?: Claims | null;
  readonly authorization?: string;
  /** Headers over the JSON client's (`null` removes one). */
  readonly headers?: Record<string, string | null>;
  /** The body is sent without a length (chunked over the wire). */
  readonly chunked?: boolean;
  readonly freshRequestId?: boolean;
  readonly requestId?: string;
  readonly status: number;
  readonly code?: string;
  readonly contains?: string;
  readonly fast: boolean;
}

const SUM = { params: { a: 1, b: 2 } };

const CASES: readonly Case[] = [
  { name: "a scripted tool", json: SUM, status: 200, contains: '"value":3', fast: true },
  {
    name: "a media type with a charset",
    json: SUM,
    headers: { "content-type": "application/json; charset=utf-8" },
    status: 200,
    contains: '"value":3',
    fast: true,
  },
  {
    name: "the tool in its allowed tools",
    json: { ...SUM, allowedTools: ["add_numbers"] },
    status: 200,
    contains: '"value":3',
    fast: true,
  },
  {
    name: "a script that throws (the tool's failure as data)",
    path: `${T}/tools/throws/invoke`,
    json: { params: {} },
    status: 200,
    contains: '"message":"no"',
    fast: true,
  },
  {
    name: "a built-in tool",
    path: `${T}/tools/whoami/invoke`,
    json: {},
    status: 200,
    fast: true,
  },
  { name: "an empty object (no params)", json: {}, status: 422, code: "invalid_params", fast: true },
  {
    name: "params of the wrong type",
    json: { params: { a: "one", b: 2 } },
    status: 422,
    code: "invalid_params",
    fast: true,
  },
  {
    name: "the tool outside its allowed tools",
    json: { ...SUM, allowedTools: ["whoami"] },
    status: 403,
    code: "tool_not_allowed",
    fast: true,
  },
  {
    name: "no such tool",
    path: `${T}/tools/nowhere/invoke`,
    json: SUM,
    status: 404,
    code: "tool_not_found",
    fast: true,
  },
  {
    name: "no such pack sub-tool",
    path: `${T}/tools/nopack__op/invoke`,
    json: SUM,
    status: 404,
    code: "tool_not_found",
    fast: true,
  },
  {
    name: "a disabled tool",
    path: `${T}/tools/switched_off/invoke`,
    json: SUM,
    status: 404,
    code: "tool_disabled",
    fast: true,
  },
  {
    name: "an unknown body field",
    json: { ...SUM, verbose: true },
    status: 422,
    code: "validation_failed",
    fast: true,
  },
  {
    name: "a bad allowed tool name",
    json: { ...SUM, allowedTools: ["Not A Name"] },
    status: 422,
    code: "validation_failed",
    fast: true,
  },
  { name: "a body that is no object", json: [1, 2], status: 422, code: "validation_failed", fast: true },
  { name: "not JSON", raw: '{"params":', status: 400, code: "invalid_json", fast: true },
  { name: "an empty body", raw: "", status: 400, code: "invalid_json", fast: true },
  {
    name: "bytes that are not UTF-8",
    raw: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]),
    status: 400,
    code: "invalid_json",
    fast: true,
  },
  {
    name: "JSON nested too deep",
    raw: `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
    status: 413,
    code: "payload_too_large",
    fast: true,
  },
  {
    name: "text/plain",
    json: SUM,
    headers: { "content-type": "text/plain" },
    status: 415,
    code: "unsupported_media_type",
    fast: true,
  },
  {
    name: "no content type",
    json: SUM,
    headers: { "content-type": null },
    status: 415,
    code: "unsupported_media_type",
    fast: true,
  },
  {
    name: "no token",
    json: SUM,
    claims: null,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "no token, no x-request-id",
    json: SUM,
    claims: null,
    freshRequestId: true,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "no token, not JSON",
    raw: "{",
    claims: null,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "another scheme",
    json: SUM,
    authorization: "Basic YTpi",
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "a token that is no JWT",
    json: SUM,
    authorization: "Bearer not.a.jwt",
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "another tenant's token",
    json: SUM,
    claims: { tenant: "other", roles: ["read"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a token of another project",
    json: SUM,
    claims: { ...READER, project: "elsewhere" },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a token without read",
    json: SUM,
    claims: { tenant: "acme", roles: ["write"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a platform token",
    json: SUM,
    claims: { tenant: "*", roles: ["read"] },
    status: 200,
    contains: '"value":3',
    fast: true,
  },
  { name: "no x-request-id", json: SUM, freshRequestId: true, status: 200, fast: true },
  { name: "an x-request-id not kept", json: SUM, requestId: "no spaces please", status: 200, fast: true },
  {
    name: "a body over the limit",
    raw: `{"params":{"a":1,"b":2,"pad":"${"x".repeat(DEFAULT_BODY_BYTES)}"}}`,
    status: 413,
    code: "payload_too_large",
    fast: false,
  },
  {
    name: "a body over the limit, no token",
    raw: `{"params":{"a":1,"b":2,"pad":"${"x".repeat(DEFAULT_BODY_BYTES)}"}}`,
    claims: null,
    status: 413,
    code: "payload_too_large",
    fast: false,
  },
  { name: "a body of no stated length", json: SUM, chunked: true, status: 200, fast: false },
  {
    name: "a bad tool name",
    path: `${T}/tools/Add-Numbers/invoke`,
    json: SUM,
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  {
    name: "a bad tenant id, no token",
    path: "/v1/tenants/ACME/projects/hello/tools/add_numbers/invoke",
    json: SUM,
    claims: null,
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  { name: "a query", path: `${ADD}?verbose=1`, json: SUM, status: 200, fast: false },
  {
    name: "an encoded path",
    path: `${T}/tools/add%5Fnumbers/invoke`,
    json: SUM,
    status: 200,
    fast: false,
  },
  { name: "a trailing slash", path: `${ADD}/`, json: SUM, status: 404, code: "not_found", fast: false },
  { name: "GET", method: "GET", status: 404, code: "not_found", fast: false },
];

let services: Awaited<ReturnType<typeof testApp>>["services"];
let apps: { readonly fast: ReturnType<typeof createApp>; readonly hono: ReturnType<typeof createApp> };
let servers: { readonly fast: string; readonly hono: string };
const harness = new ParityHarness();

const TOOLS: Record<string, string> = {
  add_numbers:
    "type: scripted\ndescription: a + b\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
  throws: "type: scripted\ndescription: fails\nparameters:\n  inputs: []\n  source: throw new Error('no')\n",
  switched_off:
    "type: scripted\ndescription: off\nenabled: false\nparameters:\n  inputs: []\n  source: '1'\n",
};

beforeAll(async () => {
  ({ services } = await testApp({ logger: harness.logger }));
  apps = { fast: createApp(services), hono: createApp(services, { fastRoutes: false }) };
  for (const [name, yaml] of Object.entries(TOOLS)) {
    const put = await apps.hono.request(`${T}/tools/${name}`, {
      method: "PUT",
      headers: {
        ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
        "content-type": "application/yaml",
      },
      body: yaml,
    });
    expect(put.status, await put.text()).toBe(201);
  }
  servers = { fast: await harness.listen(apps.fast), hono: await harness.listen(apps.hono) };
});

afterAll(async () => {
  await harness.stop();
  await closeTestApps();
});

function bodyOf(test: Case): Uint8Array<ArrayBuffer> | undefined {
  if (test.raw !== undefined) return new Uint8Array(Buffer.from(test.raw));
  if (test.json !== undefined) return new TextEncoder().encode(JSON.stringify(test.json));
  return undefined;
}

/** A JSON client's headers, the body's length (unless chunked), the token and the test's own. */
async function headersOf(test: Case, body: Uint8Array | undefined): Promise<Record<string, string>> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (body !== undefined && !test.chunked) headers["content-length"] = String(body.byteLength);
  if (!test.freshRequestId) headers["x-request-id"] = test.requestId ?? REQUEST_ID;
  if (test.authorization !== undefined) headers.authorization = test.authorization;
  else if (test.claims !== null) {
    headers.authorization = `Bearer ${await mintToken(SECRET, test.claims ?? READER, 3600)}`;
  }
  for (const [name, value] of Object.entries(test.headers ?? {})) {
    if (value === null) delete headers[name];
    else headers[name] = value;
  }
  return headers;
}

async function sentOf(test: Case) {
  const body = bodyOf(test);
  return {
    path: test.path ?? ADD,
    method: test.method ?? "POST",
    headers: await headersOf(test, body),
    body,
  };
}

const inProcess = async (app: ReturnType<typeof createApp>, test: Case): Promise<Exchange> =>
  harness.inProcess(app, await sentOf(test));
/** Over the wire, a body of no stated length goes chunked. */
const overHttp = async (base: string, test: Case): Promise<Exchange> => {
  const sent = await sentOf(test);
  return harness.overHttp(
    base,
    test.chunked ? { ...sent, headers: { ...sent.headers, "transfer-encoding": "chunked" } } : sent,
  );
};

/**
 * What may differ: a fresh request id, the time taken, and the run's own `durationMs` — and with it
 * the body's length, which each answer must state and log as its own.
 */
function comparable(exchange: Exchange, test: Case): Exchange {
  const same = comparableAs(
    exchange,
    test.freshRequestId || test.requestId !== undefined ? undefined : REQUEST_ID,
  );
  const length = Buffer.byteLength(exchange.body);
  const stated = same.headers["content-length"];
  if (stated !== undefined) expect(Number(stated)).toBe(length);
  return {
    ...same,
    headers: stated === undefined ? same.headers : { ...same.headers, "content-length": "<length>" },
    body: same.body.replace(/"durationMs":[0-9.e+-]+/g, '"durationMs":0'),
    log: same.log.map((line) => {
      if (line.event !== "http.request") return line;
      expect(line.bytes).toBe(length);
      return { ...line, bytes: "<length>" };
    }),
  };
}

describe("the direct invoke's fast route against its Hono route", () => {
  it.each(CASES)("$name: claimed as the table says", async (test) => {
    const body = bodyOf(test);
    const request = new Request(`http://localhost${test.path ?? ADD}`, {
      method: test.method ?? "POST",
      headers: await headersOf(test, body),
      ...(body === undefined ? {} : { body }),
    });
    const route = fastInvoke(services.tools, services.dispatcher, services.verifier);
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
});
