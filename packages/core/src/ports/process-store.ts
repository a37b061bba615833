/**
 * The process port: spawned processes' records and their activations (spec §6, §13). One of the
 * state store's narrow ports (`state-store.ts`); every mutation is atomic on its own.
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
  /**
   * Epoch milliseconds at which the process expires unless a request touches it before (the idle
   * TTL, `VANCE_PROCESS_IDLE_TTL`): from then on it is gone — 404, and no longer counted among its
   * tenant's live processes. Moved on by `touchProcess`. Absent on records stored before idle
   * expiry: they never expire.
   */
  readonly expiresAt?: number;
}

export interface ProcessKey {
  readonly tenant: string;
  readonly project: string;
  readonly processId: string;
}

/** A process record read together with generation markers, in one request. */
export interface ProcessWithGenerations {
  readonly process: ProcessRecord | null;
  /** In the order the markers were asked for; a marker never bumped is 0. */
  readonly generations: readonly number[];
  /**
   * The store's version of the record's fields but `activatedTools` and `expiresAt` (written once,
   * by `createProcess`): the same text while those fields are the same, another one for a record
   * stored anew under the id. What is derived from those fields is kept by it (`ProcessRecordCaches`).
   * Absent for a record stored before versions, or by a store without them: nothing is kept then.
   */
  readonly version?: string;
}

export interface ProcessStore {
  /** Stores a new process; `false` when the id is taken (nothing is overwritten). */
  createProcess(record: ProcessRecord): Promise<boolean>;
  getProcess(key: ProcessKey): Promise<ProcessRecord | null>;
  /**
   * `getProcess` and the generation markers' values (`GenerationStore.getGenerations`) in one
   * request (DynamoDB `BatchGetItem`, one SQLite transaction): every turn starts with this read.
   * A record's fields but `activatedTools` are written once, by `createProcess`, with a version
   * the adapters store beside them: an adapter that parsed a version reads the version and the
   * activations alone (never the whole record's text) while it holds.
   */
  getProcessAndGenerations(key: ProcessKey, markers: readonly string[]): Promise<ProcessWithGenerations>;
  /**
   * Sets `activatedTools[name] = at` for each name, atomically, without touching other
   * entries or fields. `false` when the process does not exist (nothing is created).
   */
  touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean>;
  /** Removes these names from `activatedTools` (decayed or evicted); absent names are ignored. */
  removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void>;
  /**
   * Moves the process's `expiresAt` to `expiresAt` (a request touched it), without touching other
   * fields; `false` when the process does not exist (nothing is created).
   */
  touchProcess(key: ProcessKey, expiresAt: number): Promise<boolean>;
  /**
   * The tenant's processes (every project) whose `expiresAt` is after `at` — records stored
   * before idle expiry, without one, are not counted until a read gives them one — and the
   * earliest `expiresAt` among them (null when none): no count before then can be lower but by
   * deletes. A store may drop the expired ones meanwhile.
   */
  countLiveProcesses(tenant: string, at: number): Promise<LiveProcesses>;
  /**
   * Deletes a process's record and its activations; `true` when this call deleted it, `false`
   * when there was none (deleted already, or never stored) — and, with `liveAt`, when the one it
   * deleted had expired by then (it no longer counted among the live ones).
   */
  deleteProcess(key: ProcessKey, liveAt?: number): Promise<boolean>;
}

/** What {@link ProcessStore.countLiveProcesses} answers. */
export interface LiveProcesses {
  readonly live: number;
  readonly nextExpiry: number | null;
}
