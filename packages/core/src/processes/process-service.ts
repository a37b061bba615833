import * as v from "valibot";
import type { CallScope, ProcessToolsApi, ToolOutcome } from "../builtins/built-in-tool";
import { MAX_DESCRIBE } from "../builtins/meta-tools";
import type { DispatchResult, ToolDispatcher } from "../dispatch/tool-dispatcher";
import { Errors, type FieldError, VanceError } from "../errors";
import { assertProjectId, assertTenantId, ID_PATTERN, InvocableToolNameSchema, ModelIdSchema } from "../ids";
import type { JsonSchema } from "../json-schema";
import { toolInputSchemaProblem } from "../json-schema-validator";
import type { Logger } from "../ports/logger";
import type { ClientToolDeclaration, ProcessKey, ProcessRecord, StateStore } from "../ports/state-store";
import { HintEntrySchema, RecipeEntrySchema, type RecipeResolver } from "../recipes/recipe-resolver";
import { type Classification, classifyTools, MANDATORY_TOOLS, type SurfaceTool } from "../surface/classify";
import { demotedDiscoveryBlock, discoveryBlock } from "../surface/discovery";
import { toWireTool, type WireFormat } from "../surface/wire";
import type { ServerToolService } from "../tools/server-tool-service";

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
        description: v.pipe(v.string(), v.minLength(1)),
        inputSchema: v.record(v.string(), v.unknown()),
        packHint: v.optional(v.pipe(v.string(), v.maxLength(300))),
      }),
    ),
    [],
  ),
});

export type SpawnRequest = v.InferOutput<typeof SpawnRequestSchema>;

/** The budget a model chain allows (min over the chain; null for no known limit). */
export interface ToolBudget {
  budgetForChain(models: readonly string[]): Promise<{ readonly maxTools: number | null }>;
}

export interface ProcessSettings {
  /** An activation decays after this long without use. */
  readonly activationTtlMs: number;
  /** At most this many activated tools; the least recently used go first. */
  readonly maxActivated: number;
  /** Slots kept free for the engine's own action tool appended outside classification. */
  readonly externalReserve: number;
}

export const DEFAULT_PROCESS_SETTINGS: ProcessSettings = {
  activationTtlMs: 30 * 60 * 1000,
  maxActivated: 40,
  externalReserve: 1,
};

/** A turn's tool manifest (API.md). */
export interface Manifest {
  readonly tools: Record<string, unknown>[];
  readonly primary: string[];
  readonly deferred: string[];
  readonly demoted: string[];
  readonly budget: {
    readonly maxTools: number | null;
    readonly reserve: number;
    readonly limit: number | null;
  };
  readonly discoveryBlock: string;
  readonly demotedDiscoveryBlock: string;
}

export interface ProcessServiceOptions {
  readonly tools: ServerToolService;
  readonly state: StateStore;
  readonly dispatcher: ToolDispatcher;
  readonly recipes: RecipeResolver;
  readonly budget: ToolBudget;
  readonly logger: Logger;
  readonly settings?: Partial<ProcessSettings>;
  /** Epoch milliseconds. */
  readonly now?: () => number;
  readonly newId?: () => string;
}

interface Surface {
  readonly record: ProcessRecord;
  readonly tools: ReadonlyMap<string, SurfaceTool>;
  readonly classification: Classification;
  readonly maxTools: number | null;
  readonly limit: number | null;
}

const MANDATORY = new Set(MANDATORY_TOOLS);

/**
 * Processes (spec §6, §13, §14): spawning freezes the recipe's allow set; each manifest
 * classifies the process's tools into primary and deferred under the chain's budget; calls
 * inside a process check the allow set, activate deferred tools and count usage.
 */
export class ProcessService {
  private readonly settings: ProcessSettings;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(private readonly options: ProcessServiceOptions) {
    this.settings = { ...DEFAULT_PROCESS_SETTINGS, ...options.settings };
    this.now = options.now ?? (() => Date.now());
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
  }

  /**
   * Resolves the recipe once and stores the frozen allow set. Client tools' input schemas must
   * compile (422 `validation_failed` otherwise): a process never carries a schema its calls
   * could not be checked against.
   */
  async spawn(tenant: string, project: string, request: SpawnRequest): Promise<ProcessRecord> {
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
    if (!(await this.options.state.createProcess(record))) {
      throw new VanceError("process_conflict", 409, "a process with this id exists already; retry");
    }
    return record;
  }

  /** The stored record; 404 `process_not_found`. */
  async get(tenant: string, project: string, processId: string): Promise<ProcessRecord> {
    assertTenantId(tenant);
    assertProjectId(project);
    if (!/^[A-Za-z0-9-]{1,64}$/.test(processId)) throw new VanceError("invalid_id", 400, "not a process id");
    const record = await this.options.state.getProcess({ tenant, project, processId });
    if (!record) throw new VanceError("process_not_found", 404, `no process '${processId}' in this project`);
    return record;
  }

