/** The observed-limits port: tools-array limits learned from endpoints' rejections (spec §14.1). */

/**
 * A tools-array limit learned from an endpoint's rejection (spec §14.1). The limit belongs to
 * the endpoint — the catalog instance — not to one model, and to whoever reported it.
 */
export interface ObservedToolLimit {
  /**
   * What it binds, `{scope}/{instance}`: `scope` is `*` (a platform report, every tenant) or the
   * reporting tenant's id. Built by core (`observedLimitKey`); opaque to the stores.
   */
  readonly key: string;
  /** The model whose rejection taught it, "instance/slug": for the record, never looked up. */
  readonly model: string;
  readonly maxTools: number;
  /** Epoch milliseconds. */
  readonly observedAt: number;
}

export interface ObservedLimitStore {
  /** Records the limit a provider's rejection named, under its key (the latest observation wins). */
  putObservedToolLimit(limit: ObservedToolLimit): Promise<void>;
  /** The observed limits under these keys, in key order; keys never observed are absent. */
  getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]>;
  /**
   * Every observed limit, in key order: bounded, since a limit is learned only for an endpoint
   * the catalog knows, one per (scope, endpoint).
   */
  listObservedToolLimits(): Promise<ObservedToolLimit[]>;
  /** Withdraws the limit under `key`; `false` when none was stored. */
  deleteObservedToolLimit(key: string): Promise<boolean>;
}
