import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../functions/api/auth";
import { testApp } from "./support/app";
import { freePort, type LocalServer, startLocalServer } from "./support/local-server";
import { initializeMessage } from "./support/mcp-messages";
import { type MockIssuer, startMockIssuer } from "./support/oidc";

const T = "/v1/tenants/demo/projects/hello";

/**
 * An MCP client's OAuth state, as a desktop client keeps it: pre-registered with the mock issuer
 * (it has no dynamic registration); the "browser" follows the authorization redirect and keeps the code.
 */
class TestOAuthClient implements OAuthClientProvider {
  #tokens: OAuthTokens | undefined;
  #verifier = "";
  code: string | undefined;
  authorizationUrl: URL | undefined;
  readonly redirectUrl = "http://127.0.0.1:9/callback";
  readonly clientMetadata = { redirect_uris: [this.redirectUrl], client_name: "vance-test" };
  clientInformation() {
    return { client_id: "vance-test" };
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    const answer = await fetch(url, { redirect: "manual" });
    this.code = new URL(answer.headers.get("location")!).searchParams.get("code") ?? undefined;
  }
}

describe("the MCP SDK client's OAuth flow against a real authorization server", () => {
  let idp: MockIssuer;
  let base: string;
  let close: () => Promise<void>;
  /** What the authorization server was asked for, by authorization code. */
  const asked = new Map<string, { scope: string | undefined; resource: string | undefined }>();

  beforeAll(async () => {
    idp = await startMockIssuer();
    // An issuer grants what was asked at authorization, for the resource named (RFC 8707).
    idp.service.on(
      "beforeAuthorizeRedirect",
      (redirect: { url: URL }, req: { query: Record<string, string> }) => {
        asked.set(redirect.url.searchParams.get("code")!, {
          scope: req.query.scope,
          resource: req.query.resource,
        });
      },
    );
    idp.service.on(
      "beforeTokenSigning",
      (token: { payload: Record<string, unknown> }, req: { body: Record<string, string> }) => {
        const grant = asked.get(req.body.code ?? "");
        if (grant) Object.assign(token.payload, { scope: grant.scope, aud: req.body.resource });
      },
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const { app } = await testApp({
      env: {
        VANCE_LOCAL_TOKENS: "false",
        VANCE_TOKEN_ISSUERS: JSON.stringify([{ issuer: idp.url, audience: base }]),
        // What clients reach: the metadata is built from it, never from the request's Host.
        VANCE_PUBLIC_URL: base,
      },
    });
    const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    expect((server.address() as AddressInfo).port).toBe(port);
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close?.();
    await idp?.stop();
  });

  it("discovers the issuer from the service's metadata, signs in there, and then lists the tools", async () => {
    const url = new URL(`${base}${T}/mcp?add=doc_getting_started`);
    const provider = new TestOAuthClient();
    const client = new Client({ name: "oauth-test", version: "1.0.0" });
    await expect(
      client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    ).rejects.toThrow(UnauthorizedError);
    // The client went to the issuer the metadata names, asking for the endpoint's scopes and resource.
    expect(provider.authorizationUrl?.origin).toBe(idp.url);
    expect(provider.code).toBeDefined();
    expect(asked.get(provider.code!)).toEqual({
      scope: "vance:read vance:tenant:demo",
      resource: `${base}${T}/mcp`,
    });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(provider.code!);
    expect(provider.tokens()?.access_token).toBeDefined();
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("doc_getting_started");
    await client.close();
    // The token is bound to that endpoint: the rest of the API refuses it.
    const elsewhere = await fetch(`${base}${T}/tools`, {
      headers: { authorization: `Bearer ${provider.tokens()!.access_token}` },
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("mcp-remote (docs/mcp.md's Claude Desktop bridge) with an expired token", () => {
  let server: LocalServer;
  let home: string;
  beforeAll(async () => {
    server = await startLocalServer();
    home = mkdtempSync(join(tmpdir(), "vance-mcp-remote-"));
  });
  afterAll(async () => {
    await server?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("shows an error that names the token and says how to get a new one", async () => {
    const secret = readFileSync(join(server.dataDir, "jwt-secret"), "utf8").trim();
    const expired = await mintToken(secret, { tenant: "demo", roles: ["read"] }, -60);
    // As claude_desktop_config.json runs it: the URL, --allow-http, the header from the environment.
    const child = spawn(
      process.execPath,
      [
        join(process.cwd(), "node_modules/mcp-remote/dist/proxy.js"),
        `${server.base}${T}/mcp?add=doc_getting_started,@docs&models=openai/gpt-4.1`,
        "--allow-http",
        "--header",
        "Authorization:${VANCE_AUTH}",
      ],
      {
        env: { ...process.env, HOME: home, VANCE_AUTH: `Bearer ${expired}` },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdin.write(`${JSON.stringify(initializeMessage("claude"))}\n`);
    const exit = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGTERM");
        resolve(null);
      }, 50_000);
      child.on("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(stderr).toMatch(
      /The token sent in the Authorization header was refused: the token expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\. This server's development issuer hands out no tokens over OAuth: mint one with 'npm run token/,
    );
    // It gives up rather than wait for a browser sign-in that cannot come.
    expect(exit).not.toBeNull();
    expect(exit).not.toBe(0);
  });
});
