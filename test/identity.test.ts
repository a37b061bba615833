import { createPublicKey } from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { KEYS_COOLDOWN_MS } from "../functions/api/identity/issuer-keys";
import { SECRET, testApp } from "./support/app";
import { initializeMessage } from "./support/mcp-messages";
import { type MockIssuer, startMockIssuer } from "./support/oidc";

const T = "/v1/tenants/acme/projects/shop";
const BASE = "http://localhost";

let idp: MockIssuer;
let untrusted: MockIssuer;

beforeAll(async () => {
  [idp, untrusted] = await Promise.all([startMockIssuer(), startMockIssuer()]);
});
afterAll(async () => {
  await Promise.all([idp.stop(), untrusted.stop()]);
});

/** An app trusting `idp` (scopes map tenant and roles), on a clock the test moves. */
async function appTrusting(env: Record<string, string> = {}, issuer: Record<string, unknown> = {}) {
  const clock = { t: Date.now() };
  const issuers = [{ issuer: idp.url, audience: ["vance", BASE], ...issuer }];
  const { app, services } = await testApp({
    env: { VANCE_TOKEN_ISSUERS: JSON.stringify(issuers), ...env },
    now: () => clock.t,
  });
  return { app, services, clock };
}

const as = (token: string) => ({ authorization: `Bearer ${token}` });
const jwksReads = () => idp.requests.get("/jwks") ?? 0;

/** The parameters of a `WWW-Authenticate: Bearer …` challenge. */
function challenge(response: Response): Record<string, string> {
  const header = response.headers.get("www-authenticate") ?? "";
  expect(header.startsWith("Bearer")).toBe(true);
  return Object.fromEntries(
    [...header.matchAll(/(\w+)="([^"]*)"/g)].map(([, name, value]) => [name!, value!]),
  );
}

/** Expects a 401 `invalid_token` whose description (header and problem detail) says `reason`. */
async function expectInvalidToken(response: Response, reason: string | RegExp): Promise<void> {
  expect(response.status).toBe(401);
  const params = challenge(response);
  expect(params.error).toBe("invalid_token");
  expect(params.error_description).toMatch(reason);
  expect(params.resource_metadata).toBe(`${BASE}/.well-known/oauth-protected-resource`);
  const problem = await response.json();
  expect(problem).toMatchObject({ code: "unauthenticated", detail: params.error_description });
}

