import { VanceError } from "@vance/core";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { BearerError, type ChallengeContext } from "./identity/challenge";
import { type Caller, type Claims, PROCESSES_REACH, type Role, TokenRefused } from "./identity/claims";
import { IssuerUnavailable } from "./identity/issuer-keys";
import { type Audience, signLocal, type TokenVerifier } from "./identity/verifier";

export type { Caller, Claims, Role, TokenVerifier };

/** What an authenticated prefix binds (`bearer`) and what a route's `need` then sets (`claims`). */
export type AuthEnv = { Variables: { claims: Caller; bearer: Bearer } };

/** What a route needs of its caller besides a valid token. */
export interface Need {
  /** The path's tenant: the token's, or a platform token's (`tenant: "*"`). */
  readonly tenant?: string | undefined;
  /** The path's project: a token limited to a project serves that one only. */
  readonly project?: string | undefined;
  readonly role?: Role | undefined;
  /** The route changes every tenant: a platform token only. */
  readonly platformOnly?: boolean | undefined;
  /** The route is one an engine runs processes with: tokens of reach `processes` may call it. */
  readonly processes?: boolean | undefined;
}

/** How a route is authenticated besides its role. */
export interface AuthOptions {
  readonly platformOnly?: boolean;
  readonly processes?: boolean;
  /** The route is an MCP endpoint: a protected resource with metadata of its own (RFC 9728 §3.1). */
  readonly endpoint?: boolean;
}

/** The routes an engine's token (reach `processes`) may call. */
export const ENGINE = { processes: true } as const satisfies AuthOptions;

/** The path of a resource's metadata (RFC 9728 §3.1): the well-known prefix before the resource's path. */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/**
 * The service's base URL as clients reach it, for OAuth metadata (RFC 9728) and resource checks:
 * the configured one (`VANCE_PUBLIC_URL`, else the local server's socket), in Lambda without
 * one the function URL's domain from the event (AWS routed the request by it). Never the
 * request's `Host` header, which any caller writes.
 */
export function publicBase(c: Context, publicUrl: string | undefined): string {
  return publicBaseOf(c.env, publicUrl);
}

/** {@link publicBase} from the request's runtime bindings (`env`: in Lambda, its event). */
export function publicBaseOf(env: unknown, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl;
  const event = (env as { event?: { requestContext?: { domainName?: unknown } } } | undefined)?.event;
  const domain = event?.requestContext?.domainName;
  if (typeof domain === "string" && domain !== "") return `https://${domain}`;
  throw new Error("no public URL: set VANCE_PUBLIC_URL");
}

/** The bearer token of one request, verified once, on the first route that asks. */
interface Bearer {
  readonly verifier: TokenVerifier;
  caller(): Promise<Caller>;
}

/**
 * Authentication of every route under a prefix, mounted once on it (`/v1/*`): binds the token
 * verifier. Each route states what it needs with {@link need}; the token is verified when the
 * first one asks, so what answers before a route does — a 404 for no route, a 405, a CORS
 * preflight, the MCP browser guard — answers as it would without a token.
 */
export function authentication(verifier: TokenVerifier) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    let caller: Promise<Caller> | undefined;
    c.set("bearer", {
      verifier,
      caller: () => {
        caller ??= verifyBearer(c, verifier);
        return caller;
      },
    });
    await next();
  });
}

/** The request's bearer token as a caller: 401 without one, or as `authorise` refuses it. */
async function verifyBearer(c: Context, verifier: TokenVerifier): Promise<Caller> {
  return bearerCaller(
    verifier,
    c.req.header("authorization"),
    resourceOf(requestAt(c), verifier, false).resource,
  );
}

/** The caller of an `Authorization` header presented at `resource`: 401 without a bearer token. */
async function bearerCaller(
  verifier: TokenVerifier,
  authorization: string | undefined,
  resource: string,
): Promise<Caller> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? "");
  if (!match)
    throw new BearerError(401, "a bearer token is required (Authorization: Bearer <jwt>)", undefined);
  return verify(verifier, match[1]!, { audience: "api", resource });
}

/**
 * What a route needs of its caller under an authenticated prefix: the role when given, and that
 * the path's tenant (and project) is the token's. A refusal's `WWW-Authenticate` names the
 * reason (`invalid_token`, `insufficient_scope` with the scope needed) and the resource's
 * metadata. Sets `claims` for the handler.
 */
export function need(role?: Role, options: AuthOptions = {}) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    const bearer = c.get("bearer");
    if (bearer === undefined)
      throw new Error("a route that needs a token is outside an authenticated prefix");
    const at = requestAt(c);
    c.set("claims", await pointed(at, bearer.verifier, options, () => bearer.caller(), role));
    await next();
  });
}

/** Where a request was sent, as authentication reads it: its runtime bindings, path and path ids. */
export interface RequestAt {
  /** The runtime's bindings (in Lambda, the event: its domain is the public base when none is set). */
  readonly env: unknown;
  /** The URL's path, no query. */
  readonly path: string;
  readonly tenant: string | undefined;
  readonly project: string | undefined;
}

function requestAt(c: Context): RequestAt {
  return {
    env: c.env,
    path: new URL(c.req.url).pathname,
    tenant: c.req.param("tenant"),
    project: c.req.param("project"),
  };
}

