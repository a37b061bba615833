import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockIssuer, startMockIssuer } from "../support/oidc";
import { startTarget, type Target } from "./support";

/** What an internal host answers, were it ever read: no caller may see it. */
const INTERNAL = "INTERNAL-ONLY-7f3a: admin console, do not expose";

/** An HTTP server on `host` answering every request with `INTERNAL` (status 500), its requests counted. */
async function internalHost(
  host: string,
): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests++;
    res.writeHead(500, { "content-type": "text/plain" }).end(INTERNAL);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 35 item 5 against the real server: the key set an issuer's discovery document names on
 * another origin is read through the tenants' network guard (the target allows 127.0.0.1 only),
 * and an anonymous caller learns nothing of what any host answered — a 503 `issuer_unavailable`
 * or a 401 `unauthenticated` with a generic text, the details in the service's log alone.
 */
describe("attack suite: an issuer's discovery naming the key set on another host", () => {
  let target: Target;
  /** Its discovery names the cloud metadata address. */
  let toMetadata: MockIssuer;
  /** Its discovery names a loopback host the network guard does not allow (127.0.0.2). */
  let toLoopback: MockIssuer;
  /** Its discovery names another server on the allowed 127.0.0.1, which answers an internal page. */
  let toAllowed: MockIssuer;
  /** An ordinary issuer: its key set on its own origin. */
  let honest: MockIssuer;
  let loopbackHost: Awaited<ReturnType<typeof internalHost>>;
  let allowedHost: Awaited<ReturnType<typeof internalHost>>;
  const T = "/v1/tenants/acme/projects/shop";
  const scope = "vance:read vance:tenant:acme";

  beforeAll(async () => {
    [toMetadata, toLoopback, toAllowed, honest] = await Promise.all([
      startMockIssuer(),
      startMockIssuer(),
      startMockIssuer(),
      startMockIssuer(),
    ]);
    [loopbackHost, allowedHost] = await Promise.all([internalHost("127.0.0.2"), internalHost("127.0.0.1")]);
    toMetadata.discovery.jwksUri = "http://169.254.169.254/latest/meta-data/jwks";
    toLoopback.discovery.jwksUri = `${loopbackHost.url}/jwks`;
    toAllowed.discovery.jwksUri = `${allowedHost.url}/jwks`;
    const issuers = [toMetadata, toLoopback, toAllowed, honest].map((issuer) => ({
      issuer: issuer.url,
      audience: "vance",
    }));
    target = await startTarget({ VANCE_TOKEN_ISSUERS: JSON.stringify(issuers) });
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
    await Promise.all([
      ...[toMetadata, toLoopback, toAllowed, honest].map((issuer) => issuer?.stop()),
      loopbackHost?.close(),
      allowedHost?.close(),
    ]);
  });

  /** An anonymous request with `token`: its status and body text. */
  const request = async (token: string) => {
    const response = await fetch(`${target.base}${T}/tools`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      status: response.status,
      challenge: response.headers.get("www-authenticate") ?? "",
      text: await response.text(),
    };
  };

  /** The log's `auth.issuer_keys_failed` lines for `issuer`. */
  const failures = (issuer: MockIssuer) =>
    target.logs.filter((line) => line.event === "auth.issuer_keys_failed" && line.issuer === issuer.url);

  it.each([
    ["the cloud metadata address", () => toMetadata, () => "169.254.169.254", () => 0],
    [
      "a loopback host the guard does not allow",
      () => toLoopback,
      () => loopbackHost.url,
      () => loopbackHost.requests(),
    ],
  ])(
    "a key set on %s is refused by the network guard, never connected: 503 with a generic body",
    async (_what, issuer, host, hits) => {
      const token = await issuer().token({ aud: "vance", scope });
      const answer = await target.attack(
        `token of an issuer whose discovery names a key set on ${_what}`,
        () => request(token),
        (result) => `${result.status}`,
      );
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text)).toMatchObject({
        code: "issuer_unavailable",
        detail:
          "the keys of the token's issuer could not be read; try again shortly (the service's log says why)",
      });
      expect(answer.text).not.toContain(host());
      expect(answer.text).not.toContain("/jwks");
      expect(hits()).toBe(0);
      await expect
        .poll(() => failures(issuer()))
        .toEqual([expect.objectContaining({ error: expect.stringContaining("refusing to connect") })]);
    },
  );

  it("a key set on an allowed host that answers an internal page: the 503 tells nothing of the answer", async () => {
    const token = await toAllowed.token({ aud: "vance", scope });
    const answer = await target.attack(
      "token of an issuer whose discovery names an allowed host answering an internal page",
      () => request(token),
      (result) => `${result.status}`,
    );
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text)).toMatchObject({ code: "issuer_unavailable" });
    expect(allowedHost.requests()).toBe(1);
    for (const detail of [INTERNAL, "HTTP 500", allowedHost.url, "/jwks"])
      expect(answer.text).not.toContain(detail);
    // The log has what happened, for the operator.
    await expect
      .poll(() => failures(toAllowed))
      .toEqual([expect.objectContaining({ error: expect.stringContaining("500") })]);
  });

  it("a token naming a key the issuer lacks is a 401 that says nothing of the key reads", async () => {
    // The issuer's keys are read once (a valid token), then a token names a key its set never holds.
    expect((await request(await honest.token({ aud: "vance", scope }))).status).toBe(200);
    const made = await honest.issuer.keys.generate("RS256");
    honest.jwks.hidden.add(made.kid);
    const unknown = await honest.token({ aud: "vance", scope }, { kid: made.kid });
    const answer = await target.attack(
      "token naming a key its issuer's set lacks",
      () => request(unknown),
      (result) => `${result.status}`,
    );
    expect(answer.status).toBe(401);
    const expected = `issuer '${honest.url}' has no key '${made.kid}' for RS256`;
    expect(JSON.parse(answer.text)).toMatchObject({ code: "unauthenticated", detail: expected });
    expect(answer.challenge).toContain(`error_description="${expected}"`);
    for (const detail of ["s ago", "were read", "/jwks", "openid-configuration"]) {
      expect(answer.text).not.toContain(detail);
      expect(answer.challenge).not.toContain(detail);
    }
  });
});
