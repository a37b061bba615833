import { TenantIdSchema, VanceError } from "@vance/core";
import { createMiddleware } from "hono/factory";
import { sign, verify } from "hono/jwt";
import { LRUCache } from "lru-cache";
import * as v from "valibot";

/** The roles a token may carry (API.md "Conventions"). */
export type Role = "read" | "write" | "admin";

const ClaimsSchema = v.object({
  tenant: v.union([v.literal("*"), TenantIdSchema]),
  roles: v.array(v.picklist(["read", "write", "admin"])),
  /** Who the token stands for: a document's `updatedBy` is its writer's subject. */
  sub: v.optional(v.pipe(v.string(), v.maxLength(256))),
});

/** The verified claims of the caller. */
export type Claims = v.InferOutput<typeof ClaimsSchema>;

export type AuthEnv = { Variables: { claims: Claims } };

const unauthenticated = (detail: string) => new VanceError("unauthenticated", 401, detail);
const forbidden = (detail: string) => new VanceError("forbidden", 403, detail);

/**
 * Tokens already verified, per secret: an engine sends the same token on every call of a turn,
 * and verifying the signature (key import and HMAC) costs about 0.1 ms. A token string verifies
 * the same way every time; only its time window (`exp`, `nbf`) is checked again on each use.
 */
const verifiedTokens = new Map<string, LRUCache<string, VerifiedToken>>();

interface VerifiedToken {
  readonly payload: Record<string, unknown>;
  readonly exp: number;
  readonly nbf: number | undefined;
}

/** A token that verified but must not be used; its reason is the answer's detail. */
class RefusedToken extends Error {}

async function verifyToken(token: string, secret: string): Promise<Record<string, unknown>> {
  let cache = verifiedTokens.get(secret);
  if (!cache) {
    cache = new LRUCache({ max: 10_000 });
    verifiedTokens.set(secret, cache);
  }
  const now = Date.now() / 1000;
  const known = cache.get(token);
  if (known && now < known.exp && (known.nbf === undefined || now >= known.nbf)) {
    return known.payload;
  }
  const payload = (await verify(token, secret, "HS256")) as Record<string, unknown>;
  // A token without `exp` would be valid forever: a leaked one could never be retired.
  if (typeof payload.exp !== "number")
    throw new RefusedToken("the token has no 'exp' claim; tokens must expire");
  const nbf = typeof payload.nbf === "number" ? payload.nbf : undefined;
  cache.set(token, { payload, exp: payload.exp, nbf });
  return payload;
}

/**
 * Verifies the bearer JWT (HS256, `exp` required and honoured) and, when given, the role the
 * route needs and that the path's tenant is the token's (or a platform token's, `tenant: "*"`).
 */
export function authenticate(secret: string, role?: Role, options: { platformOnly?: boolean } = {}) {
  return createMiddleware<AuthEnv>(async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthenticated("a bearer token is required (Authorization: Bearer <jwt>)");
    c.set("claims", await authorise(match[1]!, secret, { tenant: c.req.param("tenant"), role, ...options }));
    await next();
  });
}

/**
 * The claims of `token` when it may act: verified, and when given, for `tenant` (or a platform
 * token) with `role`. The one rule behind `authenticate` and the web listing's session: 401
 * `unauthenticated`, 403 `forbidden`.
 */
export async function authorise(
  token: string,
  secret: string,
  scope: { tenant?: string | undefined; role?: Role | undefined; platformOnly?: boolean | undefined } = {},
): Promise<Claims> {
  let payload: unknown;
  try {
    payload = await verifyToken(token, secret);
  } catch (error) {
    throw unauthenticated(error instanceof RefusedToken ? error.message : "the token is invalid or expired");
  }
  const claims = v.safeParse(ClaimsSchema, payload);
  if (!claims.success) throw unauthenticated("the token lacks valid 'tenant' and 'roles' claims");
  const { tenant, role } = scope;
  if (tenant !== undefined && claims.output.tenant !== "*" && claims.output.tenant !== tenant) {
    throw forbidden(`the token is for tenant '${claims.output.tenant}', not '${tenant}'`);
  }
  if (scope.platformOnly && claims.output.tenant !== "*") {
    throw forbidden("this route changes every tenant and needs a platform token (tenant '*')");
  }
  if (role && !claims.output.roles.includes(role)) throw forbidden(`this route needs the '${role}' role`);
  return claims.output;
}

/** The writer of a document, as its audit fields name it: the token's subject, when it has one. */
export function authorOf(claims: Claims): { author?: string } {
  return claims.sub === undefined ? {} : { author: claims.sub };
}

/** When a verified token expires (epoch seconds), or undefined for a token that does not verify. */
export async function expiryOf(token: string, secret: string): Promise<number | undefined> {
  try {
    const payload = await verifyToken(token, secret);
    return typeof payload.exp === "number" ? payload.exp : undefined;
  } catch {
    return undefined;
  }
}

/** Mints an HS256 token, e.g. for `npm run token` and the development token printed at start. */
export async function mintToken(
  secret: string,
  claims: Claims,
  ttlSeconds: number,
  now: number = Math.floor(Date.now() / 1000),
): Promise<string> {
  return sign({ ...claims, iat: now, exp: now + ttlSeconds }, secret, "HS256");
}
