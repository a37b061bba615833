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
  /** What its `/jwks` serves: every key, or answers 500 while `failing`; `hidden` kids are left out. */
  readonly jwks: { failing: boolean; hidden: Set<string> };
  /** A token signed with its (next, or `kid`'s) key: `exp` in `expiresIn` seconds; `claims` merged in. */
  token(claims: Record<string, unknown>, options?: { expiresIn?: number; kid?: string }): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a mock issuer with one RS256 key. */
export async function startMockIssuer(): Promise<MockIssuer> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate("RS256");
  const service = new OAuth2Service(issuer);
  const requests = new Map<string, number>();
  const jwks = { failing: false, hidden: new Set<string>() };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    if (path === "/jwks" && (jwks.failing || jwks.hidden.size > 0)) {
      if (jwks.failing) {
        res.writeHead(500).end();
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
