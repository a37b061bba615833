import { LRUCache } from "lru-cache";
import * as v from "valibot";
import { CacheCounters, type CacheReport } from "../cache/cache-registry";
import { CAPABILITY_FLOOR } from "../calls/capability-floor";
import type { CascadeRead } from "../cascade/cascade-read";
import { type Generations, requestMarkers } from "../cascade/generations";
import { Errors, type FieldError, VanceError } from "../errors";
import {
  assertProcessId,
  assertProjectId,
  assertTenantId,
  ID_PATTERN,
  InvocableToolNameSchema,
  META_TOOL,
  ModelIdSchema,
  packOf,
} from "../ids";
import { measureJsonSchema } from "../json-schema-size";
import type { ClientToolDeclaration, ProcessKey, ProcessRecord, ProcessStore } from "../ports/process-store";
import type { TenantQuotas } from "../quotas/tenant-quotas";
import {
  HintEntrySchema,
  RecipeEntrySchema,
  type RecipeList,
  type RecipeResolver,
  type RecipeWarning,
  type StalePack,
} from "../recipes/recipe-resolver";
import { PlainText } from "../text";
import type { ToolSnapshot } from "../tools/tool-snapshot";
import type { JsonSchemaValidator } from "../validation/json-schema-validator";
import { ToolHints } from "./tool-family";

/** Recipe and engine names: they become the process's role, spelled like ids. */
const NameSchema = v.pipe(v.string(), v.regex(ID_PATTERN, "a lowercase name"));

/** The body of `POST T/processes` (API.md "Recipes and processes"). */
export const SpawnRequestSchema = v.strictObject({
  recipe: v.optional(NameSchema),
  engine: v.optional(NameSchema),
  engineDefault: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsAdd: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsRemove: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsKeep: v.optional(v.array(HintEntrySchema), []),
  allowedToolsDefer: v.optional(v.array(HintEntrySchema), []),
  allowedToolsDropFirst: v.optional(v.array(HintEntrySchema), []),
  models: v.array(ModelIdSchema),
  clientTools: v.optional(
    v.array(
      v.strictObject({
        name: InvocableToolNameSchema,
        description: v.pipe(v.string(), v.minLength(1), PlainText("description")),
        inputSchema: v.record(v.string(), v.unknown()),
        packHint: v.optional(v.pipe(v.string(), v.maxLength(300), PlainText("packHint"))),
      }),
    ),
    [],
  ),
});

export type SpawnRequest = v.InferOutput<typeof SpawnRequestSchema>;

/** Schema nodes one spawn's client tools may have together (each compiles on the serving thread). */
export const MAX_CLIENT_SCHEMA_NODES = 3_000;

/** How long activations live and how many a process keeps (spec §13, §14.2). */
export interface ActivationSettings {
  /** An activation decays after this long without use. */
  readonly activationTtlMs: number;
  /** At most this many activated tools; the least recently used go first. */
  readonly maxActivated: number;
}

export const DEFAULT_ACTIVATION_SETTINGS: ActivationSettings = {
  activationTtlMs: 30 * 60 * 1000,
  // The spec's 40 let a searching model keep 40 tools on the wire (issue 36: at most 15 beyond
  // the meta-tools after 20 searches); a tool pushed out is one `tool_description` away.
  maxActivated: 15,
};

/** The share of the activation TTL within which a use does not re-stamp an activation (18 s of 30 min). */
export const KEEP_ALIVE_PRECISION = 0.01;

/**
 * How long a process lives without a request that reads it (a manifest, a call, an MCP message,
 * a GET of its record): after it, the process is gone (404 `process_not_found`) and no longer
 * counts among its tenant's live processes (`VANCE_PROCESS_IDLE_TTL`).
 */
export const DEFAULT_PROCESS_IDLE_TTL_MS = 24 * 60 * 60 * 1000;

