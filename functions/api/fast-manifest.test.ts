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
import { fastManifest } from "./fast-manifest";
import { TokenVerifier } from "./identity/verifier";

/**
 * The manifest's fast route (`fast-manifest.ts`, before Hono) against its Hono route, over the same
 * services: every request of the table is sent to an app with the fast routes and to one without,
 * in process (`app.request`, what Lambda's adapter calls) and over `node:http` (what `npm start`
 * serves), and the two must answer the same status, headers (all but `date`) and body, and log the
 * same `http.request` line. `fast` says whether the fast route claims the request — the rest is
 * Hono's in both apps, so their answers agree by construction and the column keeps the claim honest.
 */

const T = "/v1/tenants/acme/projects/hello";
const REQUEST_ID = "parity-0001";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";

interface Case {
  readonly name: string;
  /** The path and query; `{id}` is the spawned process. */
  readonly path: string;
  readonly method?: string;
  /** The token's claims (`null`: no header); `authorization` replaces the header. */
  readonly claims?: Claims | null;
  readonly authorization?: string;
  /** The request sends no `x-request-id` (the answer's is a new UUID). */
  readonly freshRequestId?: boolean;
  readonly requestId?: string;
  readonly status: number;
  readonly code?: string;
  readonly fast: boolean;
}

const READER: Claims = { tenant: "acme", roles: ["read"] };

