/**
 * The secret store port: per-tenant named values that `${secret:NAME}` resolves (API.md
 * "Secrets"). Adapters encrypt values at rest and bind each ciphertext to its tenant and name,
 * so a ciphertext copied to another tenant or name does not decrypt. Values leave the store only
 * through `get`, which only tool invocation calls; no route returns one.
 */

/** One secret as listed: its name and when it was last written, never its value. */
export interface SecretEntry {
  readonly name: string;
  /** ISO-8601. */
  readonly updatedAt: string;
}

export interface SecretStore {
  /** Creates or replaces the secret. */
  put(tenant: string, name: string, value: string): Promise<void>;
  /** `false` when the tenant had no secret of this name. */
  delete(tenant: string, name: string): Promise<boolean>;
  /** The tenant's secrets, sorted by name, without values. */
  list(tenant: string): Promise<SecretEntry[]>;
  /**
   * The plaintext, or `undefined` when the tenant has no secret of this name. A stored value that
   * fails to authenticate (altered, moved from another tenant or name, or written under another
   * key) throws: that is a fault of the store, not a missing secret.
   */
  get(tenant: string, name: string): Promise<string | undefined>;
}
