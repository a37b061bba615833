import { CacheCounters, type CacheReport, CountedLru, type Logger, lruExtent } from "@vance/core";
import { decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify, SignJWT } from "jose";
import {
  type Caller,
  type Claims,
  DEFAULT_SCOPE_PREFIX,
  issuerClaims,
  LOCAL_ISSUER,
  localClaims,
  PROCESSES_REACH,
  ROLES,
  shown,
  TokenRefused,
} from "./claims";
import { IssuerKeys, type IssuerKeysStats } from "./issuer-keys";
import type { IssuerSettings } from "./issuers";

/** The audience of a web listing session: its cookie's token is refused by `/v1`. */
export const LISTING_AUDIENCE = "vance-ui";

/** Whom a token is presented to: the API (`/v1`), or the web listing (its session cookie). */
export type Audience = "api" | "listing";

/** What the verifier is configured with (`VANCE_JWT_SECRET`, `VANCE_LOCAL_TOKENS`, `VANCE_TOKEN_ISSUERS`). */
export interface VerifierSettings {
  /** Signs the service's own tokens and the listing's sessions (HS256). */
  readonly secret: string;
  /** Whether `/v1` accepts the service's own HS256 tokens (development; refused in Lambda unless enabled). */
  readonly localTokens: boolean;
  readonly issuers: readonly IssuerSettings[];
  /**
   * The base of the resource URLs the service names: `VANCE_PUBLIC_URL`, else the local
   * server's socket; unset only in Lambda, where the function URL's domain comes from the event.
   */
  readonly publicUrl?: string | undefined;
}

/** What `/v1/metrics` shows of the verifier. */
export interface VerifierStats {
  readonly verifiedTokens: number;
  readonly issuers: IssuerKeysStats[];
}

/** A token whose signature verified; its time window and audience are judged at every use. */
interface Verified {
  readonly caller: Caller;
  readonly notBefore: number | undefined;
  readonly audiences: readonly string[];
  readonly skewSeconds: number;
  /** The issuer's key set and its generation when this token verified (issuer tokens only). */
  readonly keys: IssuerKeys | undefined;
  readonly generation: number;
}

const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
const isHttpUrl = (value: string) => /^https?:\/\//.test(value);
/** `url` is `base` or a path below it (segment-wise: `/mcp` is not within `/mc`). */
const within = (url: string, base: string) =>
  url === base || url.startsWith(base.endsWith("/") ? base : `${base}/`);

/**
 * Verifies bearer tokens: the service's own (HS256 under `VANCE_JWT_SECRET`, no `iss`) and those
 * of the trusted issuers (by their `iss`, with their keys and algorithms only). A token that
 * verified is remembered, so an engine's token of a turn costs its signature once; its time
 * window and audience are checked again on every use, and a change of its issuer's keys makes
 * it verify again.
 */
export class TokenVerifier {
  readonly #settings: VerifierSettings;
  readonly #now: () => number;
  readonly #issuers = new Map<string, { readonly issuer: IssuerSettings; readonly keys: IssuerKeys }>();
  readonly #verified = new CountedLru<string, Verified>({ max: 10_000 });
  readonly #verifiedReads = new CacheCounters();
  readonly #secret: Uint8Array<ArrayBuffer>;
  /** The secret imported once for HMAC: importing it per token costs more than the HMAC itself. */
  #hmacKey: Promise<CryptoKey> | undefined;