describe("tokens of a trusted issuer (OIDC discovery and JWKS of a real mock server)", () => {
  it("are accepted with the tenant and roles their scopes map to: one issuer serves many tenants", async () => {
    const { app } = await appTrusting();
    const acme = await idp.token({ aud: "vance", scope: "openid vance:read vance:write vance:tenant:acme" });
    expect((await app.request(`${T}/tools`, { headers: as(acme) })).status).toBe(200);
    const put = await app.request(`${T}/tools/greeting`, {
      method: "PUT",
      headers: { ...as(acme), "content-type": "application/yaml" },
      body: "type: doc_lookup\ndescription: Greets\nparameters: { path: documents/hello.md }\n",
    });
    expect(put.status).toBe(201);
    // Another tenant of the same issuer reads its own projects, not acme's.
    const globex = await idp.token({ aud: "vance", scope: "vance:read vance:tenant:globex" });
    expect(
      (await app.request("/v1/tenants/globex/projects/shop/tools", { headers: as(globex) })).status,
    ).toBe(200);
    const foreign = await app.request(`${T}/tools`, { headers: as(globex) });
    expect(foreign.status).toBe(403);
    expect(challenge(foreign)).toMatchObject({ error: "insufficient_scope", scope: "vance:tenant:acme" });
    // A role the scopes do not grant: 403 naming the scope needed.
    const secrets = await app.request("/v1/tenants/acme/secrets", { headers: as(acme) });
    expect(secrets.status).toBe(403);
    expect(challenge(secrets)).toMatchObject({
      error: "insufficient_scope",
      error_description: "this route needs the 'admin' role",
      scope: "vance:admin",
    });
    // Discovery and the key set were read once for all of it.
    expect(idp.requests.get("/.well-known/openid-configuration")).toBeGreaterThanOrEqual(1);
  });

  it("are mapped from claims where the issuer puts tenant, roles and audience in claims (Cognito-style)", async () => {
    const { app } = await appTrusting(
      {},
      {
        audience: "app-client-1",
        audienceClaim: "client_id",
        tenantClaim: "custom:tenant",
        rolesClaim: "cognito:groups",
        scopePrefix: "vance-",
      },
    );
    // Cognito's access tokens carry no `aud`: the app client is `client_id`.
    const token = await idp.token({
      client_id: "app-client-1",
      "custom:tenant": "acme",
      "cognito:groups": ["vance-read", "staff"],
    });
    expect((await app.request(`${T}/tools`, { headers: as(token) })).status).toBe(200);
    const write = await app.request(`${T}/tools/x`, { method: "DELETE", headers: as(token) });
    expect(write.status).toBe(403);
    expect(challenge(write).scope).toBe("vance-write");
    const none = await idp.token({ client_id: "app-client-1", "cognito:groups": ["vance-read"] });
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(none) }),
      "the token names no tenant (claim 'custom:tenant')",
    );
    const otherClient = await idp.token({
      client_id: "app-client-2",
      "custom:tenant": "acme",
      "cognito:groups": ["vance-read"],
    });
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(otherClient) }),
      /^the token's audience \('app-client-2'\) is not this service/,
    );
  });

  it("refuses platform tokens (tenant '*') unless the issuer is trusted with them", async () => {
    const platform = await idp.token({ aud: "vance", scope: "vance:admin vance:tenant:*" });
    const { app } = await appTrusting();
    await expectInvalidToken(
      await app.request("/v1/tenants/acme/secrets", { headers: as(platform) }),
      `issuer '${idp.url}' may not issue platform tokens (tenant '*')`,
    );
    const { app: trusting } = await appTrusting({}, { platform: true });
    expect((await trusting.request("/v1/tenants/acme/secrets", { headers: as(platform) })).status).toBe(200);
  });

  it("refuses a wrong audience, a wrong issuer and an expired token, each with invalid_token and its reason", async () => {
    const { app } = await appTrusting();
    const tools = (token: string) => app.request(`${T}/tools`, { headers: as(token) });
    const scope = "vance:read vance:tenant:acme";
    await expectInvalidToken(
      await tools(await idp.token({ aud: "https://other.example", scope })),
      /^the token's audience \('https:\/\/other\.example'\) is not this service \(accepted: vance, http:\/\/localhost/,
    );
    await expectInvalidToken(
      await tools(await untrusted.token({ aud: "vance", scope })),
      `the token's issuer '${untrusted.url}' is not trusted here (trusted: ${idp.url})`,
    );
    await expectInvalidToken(
      await tools(await idp.token({ aud: "vance", scope }, { expiresIn: -3600 })),
      /^the token expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    // The service's own tokens are off here: the app was configured with an issuer only.
    const { app: production } = await appTrusting({ VANCE_LOCAL_TOKENS: "false" });
    const local = await mintToken(SECRET, { tenant: "acme", roles: ["read"] }, 600);
    await expectInvalidToken(
      await production.request(`${T}/tools`, { headers: as(local) }),
      `the service's own tokens (HS256, no 'iss') are not accepted here (VANCE_LOCAL_TOKENS is off); use a token of ${idp.url}`,
    );
  });

  it("refuses alg 'none' and an HS256 token signed with the issuer's public key (algorithm confusion)", async () => {
    const { app } = await appTrusting();
    const [key] = idp.issuer.keys.toJSON() as { kid: string; kty: string; n: string; e: string }[];
    const payload = {
      iss: idp.url,
      aud: "vance",
      scope: "vance:read vance:write vance:admin vance:tenant:acme",
      exp: Math.floor(Date.now() / 1000) + 600,
    };
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const unsigned = `${b64({ alg: "none", kid: key!.kid })}.${b64(payload)}.`;
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(unsigned) }),
      `the token's algorithm 'none' is not one issuer '${idp.url}' signs with (RS256)`,
    );
    const pem = createPublicKey({ key: key!, format: "jwk" }).export({ type: "spki", format: "pem" });
    const confused = await new SignJWT(payload)
      .setProtectedHeader({ alg: "HS256", kid: key!.kid })
      .sign(new TextEncoder().encode(String(pem)));
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(confused) }),
      `the token's algorithm 'HS256' is not one issuer '${idp.url}' signs with (RS256)`,
    );
    // Without `iss` it is judged as one of the service's own tokens: a signature that does not verify.
    const { iss: _iss, ...unissued } = payload;
    const stripped = await new SignJWT({ ...unissued, tenant: "acme", roles: ["admin"] })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(String(pem)));
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(stripped) }),
      "the token's signature does not verify",
    );
  });

  it("picks up a rotated key without a restart, and stops accepting a key the issuer withdrew", async () => {
    const { app, clock } = await appTrusting();
    const scope = "vance:read vance:tenant:acme";
    const old = await idp.token({ aud: "vance", scope });
    expect((await app.request(`${T}/tools`, { headers: as(old) })).status).toBe(200);
    const before = jwksReads();
    const rotated = await idp.issuer.keys.generate("RS256");
    const fresh = await idp.token({ aud: "vance", scope }, { kid: rotated.kid });
    // Within the cooldown the cached set is all there is: no read, a clear refusal.
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(fresh) }),
      new RegExp(`^issuer '${idp.url}' has no key '${rotated.kid}' for RS256$`),
    );
    expect(jwksReads()).toBe(before);
    // After it, the first token naming the new key reads the set once and is accepted.
    clock.t += KEYS_COOLDOWN_MS;
    expect((await app.request(`${T}/tools`, { headers: as(fresh) })).status).toBe(200);
    expect(jwksReads()).toBe(before + 1);
    expect((await app.request(`${T}/tools`, { headers: as(fresh) })).status).toBe(200);
    expect(jwksReads()).toBe(before + 1);
    // The issuer withdraws the old key; once the set is read again, a token signed with it no
    // longer passes, though it verified (and was remembered) before.
    const [oldKey] = idp.issuer.keys.toJSON() as { kid: string }[];
    idp.jwks.hidden.add(oldKey!.kid);
    try {
      clock.t += KEYS_COOLDOWN_MS;
      const another = await idp.issuer.keys.generate("RS256");
      const third = await idp.token({ aud: "vance", scope }, { kid: another.kid });
      expect((await app.request(`${T}/tools`, { headers: as(third) })).status).toBe(200);
      await expectInvalidToken(
        await app.request(`${T}/tools`, { headers: as(old) }),
        new RegExp(`^issuer '${idp.url}' has no key '${oldKey!.kid}'`),
      );
    } finally {
      idp.jwks.hidden.clear();
    }
  });

  it("answers 503 issuer_unavailable while the issuer's keys cannot be read, without asking again within the cooldown", async () => {
    const { app, clock } = await appTrusting();
    const token = await idp.token({ aud: "vance", scope: "vance:read vance:tenant:acme" });
    idp.jwks.failing = true;
    try {
      const before = jwksReads();
      for (let attempt = 0; attempt < 3; attempt++) {
        const answer = await app.request(`${T}/tools`, { headers: as(token) });
        expect(answer.status).toBe(503);
        // The caller may be anyone: what the issuer's host answered is for the log alone.
        const problem = await answer.json();
        expect(problem).toMatchObject({ code: "issuer_unavailable" });
        expect(problem.detail).toBe(
          "the keys of the token's issuer could not be read; try again shortly (the service's log says why)",
        );
        expect(JSON.stringify(problem)).not.toContain("HTTP 500");
        expect(JSON.stringify(problem)).not.toContain("/jwks");
        expect(JSON.stringify(problem)).not.toContain(idp.url);
      }
      expect(jwksReads()).toBe(before + 1);
      idp.jwks.failing = false;
      clock.t += KEYS_COOLDOWN_MS;
      expect((await app.request(`${T}/tools`, { headers: as(token) })).status).toBe(200);
      expect(jwksReads()).toBe(before + 2);
      // /v1/metrics takes a platform token: the service's own, as this app accepts them too.
      const platform = await mintToken(SECRET, { tenant: "*", roles: [] }, 24 * 3600);
      const metrics = await (await app.request("/v1/metrics", { headers: as(platform) })).json();
      expect(metrics.identity.issuers).toEqual([
        { issuer: idp.url, keys: expect.any(Number), reads: 2, failures: 1 },
      ]);
    } finally {
      idp.jwks.failing = false;
    }
  });
});