/**
 * {@link need} for a request answered outside Hono (`fast-path.ts`): the caller of its
 * `Authorization` header when it reaches the route, refused exactly as `need` refuses it.
 */
export function authenticate(
  verifier: TokenVerifier,
  authorization: string | undefined,
  at: RequestAt,
  role: Role,
  options: AuthOptions,
): Promise<Caller> {
  return pointed(
    at,
    verifier,
    options,
    () => bearerCaller(verifier, authorization, resourceOf(at, verifier, false).resource),
    role,
  );
}

/** The caller `verified` answers when `permit` lets it reach the route; a bearer refusal points at the resource. */
async function pointed(
  at: RequestAt,
  verifier: TokenVerifier,
  options: AuthOptions,
  verified: () => Promise<Caller>,
  role: Role | undefined,
): Promise<Caller> {
  try {
    const caller = await verified();
    permit(caller, { tenant: at.tenant, project: at.project, role, ...options });
    return caller;
  } catch (error) {
    throw error instanceof BearerError
      ? error.at(resourceOf(at, verifier, options.endpoint === true).context)
      : error;
  }
}

/** The request's resource (its URL under the public base, no query) and what its challenges point at. */
function resourceOf(
  at: RequestAt,
  verifier: TokenVerifier,
  endpoint: boolean,
): { resource: string; context: ChallengeContext } {
  const base = publicBaseOf(at.env, verifier.publicUrl);
  const { path, tenant } = at;
  const scope = endpoint && tenant !== undefined ? verifier.scopes(tenant).join(" ") : "";
  return {
    resource: `${base}${path}`,
    context: {
      resourceMetadata: `${base}${RESOURCE_METADATA_PATH}${endpoint ? path : ""}`,
      ...(scope === "" ? {} : { scope }),
    },
  };
}

/**
 * The caller `token` stands for when it may act as `need` says: 401 `unauthenticated` (the
 * token does not verify), 403 `forbidden` (it does not reach the route), 503
 * `issuer_unavailable` (its issuer's keys cannot be read). The one rule behind `need`
 * and the web listing's session.
 */
export async function authorise(
  verifier: TokenVerifier,
  token: string,
  need: Need,
  at: { readonly audience: Audience; readonly resource: string },
): Promise<Caller> {
  const caller = await verify(verifier, token, at);
  permit(caller, need);
  return caller;
}

/** The caller `token` stands for: 401 `unauthenticated`, 503 `issuer_unavailable` as `authorise` says. */
async function verify(
  verifier: TokenVerifier,
  token: string,
  at: { readonly audience: Audience; readonly resource: string },
): Promise<Caller> {
  try {
    return await verifier.verify(token, at);
  } catch (error) {
    if (error instanceof TokenRefused) throw new BearerError(401, error.message, "invalid_token");
    if (error instanceof IssuerUnavailable) throw new VanceError("issuer_unavailable", error.message);
    throw error;
  }
}

/** The writer of a document, as its audit fields name it: the token's subject, when it has one. */
export function authorOf(claims: Claims): { author?: string } {
  return claims.sub === undefined ? {} : { author: claims.sub };
}

/** Throws 403 `insufficient_scope`, naming the scope needed, unless `caller` reaches what `need` describes. */
export function permit(caller: Caller, need: Need): void {
  const prefix = caller.scopePrefix;
  const { tenant, project, role } = need;
  if (tenant !== undefined && caller.tenant !== "*" && caller.tenant !== tenant) {
    throw deny(`the token is for tenant '${caller.tenant}', not '${tenant}'`, `${prefix}tenant:${tenant}`);
  }
  if (need.platformOnly && caller.tenant !== "*") {
    throw deny(
      "this route changes every tenant and needs a platform token (tenant '*')",
      `${prefix}tenant:*`,
    );
  }
  if (caller.project !== undefined && tenant !== undefined && project !== caller.project) {
    throw deny(
      project === undefined
        ? `the token is limited to project '${caller.project}'; this route is the tenant's`
        : `the token is limited to project '${caller.project}', not '${project}'`,
      project === undefined ? `${prefix}tenant:${tenant}` : `${prefix}project:${project}`,
    );
  }
  if (caller.reach === PROCESSES_REACH && !need.processes) {
    throw deny(
      "the token is limited to processes (reach 'processes'); this route is not one an engine runs processes with",
      `${prefix}${role ?? "read"}`,
    );
  }
  if (role && !caller.roles.includes(role))
    throw deny(`this route needs the '${role}' role`, `${prefix}${role}`);
}

/** A 403 naming the scope that would reach the route (a function, not a closure made on every check). */
function deny(detail: string, scope: string): BearerError {
  return new BearerError(403, detail, "insufficient_scope", scope);
}

/** Mints one of the service's own tokens (HS256), e.g. for `npm run token` and the development token. */
export async function mintToken(
  secret: string,
  claims: Claims,
  ttlSeconds: number,
  now: number = Math.floor(Date.now() / 1000),
): Promise<string> {
  return signLocal(new TextEncoder().encode(secret), { ...claims }, now, ttlSeconds);
}
