import * as v from "valibot";

/**
 * The signing algorithms an issuer may be trusted with: asymmetric only. HS256 is the local
 * secret's alone, so no issuer's public key can ever be used as an HMAC secret (algorithm confusion).
 */
export const ISSUER_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "EdDSA",
] as const;

/** `localhost`, `127.0.0.1`, `[::1]`: the only hosts an issuer may be reached at over plain HTTP. */
function isLoopbackUrl(url: URL): boolean {
  return url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]";
}

/** An issuer's or its keys' URL: HTTPS, or HTTP on loopback (a development identity provider). */
const IssuerUrlSchema = (what: string) =>
  v.pipe(
    v.string(),
    v.url(`${what} must be a URL`),
    v.check((text) => {
      const url = new URL(text);
      return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackUrl(url));
    }, `${what} must be https (http only on localhost / 127.0.0.1)`),
  );

const Strings = (what: string) =>
  v.pipe(
    v.union([v.string(), v.array(v.string())], `${what} must be a string or a list of strings`),
    v.transform((value) => (typeof value === "string" ? [value] : value)),
    v.minLength(1, `${what} must name at least one value`),
  );

/**
 * One trusted identity provider. Tokens whose `iss` is `issuer` are verified with its keys (its
 * JWKS, found by OIDC discovery unless `jwksUri` is given) and mapped to a tenant and roles:
 * grants are the token's scopes (`scope`, `scp`) and the values of `rolesClaim`, each spelled
 * `{scopePrefix}read|write|admin|processes|tenant:<id>|project:<id>`; `tenantClaim` and
 * `projectClaim` name claims holding the tenant and project instead.
 */
export const IssuerSchema = v.strictObject({
  issuer: IssuerUrlSchema("issuer"),
  /** The `aud` values accepted; an https URL also accepts resource-bound tokens for URLs under it (RFC 8707). */
  audience: Strings("audience"),
  /** The claim holding the audience: `aud`, or `client_id` for Cognito's access tokens, which carry no `aud`. */
  audienceClaim: v.optional(v.pipe(v.string(), v.nonEmpty("audienceClaim must not be empty")), "aud"),
  jwksUri: v.optional(IssuerUrlSchema("jwksUri")),
  algorithms: v.optional(
    v.pipe(
      v.array(
        v.picklist(
          ISSUER_ALGORITHMS,
          `algorithms must be among ${ISSUER_ALGORITHMS.join(", ")} (never HS256 or none)`,
        ),
      ),
      v.minLength(1, "algorithms must name at least one algorithm"),
    ),
    ["RS256"],
  ),
  clockSkewSeconds: v.optional(
    v.pipe(
      v.number(),
      v.integer("clockSkewSeconds must be a whole number"),
      v.minValue(0, "clockSkewSeconds must not be negative"),
      v.maxValue(300, "clockSkewSeconds must be at most 300"),
    ),
    30,
  ),
  tenantClaim: v.optional(v.pipe(v.string(), v.nonEmpty("tenantClaim must not be empty"))),
  projectClaim: v.optional(v.pipe(v.string(), v.nonEmpty("projectClaim must not be empty"))),
  rolesClaim: v.optional(v.pipe(v.string(), v.nonEmpty("rolesClaim must not be empty"))),
  scopePrefix: v.optional(v.string(), "vance:"),
  /** Whether this issuer's tokens may name every tenant (`tenant:*`): platform tokens. */
  platform: v.optional(v.boolean(), false),
});

/** One trusted issuer, with its defaults applied. */
export type IssuerSettings = v.InferOutput<typeof IssuerSchema>;

/** `VANCE_TOKEN_ISSUERS`: a JSON list of issuers, each `issuer` at most once. */
export const IssuersSettingSchema = v.pipe(
  v.optional(v.string(), "[]"),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return JSON.parse(dataset.value) as unknown;
    } catch {
      addIssue({
        message: 'VANCE_TOKEN_ISSUERS must be a JSON list of issuers ([{ "issuer": …, "audience": … }])',
      });
      return NEVER;
    }
  }),
  v.array(IssuerSchema, "VANCE_TOKEN_ISSUERS must be a JSON list of issuers"),
  v.check(
    (issuers) => new Set(issuers.map((issuer) => issuer.issuer)).size === issuers.length,
    "VANCE_TOKEN_ISSUERS names an issuer twice",
  ),
);