export interface ProcessRecordsOptions {
  readonly state: Pick<
    ProcessStore,
    | "createProcess"
    | "getProcessAndGenerations"
    | "touchActivatedTools"
    | "removeActivatedTools"
    | "deleteProcess"
    | "touchProcess"
  >;
  /**
   * Learns the generations read with each record: the request's read then holds them,
   * so a manifest or a call in the process needs no second state-store request.
   */
  readonly generations: Pick<Generations, "readAlong" | "read" | "ensure">;
  readonly recipes: Pick<RecipeResolver, "resolve">;
  /** Checks the client tools' input schemas of a spawn (the instance's validator). */
  readonly jsonSchemas: JsonSchemaValidator;
  readonly settings?: Partial<ActivationSettings>;
  /** {@link DEFAULT_PROCESS_IDLE_TTL_MS} unless given. */
  readonly idleTtlMs?: number;
  /**
   * Allow sets and whole `allowedToolsAdd` lists of the records read (built by the composition
   * root, which lists them in `/v1/metrics`); a cache of this instance's own without it.
   */
  readonly caches?: ProcessRecordCaches;
  /**
   * The tenant's process quotas, taken before a record is stored (429 `quota_exceeded` past
   * them) and given back when it ends; without them, processes are not counted (tests of other rules).
   */
  readonly quotas?: Pick<TenantQuotas, "takeProcess" | "releaseProcess">;
  /** Epoch milliseconds. */
  readonly now?: () => number;
  readonly newId?: () => string;
}

/**
 * Process records (spec §6, §13): spawning resolves the recipe once and freezes the allow set;
 * the record then carries the process's activations — touched by use, decayed after the TTL and
 * capped to the most recent `maxActivated`.
 *
 * Only writes write: decay and the cap are applied when a record is read (`get` answers the live
 * activations alone), and the stored record loses the decayed and evicted names with the next
 * write of its activations (`touch`) — so a manifest or a record GET costs reads only.
 */
export class ProcessRecords {
  private readonly settings: ActivationSettings;
  private readonly idleTtlMs: number;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly caches: ProcessRecordCaches;
  /**
   * Per record `get` answered: the stored activations it left out (decayed or past the cap),
   * which the next `touch` of that record removes from the store.
   */
  private readonly decayed = new WeakMap<ProcessRecord, readonly string[]>();
  /**
   * Per record `get` answered: the version it was read with ({@link versionOf}). Like
   * {@link decayed}, what one request's read hands on with the object it answered — no memo: the
   * caches are keyed by the version string, never by a record or one of its arrays.
   */
  private readonly versions = new WeakMap<ProcessRecord, string>();

  constructor(private readonly options: ProcessRecordsOptions) {
    this.settings = { ...DEFAULT_ACTIVATION_SETTINGS, ...options.settings };
    this.idleTtlMs = options.idleTtlMs ?? DEFAULT_PROCESS_IDLE_TTL_MS;
    this.now = options.now ?? (() => Date.now());
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
    this.caches = options.caches ?? new ProcessRecordCaches();
  }

  /** What the process may invoke: its frozen allow set, its packs' sub-tools and the capability floor. */
  allowSet(record: ProcessRecord): AllowSet {
    return this.caches.allowSet(record, this.versions.get(record));
  }

  /**
   * Resolves the recipe once and stores the frozen allow set. Client tools' input schemas must
   * compile (422 `validation_failed` otherwise): a process never carries a schema its calls
   * could not be checked against.
   */
  async spawn(snapshot: ToolSnapshot, request: SpawnRequest): Promise<ProcessRecord> {
    const { record } = await this.prepare(snapshot, request);
    await this.create(record);
    return record;
  }

  /**
   * The record `spawn` would store now, not stored, with what its caller should hear about it:
   * the referenced packs whose source is not current, and the entries that name nothing. The
   * snapshot read the generations, so what follows in the request answers from them.
   */
  async prepare(snapshot: ToolSnapshot, request: SpawnRequest): Promise<PreparedProcess> {
    const { tenant, project } = snapshot;
    await assertUsableClientSchemas(tenant, request.clientTools, this.options.jsonSchemas);
    const removed = new Set(request.allowedToolsRemove);
    const clientTools = request.clientTools.filter((tool) => !removed.has(tool.name));
    const clientNames = clientTools.map((tool) => tool.name);
    const resolved = await this.options.recipes.resolve(snapshot, request, {
      clientTools: request.clientTools.map((tool) => tool.name),
    });
    const record: ProcessRecord = {
      tenant,
      project,
      processId: this.newId(),
      createdAt: new Date(this.now()).toISOString(),
      recipe: request.recipe ?? null,
      engine: request.engine ?? null,
      role: request.recipe ?? request.engine ?? "default",
      allowedTools: [...new Set([...resolved.allowedTools, ...clientNames])].sort(),
      allowedPacks: resolved.allowedPacks,
      excludedTools: resolved.excludedTools,
      allowedToolsAdd: [...new Set(request.allowedToolsAdd.filter((entry) => !entry.startsWith("@")))].sort(),
      allowedToolsKeep: request.allowedToolsKeep,
      allowedToolsDefer: request.allowedToolsDefer,
      allowedToolsDropFirst: request.allowedToolsDropFirst,
      models: request.models,
      clientTools: clientTools as ClientToolDeclaration[],
      activatedTools: {},
      expiresAt: this.now() + this.idleTtlMs,
    };
    const warnings = [
      ...resolved.warnings,
      ...hintWarnings(record, processAllowSet(record)),
      ...(await this.modelWarnings(request.models, snapshot)),
    ];
    return { record, stalePacks: resolved.stalePacks, warnings };
  }