  /** The turn's manifest: the tools array (sorted by name), the buckets, the budget and the two discovery blocks. */
  async manifest(key: ProcessKey, format: WireFormat, additional: readonly string[] = []): Promise<Manifest> {
    const record = await this.get(key.tenant, key.project, key.processId);
    // A skill may only bring tools the process can also call: the manifest never offers a 403.
    const outside = additional.filter((name) => !record.allowedTools.includes(name));
    if (outside.length > 0) {
      throw new VanceError(
        "tool_not_allowed",
        403,
        `not in this process's allowed tools: ${outside.join(", ")}`,
      );
    }
    const surface = await this.surface(record, additional);
    const { classification, tools } = surface;
    const pick = (names: readonly string[]) => names.map((name) => tools.get(name)!);
    if (classification.demoted.length > 0) {
      this.options.logger.info("budget.demoted", {
        processId: key.processId,
        maxTools: surface.maxTools,
        limit: surface.limit,
        demoted: classification.demoted.length,
        families: classification.demotedUnits,
      });
    }
    return {
      tools: pick(classification.primary).map((tool) => toWireTool(tool, format)),
      primary: classification.primary,
      deferred: classification.deferred,
      demoted: classification.demoted,
      budget: { maxTools: surface.maxTools, reserve: this.settings.externalReserve, limit: surface.limit },
      discoveryBlock: discoveryBlock(pick(classification.staticDeferred)),
      demotedDiscoveryBlock: demotedDiscoveryBlock(pick(classification.demoted)),
    };
  }

  /** A call inside the process: allow set, activation bookkeeping, usage counting. */
  async invoke(key: ProcessKey, name: string, params: unknown): Promise<DispatchResult> {
    const record = await this.get(key.tenant, key.project, key.processId);
    return this.invokeIn(record, name, params);
  }

  /** A call in the process; `scope` is set for `invoke_tool`'s nested call, which stays in its caller's budget. */
  private async invokeIn(
    record: ProcessRecord,
    name: string,
    params: unknown,
    scope?: CallScope,
  ): Promise<DispatchResult> {
    const allowed = new Set([...record.allowedTools, ...MANDATORY_TOOLS]);
    const result = await this.options.dispatcher.invoke({
      caller: {
        tenant: record.tenant,
        project: record.project,
        processId: record.processId,
        role: record.role,
        process: this.toolsApi(record),
      },
      name,
      params,
      allowedTools: allowed,
      clientTools: record.clientTools,
      ...(scope ? { parent: scope.budget, signal: scope.signal } : {}),
    });
    if ("error" in result || MANDATORY.has(name) || name === "invoke_tool") return result;
    // Every use counts as activation: it revives deferred and demoted tools (auto-activation)
    // and is the triage's strongest demand signal for the rest.
    const at = this.now();
    await this.bookkeep(record, name, [
      this.options.state.touchActivatedTools(keyOf(record), [name], at),
      this.options.state.addToolUsage(
        { tenant: record.tenant, project: record.project, role: record.role, tool: name },
        { calls: 1, at },
      ),
    ]);
    return result;
  }