const CASES: readonly Case[] = [
  { name: "the manifest", path: `${T}/processes/{id}/manifest`, status: 200, fast: true },
  {
    name: "anthropic's wire format",
    path: `${T}/processes/{id}/manifest?format=anthropic`,
    status: 200,
    fast: true,
  },
  {
    name: "a skill tool (?with=)",
    path: `${T}/processes/{id}/manifest?with=whoami`,
    status: 200,
    fast: true,
  },
  {
    name: "the name lists kept (?names=)",
    path: `${T}/processes/{id}/manifest?names={names}`,
    status: 200,
    fast: true,
  },
  {
    name: "a stale ?names=",
    path: `${T}/processes/{id}/manifest?names=stale&format=openai`,
    status: 200,
    fast: true,
  },
  { name: "an empty ?names=", path: `${T}/processes/{id}/manifest?names=`, status: 200, fast: true },
  {
    name: "an engine's token (--processes)",
    path: `${T}/processes/{id}/manifest`,
    claims: { ...READER, reach: "processes" },
    status: 200,
    fast: true,
  },
  {
    name: "a platform token",
    path: `${T}/processes/{id}/manifest`,
    claims: { tenant: "*", roles: ["read"] },
    status: 200,
    fast: true,
  },
  {
    name: "no x-request-id",
    path: `${T}/processes/{id}/manifest`,
    freshRequestId: true,
    status: 200,
    fast: true,
  },
  {
    name: "an x-request-id not kept",
    path: `${T}/processes/{id}/manifest`,
    requestId: "no spaces please",
    status: 200,
    fast: true,
  },
  {
    name: "no token",
    path: `${T}/processes/{id}/manifest`,
    claims: null,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "no token, no x-request-id",
    path: `${T}/processes/{id}/manifest`,
    claims: null,
    freshRequestId: true,
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "another scheme",
    path: `${T}/processes/{id}/manifest`,
    authorization: "Basic YTpi",
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "a token that is no JWT",
    path: `${T}/processes/{id}/manifest`,
    authorization: "Bearer not.a.jwt",
    status: 401,
    code: "unauthenticated",
    fast: true,
  },
  {
    name: "another tenant's token",
    path: `${T}/processes/{id}/manifest`,
    claims: { tenant: "other", roles: ["read"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a token of another project",
    path: `${T}/processes/{id}/manifest`,
    claims: { ...READER, project: "elsewhere" },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a token without read",
    path: `${T}/processes/{id}/manifest`,
    claims: { tenant: "acme", roles: ["write"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a skill tool outside the allow set",
    path: `${T}/processes/{id}/manifest?with=doc_nowhere`,
    status: 403,
    code: "tool_not_allowed",
    fast: true,
  },
  {
    name: "no such process",
    path: `${T}/processes/${UNKNOWN}/manifest`,
    status: 404,
    code: "process_not_found",
    fast: true,
  },
  {
    name: "no such process, another tenant's token",
    path: `${T}/processes/${UNKNOWN}/manifest`,
    claims: { tenant: "other", roles: ["read"] },
    status: 403,
    code: "forbidden",
    fast: true,
  },
  {
    name: "a bad format",
    path: `${T}/processes/{id}/manifest?format=xml`,
    status: 400,
    code: "invalid_format",
    fast: false,
  },
  {
    name: "format twice",
    path: `${T}/processes/{id}/manifest?format=openai&format=anthropic`,
    status: 400,
    code: "invalid_format",
    fast: false,
  },
  {
    name: "a bad format, no token",
    path: `${T}/processes/{id}/manifest?format=xml`,
    claims: null,
    status: 401,
    code: "unauthenticated",
    fast: false,
  },
  {
    name: "a bad process id",
    path: `${T}/processes/not_an_id/manifest`,
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  {
    name: "a bad tenant id",
    path: "/v1/tenants/ACME/projects/hello/processes/{id}/manifest",
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  {
    name: "a bad tenant id, no token",
    path: "/v1/tenants/ACME/projects/hello/processes/{id}/manifest",
    claims: null,
    status: 400,
    code: "invalid_id",
    fast: false,
  },
  { name: "an unknown parameter", path: `${T}/processes/{id}/manifest?verbose=1`, status: 200, fast: false },
  {
    name: "an encoded parameter",
    path: `${T}/processes/{id}/manifest?with=whoami%2Cweb_search`,
    status: 200,
    fast: false,
  },
  {
    name: "an encoded path",
    path: `/v1/tenants/ac%6De/projects/hello/processes/{id}/manifest`,
    status: 200,
    fast: false,
  },
  {
    name: "a trailing slash",
    path: `${T}/processes/{id}/manifest/`,
    status: 404,
    code: "not_found",
    fast: false,
  },
  { name: "HEAD", path: `${T}/processes/{id}/manifest`, method: "HEAD", status: 200, fast: false },
];

let services: Awaited<ReturnType<typeof testApp>>["services"];
let apps: { readonly fast: ReturnType<typeof createApp>; readonly hono: ReturnType<typeof createApp> };
let servers: { readonly fast: string; readonly hono: string };
const harness = new ParityHarness();
let processId = "";
let namesVersion = "";

beforeAll(async () => {
  ({ services } = await testApp({ logger: harness.logger }));
  apps = { fast: createApp(services), hono: createApp(services, { fastRoutes: false }) };
  const spawned = await apps.hono.request(`${T}/processes`, {
    method: "POST",
    headers: {
      ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
      "content-type": "application/json",
    },
    body: JSON.stringify({ models: ["openai/gpt-4.1"], allowedToolsAdd: ["whoami", "web_search"] }),
  });
  expect(spawned.status).toBe(201);
  processId = ((await spawned.json()) as { processId: string }).processId;
  const first = await apps.hono.request(`${T}/processes/${processId}/manifest`, {
    headers: await bearer(READER),
  });
  namesVersion = ((await first.json()) as { namesVersion: string }).namesVersion;
  servers = { fast: await harness.listen(apps.fast), hono: await harness.listen(apps.hono) };
});

afterAll(async () => {
  await harness.stop();
  await closeTestApps();
});

async function headersOf(test: Case): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (!test.freshRequestId) headers["x-request-id"] = test.requestId ?? REQUEST_ID;
  if (test.authorization !== undefined) headers.authorization = test.authorization;
  else if (test.claims !== null) {
    headers.authorization = `Bearer ${await mintToken(SECRET, test.claims ?? READER, 3600)}`;
  }
  return headers;
}

const pathOf = (test: Case) => test.path.replace("{id}", processId).replace("{names}", namesVersion);

/** The request a case sends. */
async function sentOf(
  test: Case,
): Promise<{ path: string; method: string; headers: Record<string, string> }> {
  return { path: pathOf(test), method: test.method ?? "GET", headers: await headersOf(test) };
}

const inProcess = async (app: ReturnType<typeof createApp>, test: Case, env?: unknown): Promise<Exchange> =>
  harness.inProcess(app, await sentOf(test), env);
const overHttp = async (base: string, test: Case): Promise<Exchange> =>
  harness.overHttp(base, await sentOf(test));
/** A request id the service keeps (none sent, or one it replaces, gets a new UUID). */
const comparable = (exchange: Exchange, test: Case): Exchange =>
  comparableAs(exchange, test.freshRequestId || test.requestId !== undefined ? undefined : REQUEST_ID);

describe("the manifest's fast route against its Hono route", () => {
  it.each(CASES)("$name: claimed as the table says", async (test) => {
    const request = new Request(`http://localhost${pathOf(test)}`, {
      method: test.method ?? "GET",
      headers: await headersOf(test),
    });
    const route = fastManifest(services.processes, services.verifier);
    expect(route(request, undefined) !== undefined).toBe(test.fast);
  });

  it.each(CASES)("$name: the same answer and log line in process (app.request)", async (test) => {
    const hono = await inProcess(apps.hono, test);
    const fast = await inProcess(apps.fast, test);
    expectAnswer(hono, test);
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
  });

  it.each(CASES)("$name: the same answer and log line on the wire (node:http)", async (test) => {
    const hono = await overHttp(servers.hono, test);
    const fast = await overHttp(servers.fast, test);
    expectAnswer(hono, test);
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
  });

  it("in Lambda (no public URL set), a refusal points at the function URL's domain from the event", async () => {
    const verifier = new TokenVerifier(
      { secret: SECRET, localTokens: true, issuers: [] },
      { logger: harness.logger },
    );
    const lambda = { ...services, verifier };
    const env = { event: { requestContext: { domainName: "abc123.lambda-url.eu-west-1.on.aws" } } };
    const test: Case = {
      name: "lambda",
      path: `${T}/processes/{id}/manifest`,
      claims: null,
      status: 401,
      fast: true,
    };
    const hono = await inProcess(createApp(lambda, { fastRoutes: false }), test, env);
    const fast = await inProcess(createApp(lambda), test, env);
    expect(hono.headers["www-authenticate"]).toContain(
      'resource_metadata="https://abc123.lambda-url.eu-west-1.on.aws/.well-known/oauth-protected-resource"',
    );
    expect(comparable(fast, test)).toEqual(comparable(hono, test));
    const served = await inProcess(createApp(lambda), { ...test, claims: READER }, env);
    expect(served.status).toBe(200);
  });

  it("answers the Hono route's bytes, the token's signature verified at its first use only", async () => {
    // A subject of its own: no other test presented this token.
    const headers = await bearer({ ...READER, sub: "verified-once" });
    const before = services.verifier.cacheReports().verifiedTokens!;
    const path = `${T}/processes/${processId}/manifest`;
    const hono = Buffer.from(await (await apps.hono.request(path, { headers })).arrayBuffer());
    for (let turn = 0; turn < 3; turn++) {
      const fast = Buffer.from(await (await apps.fast.request(path, { headers })).arrayBuffer());
      expect(fast.equals(hono)).toBe(true);
    }
    const after = services.verifier.cacheReports().verifiedTokens!;
    expect(after.misses - before.misses).toBe(1);
    expect(after.hits - before.hits).toBe(3);
  });
});