  /** Stores a prepared record; 409 `process_conflict` when its id is taken. */
  async create(record: ProcessRecord): Promise<void> {
    const quotas = this.options.quotas;
    await quotas?.takeProcess(record.tenant);
    let created = false;
    try {
      created = await this.options.state.createProcess(storedProcessRecord(record));
    } finally {
      // A record not stored takes no place among the tenant's live processes (its hour's count stays).
      if (!created) await quotas?.releaseProcess(record.tenant);
    }
    if (!created) throw new VanceError("process_conflict", "a process with this id exists already; retry");
  }

  /**
   * Ends a process: deletes its record and activations, and gives its place among the tenant's
   * live processes back (`VANCE_QUOTA_LIVE_PROCESSES`); 404 `process_not_found` when there is none,
   * or it had expired (its record is deleted, and it had no place left to give back).
   */
  async end(tenant: string, project: string, processId: string): Promise<void> {
    assertTenantId(tenant);
    assertProjectId(project);
    assertProcessId(processId);
    if (!(await this.options.state.deleteProcess({ tenant, project, processId }, this.now()))) {
      throw processNotFound(processId);
    }
    await this.options.quotas?.releaseProcess(tenant);
  }

  /**
   * The record `spawn` would store now, not stored: what a process of this request would see
   * (the web listing's model view) without leaving a process behind.
   */
  async draft(snapshot: ToolSnapshot, request: SpawnRequest): Promise<ProcessRecord> {
    return (await this.prepare(snapshot, request)).record;
  }

  /**
   * A warning per model whose instance the request's model catalog (`snapshot.catalog`) does not
   * know: no limit, no provider, nothing to call.
   */
  private async modelWarnings(models: readonly string[], snapshot: ToolSnapshot): Promise<RecipeWarning[]> {
    if (models.length === 0) return [];
    const { providers } = await snapshot.catalog.catalog();
    return models.flatMap((model): RecipeWarning[] => {
      const instance = model.slice(0, model.indexOf("/"));
      if (Object.hasOwn(providers, instance)) return [];
      const known = Object.keys(providers).sort().join(", ");
      return [
        {
          code: "unknown_model_instance",
          list: "models",
          entry: model,
          message: `the catalog has no instance '${instance}' (known: ${known || "none"}): no tool limit applies to it`,
        },
      ];
    });
  }

  /**
   * The stored record with its live activations (decayed and evicted ones left out, see
   * {@link liveActivations}); 404 `process_not_found`. Read in one state-store request with the
   * generations of everything the process's turn may take from a cache (`requestMarkers`), so
   * what follows in this request sees every write that finished before it.
   */
  async get(tenant: string, project: string, processId: string, read: CascadeRead): Promise<ProcessRecord> {
    assertTenantId(tenant);
    assertProjectId(project);
    assertProcessId(processId);
    const markers = requestMarkers(tenant, project);
    const stored = await read.readAlong(this.options.generations, markers, async () => {
      const read = await this.options.state.getProcessAndGenerations({ tenant, project, processId }, markers);
      return { value: read, generations: read.generations };
    });
    const record = stored.process;
    const now = this.now();
    if (!record || (record.expiresAt !== undefined && record.expiresAt <= now)) {
      throw processNotFound(processId);
    }
    await this.keepAlive(record, now);
    const version = stored.version === undefined ? undefined : recordVersionKey(record, stored.version);
    const answered = this.withLiveActivations(this.caches.readRecord(record, version));
    if (version !== undefined) this.versions.set(answered, version);
    return answered;
  }

