import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type MutableToken, OAuth2Issuer, OAuth2Service } from "oauth2-mock-server";

/** A real OIDC/OAuth server (npm `oauth2-mock-server`) on 127.0.0.1, with its requests counted. */
export interface MockIssuer {
  /** Its issuer URL (`iss`), `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly issuer: OAuth2Issuer;
  readonly service: OAuth2Service;
  /** Requests received, by path. */
  readonly requests: Map<string, number>;
  /**
   * What its `/jwks` serves: every key but the `hidden` kids; 500 while `failing`; `body` instead
   * when set (a hostile or broken answer).
   */
  readonly jwks: { failing: boolean; hidden: Set<string>; body: string | undefined };
  /** When set, its discovery document names this `jwks_uri` (a hostile or misconfigured issuer). */
  readonly discovery: { jwksUri: string | undefined };
  /** A token signed with its (next, or `kid`'s) key: `exp` in `expiresIn` seconds; `claims` merged in. */
  token(claims: Record<string, unknown>, options?: { expiresIn?: number; kid?: string }): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a mock issuer with one key for `algorithm`. */
export async function startMockIssuer(algorithm: "RS256" | "ES256" | "EdDSA" = "RS256"): Promise<MockIssuer> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate(algorithm);
  const service = new OAuth2Service(issuer);
  const requests = new Map<string, number>();
  const jwks = { failing: false, hidden: new Set<string>(), body: undefined as string | undefined };
  const discovery = { jwksUri: undefined as string | undefined };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    if (path === "/.well-known/openid-configuration" && discovery.jwksUri !== undefined) {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer: issuer.url, jwks_uri: discovery.jwksUri }));
      return;
    }
    if (path === "/jwks" && (jwks.failing || jwks.hidden.size > 0 || jwks.body !== undefined)) {
      if (jwks.failing) {
        res.writeHead(500).end();
        return;
      }
      if (jwks.body !== undefined) {
        res.writeHead(200, { "content-type": "application/json" }).end(jwks.body);
        return;
      }
      const keys = (issuer.keys.toJSON() as { kid: string }[]).filter((key) => !jwks.hidden.has(key.kid));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys }));
      return;
    }
    service.requestHandler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuer.url = url;
  return {
    url,
    issuer,
    service,
    requests,
    jwks,
    discovery,
    token: (claims, options = {}) =>
      issuer.buildToken({
        ...(options.kid === undefined ? {} : { kid: options.kid }),
        expiresIn: options.expiresIn ?? 3600,
        scopesOrTransform: (_header: MutableToken["header"], payload: MutableToken["payload"]) => {
          Object.assign(payload, claims);
        },
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