  constructor(
    settings: VerifierSettings,
    deps: {
      readonly logger: Logger;
      readonly now?: () => number;
      readonly fetch?: typeof fetch;
      /** The tenants' network guard: key sets a discovery document names on another origin go through it. */
      readonly guardedFetch?: (input: string, init: RequestInit) => Promise<Response>;
    },
  ) {
    this.#settings = settings;
    this.#now = deps.now ?? (() => Date.now());
    this.#secret = new TextEncoder().encode(settings.secret);
    const fetcher = deps.fetch ?? ((input, init) => fetch(input, init));
    for (const issuer of settings.issuers) {
      this.#issuers.set(issuer.issuer, {
        issuer,
        keys: new IssuerKeys(issuer, {
          fetch: fetcher,
          ...(deps.guardedFetch ? { guardedFetch: deps.guardedFetch } : {}),
          now: this.#now,
          logger: deps.logger,
        }),
      });
    }
  }

  get stats(): VerifierStats {
    return {
      verifiedTokens: this.#verified.size,
      issuers: [...this.#issuers.values()].map(({ keys }) => keys.stats),
    };
  }

  /** Tokens remembered as verified. */
  cacheReports(): Record<string, CacheReport> {
    return { verifiedTokens: this.#verifiedReads.report(lruExtent(this.#verified)) };
  }

  /** The configured base URL ({@link VerifierSettings.publicUrl}). */
  get publicUrl(): string | undefined {
    return this.#settings.publicUrl;
  }

  /** Whether `/v1` takes the service's own tokens. */
  get localTokens(): boolean {
    return this.#settings.localTokens;
  }

  /** The trusted issuers' URLs, in configured order. */
  get issuers(): readonly string[] {
    return [...this.#issuers.keys()];
  }

  /**
   * The scopes a client asks an issuer for to reach this service (RFC 9728 `scopes_supported`):
   * for one tenant's endpoint its `read` and tenant scopes, else every role's; only for issuers
   * that map roles and tenants from scopes rather than claims.
   */
  scopes(tenant?: string): string[] {
    const scopes = new Set<string>();
    for (const { issuer } of this.#issuers.values()) {
      const prefix = issuer.scopePrefix;
      if (!issuer.rolesClaim) {
        for (const grant of tenant === undefined ? [...ROLES, PROCESSES_REACH] : ["read"]) {
          scopes.add(`${prefix}${grant}`);
        }
      }
      if (tenant !== undefined && !issuer.tenantClaim) scopes.add(`${prefix}tenant:${tenant}`);
    }
    return [...scopes];
  }

  /**
   * The caller `token` stands for when presented to `audience` at `resource` (the request's URL
   * without its query: an issuer's resource-bound token serves the URLs under its audience);
   * throws {@link TokenRefused} saying why not, or `IssuerUnavailable` when its issuer's keys
   * cannot be read.
   */
  async verify(
    token: string,
    at: { readonly audience: Audience; readonly resource: string },
  ): Promise<Caller> {
    let verified = this.#verified.get(token);
    if (!verified || (verified.keys && verified.keys.generation !== verified.generation)) {
      this.#verifiedReads.misses++;
      verified = await this.#verifySignature(token);
      this.#verified.set(token, verified);
    } else this.#verifiedReads.hits++;
    this.#judgeTime(verified);
    this.#judgeAudience(verified, at);
    return verified.caller;
  }

  /** The verifier's clock, epoch seconds. */
  nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  /** A web listing session for `claims`: `read` only, {@link LISTING_AUDIENCE}, `ttlSeconds` long. */
  mintSession(claims: Claims, ttlSeconds: number): Promise<string> {
    return signLocal(
      this.#secret,
      { ...claims, roles: ["read"], aud: LISTING_AUDIENCE },
      this.nowSeconds(),
      ttlSeconds,
    );
  }

  async #verifySignature(token: string): Promise<Verified> {
    let alg: unknown;
    let iss: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
      iss = decodeJwt(token).iss;
    } catch {
      throw new TokenRefused("the token is not a JWT (three base64url parts: header, payload, signature)");
    }
    const algorithm = typeof alg === "string" ? shown(alg) : String(alg);
    if (iss !== undefined) {
      const trusted = typeof iss === "string" ? this.#issuers.get(iss) : undefined;
      if (!trusted) {
        throw new TokenRefused(
          `the token's issuer '${shown(String(iss))}' is not trusted here${this.#issuers.size === 0 ? "" : ` (trusted: ${this.issuers.join(", ")})`}`,
        );
      }
      const { issuer, keys } = trusted;
      if (!issuer.algorithms.some((allowed) => allowed === alg)) {
        throw new TokenRefused(
          `the token's algorithm '${algorithm}' is not one issuer '${issuer.issuer}' signs with (${issuer.algorithms.join(", ")})`,
        );
      }
      const payload = await this.#jwtVerify(() =>
        jwtVerify(token, (header, jws) => keys.key(header, jws), {
          issuer: issuer.issuer,
          algorithms: issuer.algorithms,
          clockTolerance: issuer.clockSkewSeconds,
          currentDate: new Date(this.#now()),
          requiredClaims: ["exp"],
        }),
      );
      return this.#verifiedOf(payload, issuerClaims(payload, issuer), issuer.issuer, issuer.scopePrefix, {
        audienceClaim: issuer.audienceClaim,
        skewSeconds: issuer.clockSkewSeconds,
        keys,
        generation: keys.generation,
      });
    }
    if (alg !== "HS256") {
      throw new TokenRefused(
        `the token's algorithm '${algorithm}' is not accepted: the service's own tokens are HS256${this.#issuers.size === 0 ? "" : ", and an issuer's name it in 'iss'"}`,
      );
    }
    const key = await this.#hmac();
    const payload = await this.#jwtVerify(() =>
      jwtVerify(token, key, {
        algorithms: ["HS256"],
        currentDate: new Date(this.#now()),
        requiredClaims: ["exp"],
      }),
    );
    return this.#verifiedOf(payload, localClaims(payload), LOCAL_ISSUER, DEFAULT_SCOPE_PREFIX, {
      audienceClaim: "aud",
      skewSeconds: 0,
      keys: undefined,
      generation: 0,
    });
  }

  #hmac(): Promise<CryptoKey> {
    this.#hmacKey ??= crypto.subtle.importKey("raw", this.#secret, { name: "HMAC", hash: "SHA-256" }, false, [
      "verify",
    ]);
    return this.#hmacKey;
  }

  #verifiedOf(
    payload: JWTPayload,
    claims: Claims,
    issuer: string,
    scopePrefix: string,
    {
      audienceClaim,
      ...rest
    }: Pick<Verified, "skewSeconds" | "keys" | "generation"> & { audienceClaim: string },
  ): Verified {
    const aud = payload[audienceClaim];
    return {
      caller: { ...claims, expiresAt: payload.exp!, issuer, scopePrefix },
      notBefore: payload.nbf,
      audiences:
        typeof aud === "string"
          ? [aud]
          : Array.isArray(aud)
            ? aud.filter((entry): entry is string => typeof entry === "string")
            : [],
      ...rest,
    };
  }

  /** jose's verdict, its refusals said in words a client can act on. */
  async #jwtVerify(run: () => Promise<{ payload: JWTPayload }>): Promise<JWTPayload> {
    try {
      return (await run()).payload;
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        const exp = error.payload.exp;
        throw new TokenRefused(
          typeof exp === "number" ? `the token expired at ${isoTime(exp)}` : "the token expired",
        );
      }
      if (error instanceof errors.JWTClaimValidationFailed) {
        if (error.claim === "exp" && error.reason === "missing") {
          throw new TokenRefused("the token has no 'exp' claim; tokens must expire");
        }
        if (error.claim === "nbf" && typeof error.payload.nbf === "number") {
          throw new TokenRefused(`the token is not valid before ${isoTime(error.payload.nbf)}`);
        }
        throw new TokenRefused(`the token's '${error.claim}' claim is not acceptable (${error.reason})`);
      }
      if (error instanceof errors.JWSSignatureVerificationFailed) {
        throw new TokenRefused("the token's signature does not verify");
      }
      if (error instanceof errors.JOSEError) throw new TokenRefused(`the token is invalid: ${error.message}`);
      throw error;
    }
  }

  #judgeTime(verified: Verified): void {
    const now = this.#now() / 1000;
    const { expiresAt } = verified.caller;
    if (now >= expiresAt + verified.skewSeconds)
      throw new TokenRefused(`the token expired at ${isoTime(expiresAt)}`);
    if (verified.notBefore !== undefined && now + verified.skewSeconds < verified.notBefore) {
      throw new TokenRefused(`the token is not valid before ${isoTime(verified.notBefore)}`);
    }
  }

  #judgeAudience(verified: Verified, at: { readonly audience: Audience; readonly resource: string }): void {
    const { caller, audiences } = verified;
    const named = audiences.map((aud) => `'${shown(aud)}'`).join(", ");
    if (caller.issuer === LOCAL_ISSUER) {
      const session = audiences.includes(LISTING_AUDIENCE);
      if (at.audience === "listing") {
        if (!session) throw new TokenRefused("the token is not a web listing session");
        return;
      }
      if (session)
        throw new TokenRefused("the token is a web listing session; the API takes bearer tokens only");
      if (audiences.length > 0) throw new TokenRefused(`the token is for audience ${named}, not this API`);
      if (!this.#settings.localTokens) {
        throw new TokenRefused(
          `the service's own tokens (HS256, no 'iss') are not accepted here (VANCE_LOCAL_TOKENS is off); use a token of ${this.#issuers.size === 0 ? "a configured issuer" : this.issuers.join(", ")}`,
        );
      }
      return;
    }
    if (at.audience === "listing") throw new TokenRefused("the token is not a web listing session");
    const accepted = this.#issuers.get(caller.issuer)!.issuer.audience;
    const ok = audiences.some(
      (aud) =>
        accepted.includes(aud) ||
        (isHttpUrl(aud) &&
          within(at.resource, aud) &&
          accepted.some((base) => isHttpUrl(base) && within(aud, base))),
    );
    if (!ok) {
      throw new TokenRefused(
        `the token's audience (${named || "none"}) is not this service (accepted: ${accepted.join(", ")}, or a resource URL under one that holds this endpoint)`,
      );
    }
  }
}

/** Signs one of the service's own tokens (HS256): `iat` now, `exp` after `ttlSeconds`. */
export function signLocal(
  secret: Uint8Array,
  payload: Record<string, unknown>,
  now: number,
  ttlSeconds: number,
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(secret);
}