  /**
   * The version of what `record` was read with but its activations and expiry (its tenant,
   * project and id, and the store's version of the fields written at spawn): the key of what is
   * derived from those fields, in this instance and in the surface's per-process memo. Undefined
   * for a record not read by `get` (a draft) or stored before versions: nothing is kept for it.
   */
  versionOf(record: ProcessRecord): string | undefined {
    return this.versions.get(record);
  }

  /**
   * Moves a read record's expiry to a full idle TTL from `now` — but only when it was set more
   * than {@link KEEP_ALIVE_PRECISION} of the TTL ago (14.4 min of 24 h), so a busy process costs
   * one state write per that span, not one per request; it expires up to that span early. A
   * record stored before idle expiry gets one at its first read.
   */
  private async keepAlive(record: ProcessRecord, now: number): Promise<void> {
    const setAt = record.expiresAt === undefined ? undefined : record.expiresAt - this.idleTtlMs;
    if (setAt !== undefined && now - setAt < this.idleTtlMs * KEEP_ALIVE_PRECISION) return;
    await this.options.state.touchProcess(processKey(record), now + this.idleTtlMs);
  }

  /**
   * Whether `record` holds `name` activated at most {@link KEEP_ALIVE_PRECISION} of the TTL before
   * `at`: a keep-alive `touch` then changes no turn's tools (the activation lives on either way),
   * only its stamp — so a tool an engine calls on every turn costs one state write per that span,
   * not one per call (issue 39). The stamp is that much coarser: an activation kept alive this way
   * decays up to that span earlier, and among activations stamped within it the cap's order is
   * the order they were stamped in.
   */
  keptAliveRecently(record: ProcessRecord, name: string, at: number): boolean {
    const stamped = Object.hasOwn(record.activatedTools, name) ? record.activatedTools[name] : undefined;
    return stamped !== undefined && at - stamped < this.settings.activationTtlMs * KEEP_ALIVE_PRECISION;
  }

  /**
   * Marks `names` as used at `at` (epoch milliseconds): activated, or kept alive, from the next
   * turn. The same write takes out of the stored record what reads leave out already: the
   * activations that had decayed when `record` was read, and those the touched names push past
   * `maxActivated`.
   */
  async touch(record: ProcessRecord, names: readonly string[], at: number): Promise<void> {
    const key = processKey(record);
    const gone = this.outdatedBy(record, names);
    await Promise.all([
      this.options.state.touchActivatedTools(key, names, at),
      gone.length === 0 ? undefined : this.options.state.removeActivatedTools(key, gone),
    ]);
  }

  /**
   * Activations younger than the TTL, the most recent `maxActivated`: computed on read, never
   * written (the next `touch` removes the rest from the store).
   */
  liveActivations(record: ProcessRecord): Map<string, number> {
    return new Map(this.live(record.activatedTools));
  }

  /** `activatedTools`' live entries, most recent first. */
  private live(activated: ProcessRecord["activatedTools"]): [string, number][] {
    const now = this.now();
    return Object.entries(activated)
      .sort((a, b) => b[1] - a[1])
      .filter(([, at]) => now - at <= this.settings.activationTtlMs)
      .slice(0, this.settings.maxActivated);
  }

  /** `record` with its live activations alone; the names left out are remembered for its next `touch`. */
  private withLiveActivations(record: ProcessRecord): ProcessRecord {
    const entries = Object.entries(record.activatedTools);
    const live = new Set(this.live(record.activatedTools).map(([name]) => name));
    if (live.size === entries.length) return record;
    const read: ProcessRecord = {
      ...record,
      activatedTools: Object.fromEntries(entries.filter(([name]) => live.has(name))),
    };
    if (Object.isFrozen(record)) Object.freeze(read);
    this.decayed.set(
      read,
      entries.map(([name]) => name).filter((name) => !live.has(name)),
    );
    return read;
  }

