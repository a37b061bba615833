import type { Logger } from "@vance/core";
import {
  createLocalJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";
import { shown, TokenRefused } from "./claims";
import type { IssuerSettings } from "./issuers";

/** A key set or discovery document larger than this is refused: real ones are a few KiB. */
export const KEYS_MAX_BYTES = 256 * 1024;
/** Most keys one issuer's set may hold. */
export const KEYS_MAX_COUNT = 100;
/** However many tokens name keys it lacks, an issuer's keys are read at most once in this window. */
export const KEYS_COOLDOWN_MS = 30_000;
/** Keys are read again after this long even when every token finds its key. */
export const KEYS_MAX_AGE_MS = 10 * 60_000;
/** Longest one read of a discovery document or key set may take. */
export const KEYS_TIMEOUT_MS = 5_000;

/**
 * An issuer whose keys could not be read, and none are known yet: the request answers 503. Its
 * message names the issuer only — the caller may be anyone, and what the issuer's host answered
 * (a status, a connection error, a body) is for the log (`auth.issuer_keys_failed`), not for them.
 */
export class IssuerUnavailable extends Error {}

/** A fetch as the key reads use it (the global one, or the tenants' guarded one). */
type KeysFetch = (input: string, init: RequestInit) => Promise<Response>;

/** What `/v1/metrics` shows of one issuer's keys. */
export interface IssuerKeysStats {
  readonly issuer: string;
  readonly keys: number;
  readonly reads: number;
  readonly failures: number;
}

type Key = Awaited<ReturnType<ReturnType<typeof createLocalJWKSet>>>;

/**
 * One issuer's signing keys (its JWKS), read on first use and cached: read again after
 * {@link KEYS_MAX_AGE_MS}, or when a token names a key the set lacks (a rotation) — at most
 * once per {@link KEYS_COOLDOWN_MS}, so a flood of made-up `kid`s costs no reads; concurrent
 * requests share one read. Answers are bounded in time and size; a failed read keeps the keys
 * known before and is logged naming the issuer.
 */
export class IssuerKeys {
  readonly #issuer: IssuerSettings;
  readonly #fetch: KeysFetch;
  readonly #guardedFetch: KeysFetch | undefined;
  /** Whether the key set's URL is the operator's (configured), not named by the issuer's discovery. */
  readonly #jwksConfigured: boolean;
  readonly #now: () => number;
  readonly #logger: Logger;
  #select: ReturnType<typeof createLocalJWKSet> | undefined;
  #keyCount = 0;
  #fingerprint = "";
  #jwksUri: string | undefined;
  #readAt = Number.NEGATIVE_INFINITY;
  #triedAt = Number.NEGATIVE_INFINITY;
  #lastFailure = "";
  #reading: Promise<void> | undefined;
  #reads = 0;
  #failures = 0;
  /** Moves whenever the set's content changes: tokens verified with an older set are verified again. */
  generation = 0;

  constructor(
    issuer: IssuerSettings,
    deps: {
      readonly fetch: KeysFetch;
      /**
       * The network guard of tenants' URLs: a key set the discovery document names on another
       * origin than the issuer's is read through it (without it, such a key set is refused).
       */
      readonly guardedFetch?: KeysFetch;
      readonly now: () => number;
      readonly logger: Logger;
    },
  ) {
    this.#issuer = issuer;
    this.#jwksUri = issuer.jwksUri;
    this.#jwksConfigured = issuer.jwksUri !== undefined;
    this.#fetch = deps.fetch;
    this.#guardedFetch = deps.guardedFetch;
    this.#now = deps.now;
    this.#logger = deps.logger;
  }

  get stats(): IssuerKeysStats {
    return {
      issuer: this.#issuer.issuer,
      keys: this.#keyCount,
      reads: this.#reads,
      failures: this.#failures,
    };
  }

  /** The key a token's header selects (jose's key-resolver shape); refused when the set has none. */
  async key(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<Key> {
    let read = false;
    if (!this.#select) {
      if (!this.#reading && this.#coolingDown()) throw this.#unavailable();
      await this.#refresh();
      read = true;
    } else if (this.#now() - this.#readAt > KEYS_MAX_AGE_MS && !this.#coolingDown()) {
      await this.#refresh();
      read = true;
    }
    const found = await this.#find(header, token);
    if (found) return found;
    // A key the set lacks: a rotation the cached set predates, or a made-up `kid`.
    if (!read && (this.#reading || !this.#coolingDown())) {
      await this.#refresh();
      const again = await this.#find(header, token);
      if (again) return again;
    }
    // Nothing of the key reads (when, from where, what they answered) is told: the caller may be anyone.
    throw new TokenRefused(
      `issuer '${this.#issuer.issuer}' has no key${header.kid === undefined ? "" : ` '${shown(header.kid)}'`} for ${header.alg}`,
    );
  }

  #coolingDown(): boolean {
    return this.#now() - this.#triedAt < KEYS_COOLDOWN_MS;
  }

  async #find(header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<Key | undefined> {
    if (!this.#select) throw this.#unavailable();
    try {
      return await this.#select(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey) return undefined;
      if (error instanceof errors.JWKSMultipleMatchingKeys) {
        throw new TokenRefused(
          `the token names no key ('kid') and issuer '${this.#issuer.issuer}' has several for ${header.alg}`,
        );
      }
      throw error;
    }
  }

  #unavailable(): IssuerUnavailable {
    return new IssuerUnavailable(
      `the keys of the token's issuer could not be read; try again shortly (the service's log says why)`,
    );
  }

  #refresh(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    this.#triedAt = this.#now();
    this.#reads += 1;
    try {
      this.#jwksUri ??= await this.#discover();
      const jwks = await readJson(this.#keysFetch(this.#jwksUri), this.#jwksUri);
      if (typeof jwks !== "object" || jwks === null || !Array.isArray((jwks as JSONWebKeySet).keys)) {
        throw new Error("the key set is not a JWKS ({ keys: [...] })");
      }
      const { keys } = jwks as JSONWebKeySet;
      if (keys.length > KEYS_MAX_COUNT)
        throw new Error(`the key set holds ${keys.length} keys (at most ${KEYS_MAX_COUNT})`);
      const select = createLocalJWKSet({ keys });
      const fingerprint = JSON.stringify(keys);
      if (fingerprint !== this.#fingerprint) this.generation += 1;
      this.#select = select;
      this.#fingerprint = fingerprint;
      this.#keyCount = keys.length;
      this.#readAt = this.#now();
    } catch (error) {
      this.#failures += 1;
      this.#lastFailure = error instanceof Error ? error.message : String(error);
      this.#logger.warn("auth.issuer_keys_failed", { issuer: this.#issuer.issuer, error: this.#lastFailure });
      if (!this.#select) throw this.#unavailable();
    }
  }

  /**
   * How the key set is read: what the operator configured (the issuer, a `jwksUri`) as
   * configured; a URL the issuer's discovery names only on the issuer's own origin, else through
   * the same network guard as tenants' URLs — an upstream's answer never points this service at
   * a host the operator did not name (cloud metadata, a private address).
   */
  #keysFetch(jwksUri: string): KeysFetch {
    if (this.#jwksConfigured || new URL(jwksUri).origin === new URL(this.#issuer.issuer).origin) {
      return this.#fetch;
    }
    if (this.#guardedFetch) return this.#guardedFetch;
    throw new Error(`the discovery names a jwks_uri on another origin than the issuer's (${jwksUri})`);
  }

  /** The JWKS URL from the issuer's OIDC discovery document, which must name the same issuer. */
  async #discover(): Promise<string> {
    const url = `${this.#issuer.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    const document = (await readJson(this.#fetch, url)) as { issuer?: unknown; jwks_uri?: unknown } | null;
    if (document?.issuer !== this.#issuer.issuer) {
      throw new Error(
        `${url} names issuer '${shown(String(document?.issuer))}', not '${this.#issuer.issuer}'`,
      );
    }
    const jwksUri = document.jwks_uri;
    if (typeof jwksUri !== "string" || !URL.canParse(jwksUri)) throw new Error(`${url} names no jwks_uri`);
    const protocol = new URL(jwksUri).protocol;
    if (
      protocol !== "https:" &&
      !(protocol === "http:" && new URL(this.#issuer.issuer).protocol === "http:")
    ) {
      throw new Error(`${url} names a jwks_uri that is not https`);
    }
    return jwksUri;
  }
}

/** GETs `url` as JSON: no redirects, at most {@link KEYS_MAX_BYTES}, within {@link KEYS_TIMEOUT_MS}. */
async function readJson(fetcher: KeysFetch, url: string): Promise<unknown> {
  const response = await fetcher(url, {
    headers: { accept: "application/json" },
    redirect: "error",
    signal: AbortSignal.timeout(KEYS_TIMEOUT_MS),
  }).catch((error: unknown) => {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(
      `${url} could not be read (${error instanceof Error ? error.message : String(error)}${cause})`,
    );
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${url} answered HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > KEYS_MAX_BYTES) {
    await response.body?.cancel();
    throw new Error(`${url} answered ${declared} bytes (at most ${KEYS_MAX_BYTES})`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) {
    size += read.value.byteLength;
    if (size > KEYS_MAX_BYTES) {
      await reader!.cancel();
      throw new Error(`${url} answered more than ${KEYS_MAX_BYTES} bytes`);
    }
    chunks.push(read.value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new Error(`${url} did not answer JSON`);
  }
}