describe("hostile: an issuer's key set is read bounded", () => {
  it("refuses a key set over 256 KiB or over 100 keys, saying so in the log; the 503 says nothing of the answer", async () => {
    const key = (idp.issuer.keys.toJSON() as Record<string, unknown>[])[0]!;
    const cases: [string, string][] = [
      [JSON.stringify({ keys: [key], padding: "x".repeat(300 * 1024) }), "answered more than 262144 bytes"],
      [
        JSON.stringify({ keys: Array.from({ length: 101 }, (_, i) => ({ ...key, kid: `k${i}` })) }),
        "the key set holds 101 keys (at most 100)",
      ],
      ["not json", "did not answer JSON"],
    ];
    for (const [body, reason] of cases) {
      const warnings: Record<string, unknown>[] = [];
      const clock = { t: Date.now() };
      const { app } = await testApp({
        env: { VANCE_TOKEN_ISSUERS: JSON.stringify([{ issuer: idp.url, audience: "vance" }]) },
        now: () => clock.t,
        logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
      });
      idp.jwks.body = body;
      try {
        const token = await idp.token({ aud: "vance", scope: "vance:read vance:tenant:acme" });
        const answer = await app.request(`${T}/tools`, { headers: as(token) });
        expect(answer.status).toBe(503);
        expect((await answer.json()).detail).not.toContain(reason);
        expect(warnings).toEqual([
          { event: "auth.issuer_keys_failed", issuer: idp.url, error: expect.stringContaining(reason) },
        ]);
      } finally {
        idp.jwks.body = undefined;
      }
    }
  });
});