  /**
   * Waits for usage counting and activation bookkeeping, but never lets them fail the call:
   * the tool has already run, so a state store that refuses the write costs a count, not the
   * caller's result. Each lost write is logged as a WARN.
   */
  private async bookkeep(record: ProcessRecord, tool: string, writes: readonly (Promise<unknown> | null)[]) {
    const results = await Promise.allSettled(writes);
    for (const result of results) {
      if (result.status === "fulfilled") continue;
      const error = result.reason;
      this.options.logger.warn("process.bookkeeping_failed", {
        tenant: record.tenant,
        project: record.project,
        processId: record.processId,
        tool,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  private toolsApi(record: ProcessRecord): ProcessToolsApi {
    return {
      list: async (prefix) => {
        const { classification, tools } = await this.surface(record);
        // The floor pair are the instruments of discovery, not tools to discover.
        const filter = (names: string[]) =>
          names.filter(
            (name) =>
              !MANDATORY.has(name) && (!prefix || name.toLowerCase().startsWith(prefix.toLowerCase())),
          );
        const packHints: Record<string, string> = {};
        for (const tool of tools.values()) {
          const pack = tool.name.indexOf("__") > 0 ? tool.name.slice(0, tool.name.indexOf("__")) : null;
          if (pack && tool.packHint && !packHints[pack]) packHints[pack] = tool.packHint;
        }
        return {
          value: {
            inContext: filter(classification.primary),
            available: filter(classification.deferred),
            packHints,
          },
        };
      },
      describe: async (names) => {
        const unique = [...new Set(names)];
        const asked = unique.slice(0, MAX_DESCRIBE);
        const skipped = unique.slice(MAX_DESCRIBE);
        const { tools, classification } = await this.surface(record);
        const described: { name: string; description: string; paramsSchema: JsonSchema }[] = [];
        const unknown: string[] = [];
        for (const name of asked) {
          const tool = tools.get(name);
          if (tool) described.push({ name, description: tool.description, paramsSchema: tool.inputSchema });
          else unknown.push(name);
        }
        if (described.length === 0) {
          return {
            error: "UnknownTools",
            message: `none of these names is a tool this process can use: ${asked.join(", ")}; call tool_list to see them`,
          };
        }
        const deferred = new Set(classification.deferred);
        const activate = described.map((tool) => tool.name).filter((name) => deferred.has(name));
        const at = this.now();
        await this.bookkeep(record, "tool_description", [
          activate.length > 0 ? this.options.state.touchActivatedTools(keyOf(record), activate, at) : null,
          ...described.map((tool) =>
            this.options.state.addToolUsage(
              { tenant: record.tenant, project: record.project, role: record.role, tool: tool.name },
              { discoveryHits: 1, at },
            ),
          ),
        ]);
        return { value: { tools: described, unknown, skipped, activated: activate } };
      },
      invoke: async (name, params, scope) => {
        try {
          const { durationMs: _ignored, ...outcome } = await this.invokeIn(record, name, params, scope);
          return "route" in outcome
            ? { error: "ClientToolNotCallable", message: `'${name}' runs on the client; call it directly` }
            : (outcome as ToolOutcome);
        } catch (error) {
          if (error instanceof VanceError) return { error: error.code, message: error.message };
          throw error;
        }
      },
    };
  }

  /** Builds the process's invocable tools and classifies them under the chain's budget. */
  private async surface(record: ProcessRecord, additional: readonly string[] = []): Promise<Surface> {
    const [listed, budget] = await Promise.all([
      this.options.tools.listAll(record.tenant, record.project),
      record.models.length === 0 ? { maxTools: null } : this.options.budget.budgetForChain(record.models),
    ]);
    const allowed = new Set([...record.allowedTools, ...MANDATORY_TOOLS]);
    const tools = new Map<string, SurfaceTool>();
    for (const tool of listed) {
      if (!allowed.has(tool.name)) continue;
      tools.set(tool.name, {
        name: tool.name,
        description: tool.config.description,
        inputSchema: tool.inputSchema,
        origin: tool.layer === "builtin" ? "builtin" : "configured",
        primary: tool.config.primary,
        defaultDeferred: tool.config.defaultDeferred,
      });
    }
    for (const client of record.clientTools) {
      if (tools.has(client.name)) continue;
      tools.set(client.name, {
        name: client.name,
        description: client.description,
        inputSchema: client.inputSchema,
        origin: "client",
        primary: true,
        defaultDeferred: false,
        ...(client.packHint ? { packHint: client.packHint } : {}),
      });
    }
    const activated = await this.liveActivations(record);
    const limit = budget.maxTools === null ? null : budget.maxTools - this.settings.externalReserve;
    const input = {
      tools: [...tools.values()],
      hints: record,
      activated,
      demand: new Map<string, number>(),
      additional,
      limit,
    };
    let classification = classifyTools(input);
    if (classification.demoted.length > 0) {
      // Demand only matters when something must go: read the counters then, not every turn.
      const rows = await this.options.state.listToolUsage(record.tenant, record.project, record.role);
      const demand = new Map(rows.map((row) => [row.tool, row.calls + row.discoveryHits]));
      classification = classifyTools({ ...input, demand });
    }
    return { record, tools, classification, maxTools: budget.maxTools, limit };
  }

  /** Activations younger than the TTL, the most recent `maxActivated`; the rest are removed from the record. */
  private async liveActivations(record: ProcessRecord): Promise<Map<string, number>> {
    const now = this.now();
    const entries = Object.entries(record.activatedTools).sort((a, b) => b[1] - a[1]);
    const live = entries
      .filter(([, at]) => now - at <= this.settings.activationTtlMs)
      .slice(0, this.settings.maxActivated);
    if (live.length < entries.length) {
      const keep = new Set(live.map(([name]) => name));
      await this.options.state.removeActivatedTools(
        keyOf(record),
        entries.map(([name]) => name).filter((name) => !keep.has(name)),
      );
    }
    return new Map(live);
  }
}

function assertUsableClientSchemas(clientTools: SpawnRequest["clientTools"]): void {
  const errors: FieldError[] = [];
  clientTools.forEach((tool, index) => {
    const problem = toolInputSchemaProblem(tool.inputSchema);
    if (problem) errors.push({ path: `clientTools.${index}.inputSchema`, message: problem });
  });
  if (errors.length > 0) {
    throw Errors.validationFailed("a client tool's inputSchema is not a usable JSON Schema", errors);
  }
}

function keyOf(record: ProcessRecord): ProcessKey {
  return { tenant: record.tenant, project: record.project, processId: record.processId };
}
