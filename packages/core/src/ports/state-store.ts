/**
 * The state store port: small mutable records that must be shared by every function
 * instance — process records, tool usage counters, observed tool limits, fire-once markers.
 * DynamoDB implements it in the cloud (one table, single-table design), SQLite locally.
 * Every mutation is atomic on its own; no method reads-then-writes across calls.
 */

/** A tool declared by the engine's client side; answered with a routing result, never run here. */
export interface ClientToolDeclaration {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** For pack sub-tools (`pack__op`): one usage line for the whole pack, shown in discovery. */
  readonly packHint?: string;
}

/** A spawned process: the frozen allow set and the recipe hints that classification reads. */
export interface ProcessRecord {
  readonly tenant: string;
  readonly project: string;
  readonly processId: string;
  /** ISO-8601. */
  readonly createdAt: string;
  readonly recipe: string | null;
  readonly engine: string | null;
  /** Usage counters are kept per role: the recipe name, else the engine name, else "default". */
  readonly role: string;
  /** Frozen at spawn: label selectors already expanded, sorted. */
  readonly allowedTools: readonly string[];
  /**
   * Packs allowed by reference, sorted: each sub-tool its source offers when a turn or call reads
   * it (but `excludedTools`), so a pack whose source was down at spawn gets its tools once it answers.
   */
  readonly allowedPacks: readonly string[];
  /** Sub-tools of `allowedPacks` that `allowedToolsRemove` named, sorted. */
  readonly excludedTools: readonly string[];
  readonly allowedToolsAdd: readonly string[];
  /**
   * Stored records only (`ProcessRecords` writes and reads them so): the names of
   * `allowedToolsAdd` that are in `allowedTools`, as their positions there (`0-4999,5012`), and
   * `allowedToolsAdd` holds only the others — so a list of names added one by one is not stored
   * twice. Absent on records stored before issue 24: their `allowedToolsAdd` is whole.
   */
  readonly allowedToolsAddAt?: string;
  readonly allowedToolsKeep: readonly string[];
  readonly allowedToolsDefer: readonly string[];
  readonly allowedToolsDropFirst: readonly string[];
  /** Model chain, primary first: "instance/slug". */
  readonly models: readonly string[];
  readonly clientTools: readonly ClientToolDeclaration[];
  /** Deferred tools activated by use or `tool_description`: name → last use, epoch milliseconds. */
  readonly activatedTools: Readonly<Record<string, number>>;
}

export interface ProcessKey {
  readonly tenant: string;
  readonly project: string;
  readonly processId: string;
}

export interface ToolUsageKey {
  readonly tenant: string;
  readonly project: string;
  readonly role: string;
  readonly tool: string;
}

export interface ToolUsageDelta {
  readonly calls?: number;
  readonly discoveryHits?: number;
  /** Epoch milliseconds of this use; the stored `lastUsedAt` becomes the max. */
  readonly at: number;
}

export interface ToolUsageRow {
  readonly role: string;
  readonly tool: string;
  readonly calls: number;
  readonly discoveryHits: number;
  /** Epoch milliseconds. */
  readonly lastUsedAt: number;
}

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

/** A process record read together with generation markers, in one request. */
export interface ProcessWithGenerations {
  readonly process: ProcessRecord | null;
  /** In the order the markers were asked for; a marker never bumped is 0. */
  readonly generations: readonly number[];
}

export interface StateStore {
  /** Stores a new process; `false` when the id is taken (nothing is overwritten). */
  createProcess(record: ProcessRecord): Promise<boolean>;
  getProcess(key: ProcessKey): Promise<ProcessRecord | null>;
  /** `getProcess` and `getGenerations` in one request (DynamoDB `BatchGetItem`, one SQLite transaction). */
  getProcessAndGenerations(key: ProcessKey, markers: readonly string[]): Promise<ProcessWithGenerations>;
  /**
   * Sets `activatedTools[name] = at` for each name, atomically, without touching other
   * entries or fields. `false` when the process does not exist (nothing is created).
   */
  touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean>;
  /** Removes these names from `activatedTools` (decayed or evicted); absent names are ignored. */
  removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void>;

  /** Atomic increment (DynamoDB `ADD`); creates the row at zero first when absent. */
  addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void>;
  /** All rows of a project, optionally one role; sorted by role, then tool. */
  listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]>;

  /** Records the limit a provider's rejection named, under its key (the latest observation wins). */
  putObservedToolLimit(limit: ObservedToolLimit): Promise<void>;
  /** The observed limits under these keys, in key order; keys never observed are absent. */
  getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]>;

  /**
   * Generation markers: a counter per marker (a document layer, the observed limits, the
   * catalog) that every write of what it stands for bumps, so a warm instance tells "unchanged"
   * from one small read. Atomic increment (DynamoDB `ADD`): concurrent bumps are all counted.
   * An absent marker counts as 0. Answers the new value.
   */
  bumpGeneration(marker: string): Promise<number>;
  /** The generations of these markers, in order, in one request; a marker never bumped is 0. */
  getGenerations(markers: readonly string[]): Promise<number[]>;

  /**
   * Fire-once gate: `true` for the first caller of this marker, `false` for every later one
   * (across instances) until `ttlSeconds` have passed.
   */
  markOnce(marker: string, ttlSeconds: number): Promise<boolean>;
}