describe("hostile: RFC 9728 metadata never takes the request's Host", () => {
  it("a request for evil.example gets the configured public URL; unset, the socket the server binds", async () => {
    const { app } = await appTrusting();
    const root = await (await app.request("http://evil.example/.well-known/oauth-protected-resource")).json();
    expect(root.resource).toBe(BASE);
    expect(JSON.stringify(root)).not.toContain("evil.example");
    const refused = await app.request(`http://evil.example${T}/tools`);
    expect(challenge(refused).resource_metadata).toBe(`${BASE}/.well-known/oauth-protected-resource`);

    const { app: local } = await testApp({ env: { VANCE_PUBLIC_URL: "", HOST: "127.0.0.1", PORT: "9123" } });
    const metadata = await (
      await local.request("http://evil.example/.well-known/oauth-protected-resource")
    ).json();
    expect(metadata).toMatchObject({
      resource: "http://127.0.0.1:9123",
      authorization_servers: ["http://127.0.0.1:9123"],
    });
  });
});

describe("hostile: a discovery document naming a key set on another host", () => {
  it.each([
    ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/jwks"],
    ["another server on loopback", () => `${untrusted.url}/jwks`],
  ])("%s is not read: 503 with a generic body, the refusal in the log", async (_name, target) => {
    const warnings: Record<string, unknown>[] = [];
    const { app } = await testApp({
      env: { VANCE_TOKEN_ISSUERS: JSON.stringify([{ issuer: idp.url, audience: "vance" }]) },
      logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
    });
    idp.discovery.jwksUri = target();
    const before = untrusted.requests.get("/jwks") ?? 0;
    try {
      const token = await idp.token({ aud: "vance", scope: "vance:read vance:tenant:acme" });
      const answer = await app.request(`${T}/tools`, { headers: as(token) });
      expect(answer.status).toBe(503);
      const body = JSON.stringify(await answer.json());
      expect(body).not.toContain(target());
      expect(untrusted.requests.get("/jwks") ?? 0).toBe(before);
      expect(warnings).toEqual([
        {
          event: "auth.issuer_keys_failed",
          issuer: idp.url,
          error: expect.stringContaining("refusing to connect"),
        },
      ]);
    } finally {
      idp.discovery.jwksUri = undefined;
    }
  });

  it("a key set on the issuer's own origin is read as before", async () => {
    const { app } = await testApp({
      env: { VANCE_TOKEN_ISSUERS: JSON.stringify([{ issuer: idp.url, audience: "vance" }]) },
    });
    idp.discovery.jwksUri = `${idp.url}/jwks`;
    try {
      const token = await idp.token({ aud: "vance", scope: "vance:read vance:tenant:acme" });
      expect((await app.request(`${T}/tools`, { headers: as(token) })).status).toBe(200);
    } finally {
      idp.discovery.jwksUri = undefined;
    }
  });
});

