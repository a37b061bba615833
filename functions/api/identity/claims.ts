import { ProjectIdSchema, TenantIdSchema } from "@vance/core";
import * as v from "valibot";
import type { IssuerSettings } from "./issuers";

/** The roles a token may carry (API.md "Conventions"). */
export const ROLES = ["read", "write", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** The reach of a token limited to what an engine needs to run processes. */
export const PROCESSES_REACH = "processes";

/** What a token grants, as the service's own (HS256) tokens carry it in their claims. */
export const ClaimsSchema = v.object({
  tenant: v.union([v.literal("*"), TenantIdSchema]),
  roles: v.array(v.picklist(ROLES)),
  /** Only this project's routes. */
  project: v.optional(ProjectIdSchema),
  /** Only the routes an engine runs processes with (spawn, manifest, invoke, MCP): no documents, no tools. */
  reach: v.optional(v.literal(PROCESSES_REACH)),
});

/** What a token grants. */
export type Claims = v.InferOutput<typeof ClaimsSchema>;

/** The caller a verified token stands for. */
export interface Caller extends Claims {
  /** When the token expires, epoch seconds. */
  readonly expiresAt: number;
  /** The issuer's URL, or {@link LOCAL_ISSUER} for the service's own tokens. */
  readonly issuer: string;
  /** How the caller's issuer spells grants as scopes (`vance:`): the scope a 403 names. */
  readonly scopePrefix: string;
}

/** The `issuer` of a caller whose token the service signed itself (HS256, `VANCE_JWT_SECRET`). */
export const LOCAL_ISSUER = "local";

/** The scope prefix of the service's own tokens and the default of every issuer's. */
export const DEFAULT_SCOPE_PREFIX = "vance:";

/** A token that cannot be used; the message says why and becomes the answer's detail. */
export class TokenRefused extends Error {}

/** A claim's values: a string (space-separated, as OAuth's `scope`) or a list of strings. */
function claimValues(payload: Record<string, unknown>, claim: string): string[] {
  const value = payload[claim];
  if (typeof value === "string") return value.split(" ").filter(Boolean);
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === "string");
  return [];
}

/** The grants of an issuer's token: its scopes and `rolesClaim` values that carry the prefix, without it. */
function grantsOf(payload: Record<string, unknown>, issuer: IssuerSettings): Set<string> {
  const claims = ["scope", "scp", ...(issuer.rolesClaim ? [issuer.rolesClaim] : [])];
  const prefix = issuer.scopePrefix;
  return new Set(
    claims
      .flatMap((claim) => claimValues(payload, claim))
      .filter((value) => value.startsWith(prefix))
      .map((value) => value.slice(prefix.length)),
  );
}

/** A value a token or an issuer supplied, as a message quotes it: ASCII, at most 128 characters. */
export const shown = (value: string) => (value.length > 128 ? `${value.slice(0, 128)}...` : value);

/**
 * The one value the token names for `what` (tenant, project): from `claim` when configured,
 * else from its `{prefix}{what}:<id>` grants; `undefined` when it names none.
 */
function namedValue(
  payload: Record<string, unknown>,
  grants: Set<string>,
  what: "tenant" | "project",
  claim: string | undefined,
  prefix: string,
): string | undefined {
  const where = claim ? `claim '${claim}'` : `scope '${prefix}${what}:<${what}>'`;
  const values = claim
    ? [...new Set(claimValues(payload, claim))]
    : [...grants]
        .filter((grant) => grant.startsWith(`${what}:`))
        .map((grant) => grant.slice(what.length + 1));
  if (values.length > 1) {
    throw new TokenRefused(`the token names ${values.length} ${what}s (${where}); it must name one`);
  }
  return values[0] === undefined ? undefined : values[0];
}

/** What a token of `issuer` grants; refused when it names no tenant, or one it may not. */
export function issuerClaims(payload: Record<string, unknown>, issuer: IssuerSettings): Claims {
  const prefix = issuer.scopePrefix;
  const grants = grantsOf(payload, issuer);
  const tenant = namedValue(payload, grants, "tenant", issuer.tenantClaim, prefix);
  if (tenant === undefined) {
    const where = issuer.tenantClaim ? `claim '${issuer.tenantClaim}'` : `scope '${prefix}tenant:<tenant>'`;
    throw new TokenRefused(`the token names no tenant (${where})`);
  }
  if (tenant === "*" && !issuer.platform) {
    throw new TokenRefused(`issuer '${issuer.issuer}' may not issue platform tokens (tenant '*')`);
  }
  if (tenant !== "*" && !v.is(TenantIdSchema, tenant)) {
    throw new TokenRefused(`the token's tenant '${shown(tenant)}' is not a valid tenant id`);
  }
  const project = namedValue(payload, grants, "project", issuer.projectClaim, prefix);
  if (project !== undefined && !v.is(ProjectIdSchema, project)) {
    throw new TokenRefused(`the token's project '${shown(project)}' is not a valid project id`);
  }
  return {
    tenant,
    roles: ROLES.filter((role) => grants.has(role)),
    ...(project === undefined ? {} : { project }),
    ...(grants.has(PROCESSES_REACH) ? { reach: PROCESSES_REACH } : {}),
  };
}

/** What one of the service's own tokens grants: its `tenant`, `roles`, `project` and `reach` claims. */
export function localClaims(payload: Record<string, unknown>): Claims {
  const claims = v.safeParse(ClaimsSchema, payload);
  if (!claims.success) throw new TokenRefused("the token lacks valid 'tenant' and 'roles' claims");
  return claims.output;
}