  /**
   * The stored activations a touch of `names` leaves outdated: those that had decayed when
   * `record` was read, and the oldest past `maxActivated` once the touched names (the newest) are in.
   */
  private outdatedBy(record: ProcessRecord, names: readonly string[]): string[] {
    const touched = new Set(names);
    const decayed = (this.decayed.get(record) ?? []).filter((name) => !touched.has(name));
    const room = Math.max(0, this.settings.maxActivated - touched.size);
    const evicted = Object.entries(record.activatedTools)
      .filter(([name]) => !touched.has(name))
      .sort((a, b) => b[1] - a[1])
      .slice(room)
      .map(([name]) => name);
    return [...decayed, ...evicted];
  }
}

/** A spawn's record before it is stored, and what the spawn answers about it. */
export interface PreparedProcess {
  readonly record: ProcessRecord;
  readonly stalePacks: readonly StalePack[];
  readonly warnings: readonly RecipeWarning[];
}

/** The names a caller may invoke. */
export interface AllowSet {
  has(name: string): boolean;
}

/**
 * A process's allow set: its frozen names, the sub-tools of its referenced packs (but the
 * excluded ones) and the capability floor (spec §13.1).
 */
class ProcessAllowSet implements AllowSet {
  private readonly record: ProcessRecord;
  /** Built at the `LOOKUPS_BEFORE_SET`-th look-up: a call asks about one name or two. */
  private names: ReadonlySet<string> | undefined;
  private lookups = 0;
  private readonly packs: ReadonlySet<string>;
  private readonly excluded: ReadonlySet<string>;

  constructor(record: ProcessRecord) {
    this.record = record;
    this.packs = new Set(record.allowedPacks);
    this.excluded = new Set(record.excludedTools);
  }

  has(name: string): boolean {
    if (this.named(name)) return true;
    const pack = packOf(name);
    return pack !== null && this.packs.has(pack) && !this.excluded.has(name);
  }

  /**
   * Whether the frozen names or the floor hold `name`. A record read for one call (its
   * activations change it at every search, so it is read anew) is asked about a name or two: a
   * scan of the names answers them without hashing a 17,000-name allow set per call (issue 36).
   */
  private named(name: string): boolean {
    if (this.names) return this.names.has(name);
    if (++this.lookups >= LOOKUPS_BEFORE_SET) {
      this.names = new Set([...this.record.allowedTools, ...CAPABILITY_FLOOR]);
      return this.names.has(name);
    }
    return this.record.allowedTools.includes(name) || CAPABILITY_FLOOR.includes(name);
  }
}

/** Look-ups of one allow set answered by a scan of its names; from this one on, by a set. */
const LOOKUPS_BEFORE_SET = 8;

/**
 * What `ProcessRecords` derives from the records it reads — allow sets, and whole
 * `allowedToolsAdd` lists — kept by the record's version ({@link ProcessRecords.versionOf}: its
 * key and the store's version of the fields written at spawn), never by an object: a record read
 * again as a fresh-but-equal object (parsed again from the same stored version) finds them, and a
 * record stored anew under the same id (another version) never gets the old ones. A record without
 * a version (a draft, a row stored before versions) gets them built for the request. One instance
 * per composition root, which lists both in `/v1/metrics` (`allowSets`); bounded by the names of
 * the records they were derived from.
 */
export class ProcessRecordCaches {
  readonly #derived: LRUCache<string, DerivedFromRecord>;
  readonly #allowSetReads = new CacheCounters();
  readonly #expandedAddReads = new CacheCounters();

  constructor(options: { readonly maxNames?: number } = {}) {
    this.#derived = new LRUCache<string, DerivedFromRecord>({
      maxSize: options.maxNames ?? MAX_DERIVED_NAMES,
      sizeCalculation: (derived) => derived.names,
    });
  }

  /** The allow-set cache's counters, with the versions it holds. */
  allowSetReport(): CacheReport {
    return this.#allowSetReads.report({ entries: this.#derived.size });
  }

  /** The counters of the cache of whole `allowedToolsAdd` lists. */
  allowedToolsAddReport(): CacheReport {
    return this.#expandedAddReads.report();
  }

  /** {@link processAllowSet}, kept for the record's `version` (built for this caller without one). */
  allowSet(record: ProcessRecord, version: string | undefined): AllowSet {
    if (version === undefined) return new ProcessAllowSet(record);
    const derived = this.#entry(version, record);
    let allowed = this.#allowSetReads.read(derived.allowSet);
    if (!allowed) {
      allowed = new ProcessAllowSet(record);
      derived.allowSet = allowed;
    }
    return allowed;
  }

  /** {@link readProcessRecord}, its whole `allowedToolsAdd` kept for the record's `version`. */
  readRecord(stored: ProcessRecord, version: string | undefined): ProcessRecord {
    if (version === undefined || stored.allowedToolsAddAt === undefined) return readProcessRecord(stored);
    // No cache object of two closures a turn: the bundles' `keepNames` names each one it makes.
    let add = this.#expandedAddReads.read(this.#derived.get(version)?.add);
    if (add === undefined) {
      add = expandedToolsAdd(stored, stored.allowedToolsAddAt);
      this.#entry(version, stored).add = add;
    }
    return withToolsAdd(stored, add);
  }

  #entry(version: string, record: ProcessRecord): DerivedFromRecord {
    let derived = this.#derived.get(version);
    if (!derived) {
      derived = { names: 1 + record.allowedTools.length };
      this.#derived.set(version, derived);
    }
    return derived;
  }
}