describe("issuers signing with ES256 and EdDSA", () => {
  it("are verified with the algorithms configured, and a token of another algorithm is refused", async () => {
    const [ec, ed] = await Promise.all([startMockIssuer("ES256"), startMockIssuer("EdDSA")]);
    try {
      const issuers = [
        { issuer: ec.url, audience: "vance", algorithms: ["ES256"] },
        { issuer: ed.url, audience: "vance", algorithms: ["EdDSA"] },
      ];
      const { app } = await testApp({ env: { VANCE_TOKEN_ISSUERS: JSON.stringify(issuers) } });
      for (const issuer of [ec, ed]) {
        const token = await issuer.token({ aud: "vance", scope: "vance:read vance:tenant:acme" });
        expect((await app.request(`${T}/tools`, { headers: as(token) })).status).toBe(200);
      }
      // An RS256 key of its own does not make an ES256 issuer's token.
      const rsa = await idp.token({ iss: ec.url, aud: "vance", scope: "vance:read vance:tenant:acme" });
      const refused = await app.request(`${T}/tools`, { headers: as(rsa) });
      expect(refused.status).toBe(401);
      expect(challenge(refused).error_description).toBe(
        `the token's algorithm 'RS256' is not one issuer '${ec.url}' signs with (ES256)`,
      );
    } finally {
      await Promise.all([ec.stop(), ed.stop()]);
    }
  });
});

describe("hostile: a flood of tokens naming made-up keys", () => {
  it("costs no key-set reads beyond the first, refuses each with invalid_token, and never blocks the event loop over 1 s", async () => {
    const { app, clock } = await appTrusting();
    const scope = "vance:read vance:tenant:acme";
    // Warm: the set is read once; the cooldown since has passed, so the flood may cause one read.
    expect(
      (await app.request(`${T}/tools`, { headers: as(await idp.token({ aud: "vance", scope })) })).status,
    ).toBe(200);
    clock.t += KEYS_COOLDOWN_MS;
    const before = jwksReads();
    // One token of the attacker's own key, its header naming 1,000 different made-up kids.
    const attacker = await startMockIssuer();
    const signed = await attacker.token({ iss: idp.url, aud: "vance", scope });
    await attacker.stop();
    const body = signed.slice(signed.indexOf("."));
    const header = (index: number) =>
      Buffer.from(JSON.stringify({ alg: "RS256", kid: `made-up-${index}` })).toString("base64url");
    const tokens = Array.from({ length: 1000 }, (_, index) => `${header(index)}${body}`);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const answers = await Promise.all(
      tokens.map((token) => app.request(`${T}/tools`, { headers: as(token) })),
    );
    delay.disable();
    for (const [index, answer] of answers.entries()) {
      expect(answer.status).toBe(401);
      const params = challenge(answer);
      expect(params.error).toBe("invalid_token");
      expect(params.error_description).toMatch(new RegExp(`has no key 'made-up-${index}' for RS256`));
    }
    expect(jwksReads() - before).toBe(1);
    expect(delay.max / 1e6).toBeLessThan(1000);
  });
});

