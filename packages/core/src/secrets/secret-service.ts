import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import { CountedLru } from "../cache/counted-lru";
import type { Layer } from "../cascade/document-cascade";
import { type GenerationStamp, type Generations, secretsMarker } from "../cascade/generations";
import { Errors } from "../errors";
import { assertSecretName, assertTenantId, SECRET_NAME_PATTERN } from "../ids";
import type { SecretEntry, SecretStore } from "../ports/secret-store";

/** The longest secret value accepted, in UTF-8 bytes: API keys and tokens, not files. */
export const MAX_SECRET_VALUE_BYTES = 8 * 1024;

/** The value of `${secret:NAME}`, or undefined when there is none for this caller. */
export type SecretLookup = (name: string) => Promise<string | undefined>;

/** Deploy-time secrets of the platform (locally `VANCE_SECRET_<NAME>`); undefined when not set. */
export type PlatformSecrets = (name: string) => string | undefined;

export interface SecretServiceOptions {
  readonly store: SecretStore;
  readonly platform: PlatformSecrets;
  /**
   * Generation markers: a value read under the tenant's current secrets generation is used again
   * without a store read (an MCP call resolves its server's header secrets on every call). Every
   * write and delete through the service bumps it. Without them every lookup reads the store.
   */
  readonly generations?: Pick<Generations, "bump" | "stamp" | "isCurrent">;
}

/** Secret values (and absences) an instance remembers; a forgotten one is read again. */
const CACHED_SECRETS = 10_000;

/**
 * Tenant secrets (API.md "Secrets", DESIGN.md §7): write-only over HTTP, and the one place that
 * decides which secrets a document may read. A tenant's or project's document reads that
 * tenant's store and nothing else; platform secrets serve only the platform's own (bundled)
 * documents and the model catalog.
 */
export class SecretService {
  /** Values by tenant and name, stamped with the tenant's secrets generation when read. */
  readonly #cached = new CountedLru<
    string,
    { readonly value: string | null; readonly stamp: GenerationStamp }
  >({ max: CACHED_SECRETS });
  readonly #reads = new CacheCounters();

  constructor(private readonly options: SecretServiceOptions) {}

  /** The secret values' cache, for `/v1/metrics` (values are never reported, only counts). */
  cacheReports(): Record<string, CacheReport> {
    return { values: this.#reads.report(lruExtent(this.#cached)) };
  }

  /** Creates or replaces a secret; `validation_failed` for an empty or oversized value. */
  async put(tenant: string, name: string, value: string): Promise<void> {
    assertTenantId(tenant);
    assertSecretName(name);
    const problem = valueProblem(value);
    // The message describes the value, never quotes it.
    if (problem)
      throw Errors.validationFailed(`the secret value ${problem}`, [{ path: "value", message: problem }]);
    await this.options.store.put(tenant, name, value);
    await this.#changed(tenant, name);
  }

  /** Names and write times, sorted by name; values are never listed. */
  async list(tenant: string): Promise<SecretEntry[]> {
    assertTenantId(tenant);
    return this.options.store.list(tenant);
  }

  /** `secret_not_found` when the tenant has no secret of this name. */
  async delete(tenant: string, name: string): Promise<void> {
    assertTenantId(tenant);
    assertSecretName(name);
    if (!(await this.options.store.delete(tenant, name))) throw Errors.secretNotFound(name);
    await this.#changed(tenant, name);
  }

  /** After a write or delete the store took: forgotten here, and every instance reads it again. */
  async #changed(tenant: string, name: string): Promise<void> {
    this.#cached.delete(`${tenant}\n${name}`);
    await this.options.generations?.bump(secretsMarker(tenant));
  }

  /** A tenant secret: from the cache while the tenant's secrets generation is the one it was read under. */
  async #tenantSecret(tenant: string, name: string): Promise<string | undefined> {
    const generations = this.options.generations;
    const key = `${tenant}\n${name}`;
    const marker = secretsMarker(tenant);
    const cached = this.#cached.get(key);
    if (cached && generations?.isCurrent(marker, cached.stamp)) {
      this.#reads.hits++;
      return cached.value ?? undefined;
    }
    // Stamped before the read: a write finishing meanwhile moves the generation past the stamp.
    const stamp = generations?.stamp(marker);
    this.#reads.misses++;
    const value = await this.options.store.get(tenant, name);
    if (stamp && stamp.generation >= 0) this.#cached.set(key, { value: value ?? null, stamp });
    return value;
  }

  /**
   * `${secret:NAME}` for a tool document of `layer` invoked by `tenant`. The layer is where the
   * document was found, so a tenant cannot borrow the platform's secrets by naming them, nor
   * another tenant's, whatever it writes after `secret:`. Built-in tools have no templates.
   */
  lookupFor(tenant: string, layer: Layer): SecretLookup {
    switch (layer) {
      case "project":
      case "tenant":
        return async (name) =>
          SECRET_NAME_PATTERN.test(name) ? this.#tenantSecret(tenant, name) : undefined;
      case "bundled":
        return async (name) => this.platform(name);
      case "builtin":
        return async () => undefined;
    }
  }

  /** A platform secret, for bundled documents and the model catalog only. */
  platform(name: string): string | undefined {
    return SECRET_NAME_PATTERN.test(name) ? this.options.platform(name) : undefined;
  }
}

function valueProblem(value: string): string | null {
  if (value.length === 0) return "must not be empty";
  if (new TextEncoder().encode(value).length > MAX_SECRET_VALUE_BYTES)
    return `must be at most ${MAX_SECRET_VALUE_BYTES} bytes (UTF-8)`;
  return null;
}