/** What {@link ProcessRecordCaches} keeps for one record version. */
interface DerivedFromRecord {
  /** What the entry is accounted by: the record's allowed names (and one). */
  readonly names: number;
  allowSet?: AllowSet;
  add?: readonly string[];
}

/** Names of the record versions {@link ProcessRecordCaches} keeps derived values of; the least recently used go past it. */
const MAX_DERIVED_NAMES = 400_000;

/** The key of a record's stored version: its process and the store's version of its spawn-time fields. */
function recordVersionKey(record: ProcessKey, version: string): string {
  return `${record.tenant}/${record.project}/${record.processId}@${version}`;
}

/**
 * The allow set of a call on a served MCP surface (issue 36): the process's, and `invoke_tool`.
 * Frameworks that fetch their tool list once (the AI SDK, LangChain) refuse a call of a tool
 * `tool_description` activated after; through `invoke_tool` they still reach it. It grants
 * nothing new: its target passes the process's own allow set.
 */
export function servedAllowSet(allowed: AllowSet): AllowSet {
  // A method, not an arrow property, which `keepNames` would rename on every call.
  return {
    has(name) {
      return name === META_TOOL.invoke || allowed.has(name);
    },
  };
}

/** What the process may invoke: its frozen allow set, its packs' sub-tools and the capability floor. */
export function processAllowSet(record: ProcessRecord): AllowSet {
  return new ProcessAllowSet(record);
}

/**
 * A warning per hint entry (`allowedToolsKeep`, `…Defer`, `…DropFirst`) that steers nothing: a
 * name outside the allow set, or a pattern that matches none of its names. Pack sub-tools by
 * reference are judged by their pack.
 */
function hintWarnings(record: ProcessRecord, allowed: AllowSet): RecipeWarning[] {
  const names = [...record.allowedTools, ...CAPABILITY_FLOOR];
  const warnings: RecipeWarning[] = [];
  const lists: [RecipeList, readonly string[]][] = [
    ["allowedToolsKeep", record.allowedToolsKeep],
    ["allowedToolsDefer", record.allowedToolsDefer],
    ["allowedToolsDropFirst", record.allowedToolsDropFirst],
  ];
  for (const [list, entries] of lists) {
    for (const entry of entries) {
      if (entry.endsWith("*")) {
        const hints = new ToolHints([entry]);
        const prefix = entry.slice(0, -1);
        const packPrefix = record.allowedPacks.some(
          (pack) => `${pack}__`.startsWith(prefix) || prefix.startsWith(`${pack}__`),
        );
        if (packPrefix || names.some((name) => hints.match(name) !== null)) continue;
        warnings.push({
          code: "matches_nothing",
          list,
          entry,
          message: `the pattern '${entry}' matches no tool of this process`,
        });
      } else if (!allowed.has(entry)) {
        warnings.push({
          code: "not_allowed",
          list,
          entry,
          message: `'${entry}' is not in this process's allowed tools, so this hint changes nothing`,
        });
      }
    }
  }
  return warnings;
}

/**
 * The record as stored: the names added by name that the allow set holds (typically all of
 * them, often thousands) as positions in `allowedTools`, not as their text a second time.
 */