describe("tokens with narrower reach", () => {
  it("a token limited to one project reaches that project only, and no tenant-wide route", async () => {
    const { app } = await appTrusting();
    const token = await idp.token({
      aud: "vance",
      scope: "vance:read vance:admin vance:tenant:acme vance:project:shop",
    });
    expect((await app.request(`${T}/tools`, { headers: as(token) })).status).toBe(200);
    const other = await app.request("/v1/tenants/acme/projects/web/tools", { headers: as(token) });
    expect(other.status).toBe(403);
    expect(challenge(other)).toMatchObject({
      error: "insufficient_scope",
      error_description: "the token is limited to project 'shop', not 'web'",
      scope: "vance:project:web",
    });
    const tenantWide = await app.request("/v1/tenants/acme/secrets", { headers: as(token) });
    expect(tenantWide.status).toBe(403);
    expect(challenge(tenantWide).error_description).toBe(
      "the token is limited to project 'shop'; this route is the tenant's",
    );
  });

  it("an engine's token (reach processes) spawns, reads manifests and invokes, but cannot read or write documents", async () => {
    const { app } = await appTrusting();
    const issued = await idp.token({
      aud: "vance",
      scope: "vance:read vance:write vance:processes vance:tenant:acme",
    });
    const local = await mintToken(
      SECRET,
      { tenant: "acme", roles: ["read", "write"], reach: "processes" },
      600,
    );
    for (const token of [issued, local]) {
      const headers = { ...as(token), "content-type": "application/json" };
      const spawn = await app.request(`${T}/processes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ engineDefault: ["doc_getting_started"], models: [] }),
      });
      expect(spawn.status).toBe(201);
      const { processId } = await spawn.json();
      expect((await app.request(`${T}/processes/${processId}/manifest`, { headers })).status).toBe(200);
      const invoke = await app.request(`${T}/processes/${processId}/invoke`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "doc_getting_started", params: {} }),
      });
      expect(invoke.status).toBe(200);
      expect((await app.request("/v1/types", { headers })).status).toBe(200);
      for (const refused of [
        await app.request(`${T}/documents/notes.md`, {
          method: "PUT",
          headers: { ...as(token), "content-type": "text/markdown" },
          body: "x",
        }),
        await app.request(`${T}/tools`, { headers }),
        await app.request(`${T}/tools/doc_getting_started/invoke`, {
          method: "POST",
          headers,
          body: JSON.stringify({ params: {} }),
        }),
      ]) {
        expect(refused.status).toBe(403);
        expect(challenge(refused).error_description).toBe(
          "the token is limited to processes (reach 'processes'); this route is not one an engine runs processes with",
        );
      }
    }
  });

  it("a token bound to an MCP endpoint's resource (RFC 8707) serves that endpoint and nothing else", async () => {
    const { app } = await appTrusting();
    const resource = `${BASE}${T}/mcp`;
    const token = await idp.token({ aud: resource, scope: "vance:read vance:tenant:acme" });
    const initialize = await app.request(`${T}/mcp`, {
      method: "POST",
      headers: {
        ...as(token),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(initializeMessage("t")),
    });
    expect(initialize.status).toBe(200);
    await expectInvalidToken(
      await app.request(`${T}/tools`, { headers: as(token) }),
      /^the token's audience/,
    );
    // A resource URL under an origin the issuer's audience does not name is never accepted.
    const elsewhere = await idp.token({
      aud: `https://evil.example${T}/mcp`,
      scope: "vance:read vance:tenant:acme",
    });
    const refused = await app.request(`${T}/mcp`, { method: "POST", headers: as(elsewhere) });
    expect(refused.status).toBe(401);
  });
});

