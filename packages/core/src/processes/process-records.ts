import * as v from "valibot";
import { type Generations, requestMarkers } from "../cascade/generations";
import { Errors, type FieldError, VanceError } from "../errors";
import { assertProjectId, assertTenantId, ID_PATTERN, InvocableToolNameSchema, ModelIdSchema } from "../ids";
import { measureJsonSchema } from "../json-schema-size";
import { toolInputSchemaProblem } from "../json-schema-validator";
import type { ClientToolDeclaration, ProcessKey, ProcessRecord, StateStore } from "../ports/state-store";
import { HintEntrySchema, RecipeEntrySchema, type RecipeResolver } from "../recipes/recipe-resolver";
import { MANDATORY_TOOLS } from "../surface/classify";
import { PlainText } from "../text";

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
  maxActivated: 40,
};

export interface ProcessRecordsOptions {
  readonly state: Pick<
    StateStore,
    "createProcess" | "getProcessAndGenerations" | "touchActivatedTools" | "removeActivatedTools"
  >;
  /**
   * Learns the generations read with each record: a manifest or a call in the process then
   * trusts them (`"known"`) and needs no second state-store request.
   */
  readonly generations: Pick<Generations, "readAlong" | "read">;
  readonly recipes: Pick<RecipeResolver, "resolve">;
  readonly settings?: Partial<ActivationSettings>;
  /** Epoch milliseconds. */
  readonly now?: () => number;
  readonly newId?: () => string;
}

/**
 * Process records (spec §6, §13): spawning resolves the recipe once and freezes the allow set;
 * the record then carries the process's activations — touched by use, decayed after the TTL and
 * capped to the most recent `maxActivated`.
 */
export class ProcessRecords {
  private readonly settings: ActivationSettings;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(private readonly options: ProcessRecordsOptions) {
    this.settings = { ...DEFAULT_ACTIVATION_SETTINGS, ...options.settings };
    this.now = options.now ?? (() => Date.now());
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
  }

  /**
   * Resolves the recipe once and stores the frozen allow set. Client tools' input schemas must
   * compile (422 `validation_failed` otherwise): a process never carries a schema its calls
   * could not be checked against.
   */
  async spawn(tenant: string, project: string, request: SpawnRequest): Promise<ProcessRecord> {
    const record = await this.build(tenant, project, request);
    if (!(await this.options.state.createProcess(record))) {
      throw new VanceError("process_conflict", 409, "a process with this id exists already; retry");
    }
    return record;
  }

  /**
   * The record `spawn` would store now, not stored: what a process of this request would see
   * (the web listing's model view) without leaving a process behind. The generations are read
   * first, as `get` reads them with a record, so the surface below may trust them.
   */
  async draft(tenant: string, project: string, request: SpawnRequest): Promise<ProcessRecord> {
    assertTenantId(tenant);
    assertProjectId(project);
    await this.options.generations.read(requestMarkers(tenant, project));
    return this.build(tenant, project, request);
  }

  private async build(tenant: string, project: string, request: SpawnRequest): Promise<ProcessRecord> {
    assertTenantId(tenant);
    assertProjectId(project);
    assertUsableClientSchemas(request.clientTools);
    const resolved = await this.options.recipes.resolve(tenant, project, request);
    const removed = new Set(request.allowedToolsRemove);
    const clientNames = request.clientTools.map((tool) => tool.name).filter((name) => !removed.has(name));
    const record: ProcessRecord = {
      tenant,
      project,
      processId: this.newId(),
      createdAt: new Date(this.now()).toISOString(),
      recipe: request.recipe ?? null,
      engine: request.engine ?? null,
      role: request.recipe ?? request.engine ?? "default",
      allowedTools: [...new Set([...resolved, ...clientNames])].sort(),
      allowedToolsAdd: request.allowedToolsAdd.filter((entry) => !entry.startsWith("@")),
      allowedToolsKeep: request.allowedToolsKeep,
      allowedToolsDefer: request.allowedToolsDefer,
      allowedToolsDropFirst: request.allowedToolsDropFirst,
      models: request.models,
      clientTools: request.clientTools.filter((tool) => !removed.has(tool.name)) as ClientToolDeclaration[],
      activatedTools: {},
    };
    return record;
  }

  /**
   * The stored record; 404 `process_not_found`. Read in one state-store request with the
   * generations of everything the process's turn may take from a cache (`requestMarkers`), so
   * what follows in this request sees every write that finished before it.
   */
  async get(tenant: string, project: string, processId: string): Promise<ProcessRecord> {
    assertTenantId(tenant);
    assertProjectId(project);
    if (!/^[A-Za-z0-9-]{1,64}$/.test(processId)) throw new VanceError("invalid_id", 400, "not a process id");
    const markers = requestMarkers(tenant, project);
    const record = await this.options.generations.readAlong(markers, async () => {
      const read = await this.options.state.getProcessAndGenerations({ tenant, project, processId }, markers);
      return { value: read.process, generations: read.generations };
    });
    if (!record) throw new VanceError("process_not_found", 404, `no process '${processId}' in this project`);
    return record;
  }

  /** Marks `names` as used at `at` (epoch milliseconds): activated, or kept alive, from the next turn. */
  async touch(record: ProcessRecord, names: readonly string[], at: number): Promise<void> {
    await this.options.state.touchActivatedTools(processKey(record), names, at);
  }

  /** Activations younger than the TTL, the most recent `maxActivated`; the rest are removed from the record. */
  async liveActivations(record: ProcessRecord): Promise<Map<string, number>> {
    const now = this.now();
    const entries = Object.entries(record.activatedTools).sort((a, b) => b[1] - a[1]);
    const live = entries
      .filter(([, at]) => now - at <= this.settings.activationTtlMs)
      .slice(0, this.settings.maxActivated);
    if (live.length < entries.length) {
      const keep = new Set(live.map(([name]) => name));
      await this.options.state.removeActivatedTools(
        processKey(record),
        entries.map(([name]) => name).filter((name) => !keep.has(name)),
      );
    }
    return new Map(live);
  }
}

/** Allow sets by frozen `allowedTools` array: a store that shares parsed records reuses them. */
const allowSets = new WeakMap<readonly string[], ReadonlySet<string>>();

/** What the process may invoke: its frozen allow set and the capability floor (spec §13.1). */
export function processAllowSet(record: ProcessRecord): ReadonlySet<string> {
  const names = record.allowedTools;
  // Only a frozen array cannot change under the cached set.
  const frozen = Object.isFrozen(names);
  let allowed = frozen ? allowSets.get(names) : undefined;
  if (!allowed) {
    allowed = new Set([...names, ...MANDATORY_TOOLS]);
    if (frozen) allowSets.set(names, allowed);
  }
  return allowed;
}

/** The key of a stored process. */
function processKey(record: ProcessRecord): ProcessKey {
  return { tenant: record.tenant, project: record.project, processId: record.processId };
}

function assertUsableClientSchemas(clientTools: SpawnRequest["clientTools"]): void {
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
  clientTools.forEach((tool, index) => {
    const problem = toolInputSchemaProblem(tool.inputSchema);
    if (problem) errors.push({ path: `clientTools.${index}.inputSchema`, message: problem });
  });
  if (errors.length > 0) {
    throw Errors.validationFailed("a client tool's inputSchema is not a usable JSON Schema", errors);
  }
}