export function storedProcessRecord(record: ProcessRecord): ProcessRecord {
  const { allowedToolsAddAt: _ignored, ...rest } = record;
  if (record.allowedToolsAdd.length === 0) return rest;
  const positions = new Map(record.allowedTools.map((name, i) => [name, i]));
  const at: number[] = [];
  const others: string[] = [];
  for (const name of record.allowedToolsAdd) {
    const position = positions.get(name);
    if (position === undefined) others.push(name);
    else at.push(position);
  }
  if (at.length === 0) return rest;
  return { ...rest, allowedToolsAdd: others, allowedToolsAddAt: encodeRanges(at) };
}

/**
 * A stored record as the service uses it: `allowedToolsAdd` whole again (sorted). A record of the
 * shape before (no `allowedToolsAddAt`) is read as it is. `ProcessRecordCaches.readRecord` keeps
 * the whole list of the record's version.
 */
export function readProcessRecord(stored: ProcessRecord): ProcessRecord {
  const at = stored.allowedToolsAddAt;
  return at === undefined ? stored : withToolsAdd(stored, expandedToolsAdd(stored, at));
}

/** The whole `allowedToolsAdd` of a stored record (`at`: its `allowedToolsAddAt`), sorted and frozen. */
function expandedToolsAdd(stored: ProcessRecord, at: string): readonly string[] {
  const added = decodeRanges(at).flatMap((i) => {
    const name = stored.allowedTools[i];
    return name === undefined ? [] : [name];
  });
  return Object.freeze([...new Set([...added, ...stored.allowedToolsAdd])].sort());
}

/** `stored` as the service reads it: `add` as its whole `allowedToolsAdd`, no `allowedToolsAddAt`. */
function withToolsAdd(stored: ProcessRecord, add: readonly string[]): ProcessRecord {
  const { allowedToolsAddAt: _at, ...rest } = stored;
  return { ...rest, allowedToolsAdd: add };
}

/** 404 `process_not_found`: never stored, ended, or expired after its idle TTL. */
function processNotFound(processId: string): VanceError {
  return new VanceError(
    "process_not_found",
    `no process '${processId}' in this project (ended, or expired after its idle TTL without a request)`,
  );
}

/** Sorted positions as runs: `0-4999,5012`. */
function encodeRanges(positions: number[]): string {
  const sorted = [...new Set(positions)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    runs.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return runs.join(",");
}

/** The positions of `encodeRanges`' text; a part that is no run is skipped. */
function decodeRanges(text: string): number[] {
  const positions: number[] = [];
  for (const run of text.split(",")) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(run);
    if (!match) continue;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    for (let i = from; i <= to && i - from < MAX_ALLOWED_POSITIONS; i++) positions.push(i);
  }
  return positions;
}

/** A run longer than any allow set is a corrupt record's; it is cut rather than expanded. */
const MAX_ALLOWED_POSITIONS = 1_000_000;

/** The key of a stored process. */
function processKey(record: ProcessRecord): ProcessKey {
  return { tenant: record.tenant, project: record.project, processId: record.processId };
}

async function assertUsableClientSchemas(
  tenant: string,
  clientTools: SpawnRequest["clientTools"],
  jsonSchemas: JsonSchemaValidator,
): Promise<void> {
  const errors: FieldError[] = [];
  // Each schema compiles on the serving thread: the spawn's schemas share one budget of nodes.
  let nodes = 0;
  for (const tool of clientTools) {
    const measured = measureJsonSchema(tool.inputSchema);
    nodes += typeof measured === "number" ? measured : 0;
  }
  if (nodes > MAX_CLIENT_SCHEMA_NODES) {
    throw Errors.validationFailed("the client tools' input schemas are too large together", [
      {
        path: "clientTools",
        message: `their schemas have ${nodes} nodes in all (refs expanded); at most ${MAX_CLIENT_SCHEMA_NODES} are accepted`,
      },
    ]);
  }
  // Large schemas are checked on a worker thread; the others compile in the tenant's share of the
  // serving thread: one tenant's flood of spawns with fresh schemas waits for its own turns, and
  // pays with its own compile time.
  const problems = await jsonSchemas.inputSchemaProblemsAsTenant(
    tenant,
    clientTools.map((tool) => tool.inputSchema),
  );
  problems.forEach((problem, index) => {
    if (problem) errors.push({ path: `clientTools.${index}.inputSchema`, message: problem });
  });
  if (errors.length > 0) {
    throw Errors.validationFailed("a client tool's inputSchema is not a usable JSON Schema", errors);
  }
}
