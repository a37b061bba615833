import { VanceError } from "@vance/core";
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { publicBase, RESOURCE_METADATA_PATH, type TokenVerifier } from "../auth";
import { TokenRefused } from "../identity/claims";
import { IssuerUnavailable } from "../identity/issuer-keys";
import { describe, jsonResponse, type Operation, pathParam } from "../openapi";
import { AuthorizationServerSchema, ProtectedResourceSchema } from "../responses";
import { ProjectPathSchema, params } from "../validate";

/** Where the development issuer's metadata is (RFC 8414 §3). */
const AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server";

/** What every answer of the development issuer's endpoints tells an OAuth client's user. */
const LOCAL_ISSUER_NOTE =
  "This server's development issuer hands out no tokens over OAuth: mint one with " +
  "'npm run token -- --tenant <tenant> --roles read' (or take the one npm start prints) and send it " +
  "as the header 'Authorization: Bearer <token>'";

/**
 * A refusal of the development issuer: problem+json whose `error` and `error_description`
 * (RFC 6749 §5.2, RFC 7591 §3.2.2) are what OAuth clients read and show their users.
 */
const refusal = (error: string, description: string) =>
  new VanceError("no_oauth_tokens", description, [], { error, error_description: description });

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  resource: {
    summary: "OAuth protected-resource metadata of the API (RFC 9728): who issues its tokens, which scopes",
    tag: "oauth",
    auth: false,
    responses: { 200: jsonResponse("The metadata", ProtectedResourceSchema) },
  },
  sessionEndpoint: {
    summary:
      "Protected-resource metadata of the T/mcp endpoint (RFC 9728 §3.1): its resource and the scopes for its tenant",
    tag: "oauth",
    auth: false,
    responses: { 200: jsonResponse("The metadata", ProtectedResourceSchema) },
  },
  processEndpoint: {
    summary: "Protected-resource metadata of a process's MCP endpoint (RFC 9728 §3.1)",
    tag: "oauth",
    auth: false,
    // Metadata for any process id: the endpoint it describes answers for the process.
    parameters: [pathParam("id", { type: "string", description: "the process's id" })],
    responses: { 200: jsonResponse("The metadata", ProtectedResourceSchema) },
  },
  authorizationServer: {
    summary:
      "Metadata of the development issuer (RFC 8414; only while the service's own tokens are on): its endpoints answer how to get a token",
    tag: "oauth",
    auth: false,
    responses: { 200: jsonResponse("The metadata", AuthorizationServerSchema) },
  },
} satisfies Record<string, Operation>;

/**
 * OAuth discovery for MCP clients: the protected-resource metadata (RFC 9728) of the API and of
 * each MCP endpoint, naming the trusted issuers and — while `/v1` takes the service's own tokens —
 * the service itself as a development issuer. That issuer's endpoints issue nothing; they answer
 * an OAuth error a client shows its user: why the token it sent was refused, and how to mint one.
 */
export function oauthRoutes(verifier: TokenVerifier) {
  const app = new Hono();
  // Public documents any page may read (MCP clients running in a browser discover with them).
  const anyOrigin = cors({
    origin: "*",
    allowMethods: ["GET", "POST"],
    allowHeaders: ["authorization", "content-type"],
  });
  app.use("/.well-known/*", anyOrigin);
  app.use("/oauth/*", anyOrigin);

  const metadata = (c: Context, tenant?: string) => {
    const base = publicBase(c, verifier.publicUrl);
    const path = new URL(c.req.url).pathname.slice(RESOURCE_METADATA_PATH.length);
    const scopes = verifier.scopes(tenant);
    return c.json({
      resource: `${base}${path}`,
      authorization_servers: [...verifier.issuers, ...(verifier.localTokens ? [base] : [])],
      ...(scopes.length === 0 ? {} : { scopes_supported: scopes }),
      bearer_methods_supported: ["header"],
      resource_name: "Vance Server Tools",
      resource_documentation: `${base}/docs`,
    });
  };
  const endpoint = `${RESOURCE_METADATA_PATH}/v1/tenants/:tenant/projects/:project`;
  app.get(RESOURCE_METADATA_PATH, describe(DOCS.resource), (c) => metadata(c));
  const projectPath = params(ProjectPathSchema);
  // `projectPath` first: the document lists {tenant} and {project} before {id}.
  app.get(`${endpoint}/mcp`, projectPath, describe(DOCS.sessionEndpoint), (c) =>
    metadata(c, c.req.valid("param").tenant),
  );
  app.get(`${endpoint}/processes/:id/mcp`, projectPath, describe(DOCS.processEndpoint), (c) =>
    metadata(c, c.req.valid("param").tenant),
  );

  if (!verifier.localTokens) return app;

  app.get(AUTHORIZATION_SERVER_PATH, describe(DOCS.authorizationServer), (c) => {
    const base = publicBase(c, verifier.publicUrl);
    return c.json({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      response_types_supported: ["code"],
      grant_types_supported: [],
      code_challenge_methods_supported: ["S256"],
      service_documentation: `${base}/docs`,
    });
  });
  // MCP clients register first, sending the headers they were configured with: the place to say
  // what is wrong with the token they hold. These never succeed, so `/openapi.json` leaves them
  // out (README "Identity" describes them).
  app.post("/oauth/register", async (c) => {
    throw refusal("invalid_client_metadata", `${await judgeSentToken(c, verifier)}. ${LOCAL_ISSUER_NOTE}`);
  });
  app.get("/oauth/authorize", () => {
    throw refusal("unauthorized_client", LOCAL_ISSUER_NOTE);
  });
  app.post("/oauth/token", () => {
    throw refusal("unsupported_grant_type", LOCAL_ISSUER_NOTE);
  });
  return app;
}

/** What the bearer token a client sent along is worth, in a sentence. */
async function judgeSentToken(c: Context, verifier: TokenVerifier): Promise<string> {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) return "No bearer token was sent";
  const resource = publicBase(c, verifier.publicUrl);
  try {
    const caller = await verifier.verify(match[1]!, { audience: "api", resource });
    const until = new Date(caller.expiresAt * 1000).toISOString();
    return `The token sent is valid (tenant '${caller.tenant}', roles ${caller.roles.join(",") || "none"}, until ${until}); the route it was sent to needs more (its 403 names the scope)`;
  } catch (error) {
    if (error instanceof TokenRefused)
      return `The token sent in the Authorization header was refused: ${error.message}`;
    if (error instanceof IssuerUnavailable) return `The token sent could not be checked: ${error.message}`;
    throw error;
  }
}