describe("MCP authorization discovery (RFC 9728)", () => {
  it("publishes the API's and each MCP endpoint's protected-resource metadata, naming the issuers and scopes", async () => {
    const { app } = await appTrusting({ VANCE_LOCAL_TOKENS: "false" });
    const root = await app.request("/.well-known/oauth-protected-resource");
    expect(root.status).toBe(200);
    expect(root.headers.get("access-control-allow-origin")).toBe("*");
    expect(await root.json()).toEqual({
      resource: BASE,
      authorization_servers: [idp.url],
      scopes_supported: ["vance:read", "vance:write", "vance:admin", "vance:processes"],
      bearer_methods_supported: ["header"],
      resource_name: "Vance Server Tools",
      resource_documentation: `${BASE}/docs`,
    });
    for (const path of [`${T}/mcp`, `${T}/processes/p-1/mcp`]) {
      const endpoint = await (await app.request(`/.well-known/oauth-protected-resource${path}`)).json();
      expect(endpoint).toMatchObject({
        resource: `${BASE}${path}`,
        authorization_servers: [idp.url],
        scopes_supported: ["vance:read", "vance:tenant:acme"],
      });
    }
    expect(
      (await app.request("/.well-known/oauth-protected-resource/v1/tenants/ACME/projects/shop/mcp")).status,
    ).toBe(400);
    // Production: no development issuer.
    expect((await app.request("/.well-known/oauth-authorization-server")).status).toBe(404);
    // A 401 of an MCP endpoint points at its metadata and the scopes to ask for.
    const anonymous = await app.request(`${T}/mcp`, { method: "POST" });
    expect(anonymous.status).toBe(401);
    expect(challenge(anonymous)).toEqual({
      scope: "vance:read vance:tenant:acme",
      resource_metadata: `${BASE}/.well-known/oauth-protected-resource${T}/mcp`,
    });
  });

  it("names VANCE_PUBLIC_URL as the resource when set, and in development the service itself as an issuer whose endpoints say how to get a token", async () => {
    const { app } = await testApp({ env: { VANCE_PUBLIC_URL: "https://tools.example.com/" } });
    const root = await (await app.request("/.well-known/oauth-protected-resource")).json();
    expect(root).toMatchObject({
      resource: "https://tools.example.com",
      authorization_servers: ["https://tools.example.com"],
    });
    expect(root.scopes_supported).toBeUndefined();
    const server = await (await app.request("/.well-known/oauth-authorization-server")).json();
    expect(server).toMatchObject({
      issuer: "https://tools.example.com",
      registration_endpoint: "https://tools.example.com/oauth/register",
      grant_types_supported: [],
    });
    const expired = await mintToken(SECRET, { tenant: "acme", roles: ["read"] }, -60);
    const registration = await app.request("/oauth/register", {
      method: "POST",
      headers: { ...as(expired), "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://localhost:1/callback"] }),
    });
    expect(registration.status).toBe(400);
    const refused = await registration.json();
    expect(refused).toMatchObject({ code: "no_oauth_tokens", error: "invalid_client_metadata" });
    expect(refused.error_description).toMatch(
      /^The token sent in the Authorization header was refused: the token expired at .+\. This server's development issuer hands out no tokens over OAuth: mint one with 'npm run token/,
    );
    const valid = await mintToken(SECRET, { tenant: "acme", roles: ["read"] }, 600);
    const withValid = await (
      await app.request("/oauth/register", { method: "POST", headers: as(valid) })
    ).json();
    expect(withValid.error_description).toMatch(
      /^The token sent is valid \(tenant 'acme', roles read, until /,
    );
    const token = await (await app.request("/oauth/token", { method: "POST" })).json();
    expect(token).toMatchObject({
      error: "unsupported_grant_type",
      error_description: expect.stringContaining("npm run token"),
    });
    const openApi = JSON.stringify(await (await app.request("/openapi.json")).json());
    expect(openApi).toContain("/.well-known/oauth-protected-resource");
    expect(openApi).not.toContain("/oauth/register");
  });
});

describe("settings", () => {
  it("VANCE_TOKEN_ISSUERS is validated at start, naming the field at fault", () => {
    const bad = (issuers: unknown) => () => loadConfig({ VANCE_TOKEN_ISSUERS: JSON.stringify(issuers) });
    expect(() => loadConfig({ VANCE_TOKEN_ISSUERS: "not json" })).toThrow(
      /VANCE_TOKEN_ISSUERS must be a JSON list/,
    );
    expect(bad([{ issuer: "https://idp.example" }])).toThrow(/VANCE_TOKEN_ISSUERS\.0\.audience/);
    expect(bad([{ issuer: "http://idp.example", audience: "vance" }])).toThrow(/issuer must be https/);
    expect(bad([{ issuer: "https://idp.example", audience: "vance", algorithms: ["HS256"] }])).toThrow(
      /never HS256 or none/,
    );
    expect(bad([{ issuer: "https://idp.example", audience: "vance", audiance: "typo" }])).toThrow(/audiance/);
    expect(
      loadConfig({
        VANCE_TOKEN_ISSUERS: JSON.stringify([{ issuer: "https://idp.example", audience: "vance" }]),
      }).VANCE_TOKEN_ISSUERS,
    ).toEqual([
      {
        issuer: "https://idp.example",
        audience: ["vance"],
        audienceClaim: "aud",
        algorithms: ["RS256"],
        clockSkewSeconds: 30,
        scopePrefix: "vance:",
        platform: false,
      },
    ]);
  });

  it("with the service's own tokens off, some issuer is required: otherwise no token could be verified", () => {
    expect(() => loadConfig({ VANCE_LOCAL_TOKENS: "false" })).toThrow(
      /VANCE_TOKEN_ISSUERS: required when VANCE_LOCAL_TOKENS is off/,
    );
    expect(loadConfig({}).VANCE_LOCAL_TOKENS).toBe(true);
  });
});
