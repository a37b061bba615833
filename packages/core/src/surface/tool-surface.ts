import { LRUCache } from "lru-cache";
import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import type { BuiltInTool } from "../calls/built-in-tool";
import { CAPABILITY_FLOOR } from "../calls/capability-floor";
import type { CascadeRead } from "../cascade/cascade-read";
import { VanceError } from "../errors";
import type { ProcessRecord } from "../ports/state-store";
import type { StalePack } from "../recipes/recipe-resolver";
import type { ServiceMetrics } from "../telemetry/telemetry";
import type { ResolvedTool, ServerToolService, ToolListing } from "../tools/server-tool-service";
import type { ToolUsage } from "../usage/tool-usage";
import {
  type Classification,
  type ConfiguredTools,
  configuredDeferred,
  configureTools,
  isDeferred,
  type PreparedClassification,
  prepareClassification,
  type SurfaceTool,
  toolTokens,
} from "./classify";
import type { DemotionLog } from "./demotion-log";
import {
  DEMOTED_BLOCK_TOKENS,
  DISCOVERY_BLOCK_TOKENS,
  demotedDiscoveryBlock,
  discoveryBlock,
  type HintWriter,
  type ToolHintCache,
  toolHint,
} from "./discovery";
import type { ProcessRecords } from "./process-records";
import type { WireCache, WireFormat } from "./wire";

/**
 * The budget a model chain allows for a tenant's process (min over the chain; null for no known
 * limit): the catalog's, and the limits learned for every tenant or for this one.
 */
export interface ToolBudget {
  budgetForChain(
    models: readonly string[],
    options: { readonly tenant: string; readonly read: CascadeRead },
  ): Promise<{ readonly maxTools: number | null; readonly maxToolTokens?: number }>;
}

/** One process's classification steps, each with the key of the inputs it was built from. */
interface SurfaceMemo {
  readonly listed: ToolListing;
  readonly tools: Map<string, SurfaceTool>;
  readonly stalePacks: readonly StalePack[];
  /**
   * The classification memo (issue 36): what the tools and the frozen recipe alone decide
   * (`configureTools`), once per process and listing; activations and skills re-read only the
   * tools that can be on the wire.
   */
  configured?: ConfiguredTools;
  prepared?: { readonly key: string; readonly value: PreparedClassification };
  finished?:
    | {
        readonly key: string;
        readonly value: Classification;
        /** Manifests built from this classification, by format and skill tools. */
        readonly manifests: Record<string, Manifest>;
      }
    | undefined;
}

const NO_DEMAND: ReadonlyMap<string, number> = new Map();

/** Slots kept free for the engine's own action tool by default (spec §14.2 "Reserve"). */
export const DEFAULT_EXTERNAL_RESERVE = 1;

/** A turn's tool manifest (API.md). Shared while the process's turn is unchanged: frozen. */
export interface Manifest {
  readonly tools: readonly Readonly<Record<string, unknown>>[];
  readonly primary: readonly string[];
  readonly deferred: readonly string[];
  readonly demoted: readonly string[];
  readonly budget: {
    readonly maxTools: number | null;
    readonly reserve: number;
    readonly limit: number | null;
    /** The chain's `maxToolTokens` (tokens of the tools array's schemas, estimated); absent for none. */
    readonly maxToolTokens?: number;
  };
  readonly discoveryBlock: string;
  readonly demotedDiscoveryBlock: string;
  /**
   * The process's packs (by reference) whose source did not answer with a current list: `stale`
   * ones show their last known sub-tools, `unavailable` ones none — their line in the discovery
   * block says so, and their tools come back as soon as the source answers.
   */
  readonly stalePacks: readonly StalePack[];
}

/** A process's invocable tools this turn, classified under its chain's budget. */
export interface ProcessSurface {
  readonly tools: ReadonlyMap<string, SurfaceTool>;
  readonly classification: Classification;
  readonly stalePacks: readonly StalePack[];
  readonly maxTools: number | null;
  readonly limit: number | null;
  readonly maxToolTokens: number | null;
}

export interface ToolSurfaceOptions {
  readonly tools: Pick<ServerToolService, "listing">;
  readonly budget: ToolBudget;
  readonly records: Pick<ProcessRecords, "liveActivations" | "allowSet">;
  readonly usage: Pick<ToolUsage, "demand">;
  /** Writes the `budget.demoted` line once per process and outcome. */
  readonly demotions: Pick<DemotionLog, "record">;
  /** Slots kept free for the engine's action tool appended outside classification. */
  readonly externalReserve?: number;
  /** Manifests counted with their demotions; none without it. */
  readonly metrics?: Pick<ServiceMetrics, "manifestBuilt">;
  /** Wire tools built once per tool and format (shared with the route that encodes the manifest). */
  readonly wire: Pick<WireCache, "tool">;
  /** The discovery blocks' hints (a `ToolHintCache`'s, built by the composition root); computed each time without. */
  readonly hints?: Pick<ToolHintCache, "hint">;
}

/**
 * The tool surface (spec §13, §14): which tools a process may invoke this turn, classified into
 * primary and deferred under the chain's budget, and the manifest built from them — the tools
 * array, the buckets and the two discovery blocks.
 */
export class ToolSurface {
  private readonly reserve: number;
  /**
   * The surface view of each listed tool, built once per parsed tool: a listed tool is immutable
   * (a changed document is parsed into a new one), so the same object comes back while the
   * listing is warm, and the wire tools and their JSON cached by it (`WireCache`) with it.
   */
  private readonly surfaceTools = new WeakMap<ResolvedTool, SurfaceTool>();
  /**
   * Each surface tool's estimated tokens (`toolTokens`, read where a `maxToolTokens` limit
   * applies), once per tool: weak like `surfaceTools`, so an entry goes with its tool.
   */
  private readonly tokens = new WeakMap<SurfaceTool, number>();
  private readonly tokenReads = new CacheCounters();
  private readonly tokensOf = (tool: SurfaceTool): number => {
    let tokens = this.tokenReads.read(this.tokens.get(tool));
    if (tokens === undefined) {
      tokens = toolTokens(tool);
      this.tokens.set(tool, tokens);
    }
    return tokens;
  };
  /**
   * Discovery blocks by kind and names, with the tools they were written from: a block is reused
   * only for the very same tool objects, so a changed description or hint writes it anew.
   */
  private readonly blocks = new LRUCache<string, { tools: readonly SurfaceTool[]; block: string }>({
    maxSize: 8 * 1024 * 1024,
    sizeCalculation: (entry, key) => 2 * (key.length + entry.block.length) + 8 * entry.tools.length,
  });

  /**
   * Per process: its surface tools by listing, its prepared classification by limit, skill tools
   * and activations, and the finished one by demand; bounded by the tools they hold.
   */
  private readonly memos = new LRUCache<string, SurfaceMemo>({
    maxSize: 1_000_000,
    sizeCalculation: (memo) => 1 + memo.tools.size,
  });

  private readonly surfaceToolReads = new CacheCounters();
  private readonly blockReads = new CacheCounters();
  private readonly memoReads = new CacheCounters();

  private readonly hint: HintWriter;

  constructor(private readonly options: ToolSurfaceOptions) {
    this.reserve = options.externalReserve ?? DEFAULT_EXTERNAL_RESERVE;
    this.hint = options.hints?.hint ?? toolHint;
  }

  /** Surface tools and their token estimates (weak), discovery blocks and per-process memos. */
  cacheReports(): Record<string, CacheReport> {
    return {
      surfaceTools: this.surfaceToolReads.report(),
      tokens: this.tokenReads.report(),
      blocks: this.blockReads.report(lruExtent(this.blocks)),
      // Bounded by the tools the memos hold, not by bytes.
      memos: this.memoReads.report(lruExtent(this.memos, false)),
    };
  }

  /**
   * The turn's manifest: the tools array (sorted by name), the buckets, the budget and the two
   * discovery blocks. `additional` (skill tools) must be in the allow set: 403 `tool_not_allowed`.
   */
  async manifest(
    record: ProcessRecord,
    read: CascadeRead,
    format: WireFormat,
    additional: readonly string[] = [],
  ): Promise<Manifest> {
    const { surface, manifests } = await this.memoised(record, read, additional);
    const { classification } = surface;
    this.options.metrics?.manifestBuilt(record.tenant, classification.demoted.length);
    if (classification.demoted.length > 0) {
      await this.options.demotions.record(record, {
        maxTools: surface.maxTools,
        limit: surface.limit,
        demoted: classification.demoted.length,
        families: classification.demotedUnits,
        tools: classification.demoted,
      });
    }
    const manifest = manifests[format] ?? this.assemble(surface, format);
    manifests[format] = manifest;
    return manifest;
  }

  /**
   * The manifest a process of `record` would get now, for a page that shows it: built from a
   * fresh classification that is neither kept nor logged, so a record that was never stored
   * (`ProcessRecords.draft`) leaves nothing behind.
   */
  async preview(record: ProcessRecord, read: CascadeRead, format: WireFormat): Promise<Manifest> {
    const { surface } = await this.memoised(record, read, [], false);
    return this.assemble(surface, format);
  }

  /**
   * Refuses a spawn whose model chain cannot hold the capability floor (spec §14.2: a
   * configuration error), with the numbers: 422 `budget_floor_exceeded`. Every manifest of such a
   * process would answer 409, so it is said before the process exists.
   */
  async admit(record: ProcessRecord, read: CascadeRead): Promise<void> {
    if (record.models.length === 0) return;
    const { maxTools } = await this.options.budget.budgetForChain(record.models, {
      tenant: record.tenant,
      read,
    });
    if (maxTools === null) return;
    const limit = maxTools - this.reserve;
    const floor = CAPABILITY_FLOOR.length;
    if (limit >= floor) return;
    throw new VanceError(
      "budget_floor_exceeded",
      `the model chain allows ${maxTools} tools; with ${this.reserve} kept free for the engine's own tool that leaves ${limit}, but the capability floor alone needs ${floor} (${CAPABILITY_FLOOR.join(", ")}); raise maxTools in the catalog or lower VANCE_EXTERNAL_RESERVE`,
      [{ path: "models", message: `the chain's limit ${limit} is below the floor of ${floor}` }],
      { maxTools, reserve: this.reserve, limit, floor },
    );
  }

  /** The manifest of a classified surface: the primary tools on the wire, the buckets, the blocks. */
  private assemble(surface: ProcessSurface, format: WireFormat): Manifest {
    const { classification, tools, stalePacks } = surface;
    const pick = (names: readonly string[]) => names.map((name) => tools.get(name)!);
    const unavailable = stalePacks.filter((pack) => pack.status === "unavailable").map((pack) => pack.pack);
    return Object.freeze({
      tools: Object.freeze(pick(classification.primary).map((tool) => this.options.wire.tool(tool, format))),
      primary: Object.freeze([...classification.primary]),
      deferred: Object.freeze([...classification.deferred]),
      demoted: Object.freeze([...classification.demoted]),
      budget: Object.freeze({
        maxTools: surface.maxTools,
        reserve: this.reserve,
        limit: surface.limit,
        ...(surface.maxToolTokens === null ? {} : { maxToolTokens: surface.maxToolTokens }),
      }),
      discoveryBlock: this.block(
        `static\n${unavailable.join(",")}`,
        pick(classification.staticDeferred),
        (listed) => discoveryBlock(listed, unavailable, DISCOVERY_BLOCK_TOKENS, this.hint),
      ),
      demotedDiscoveryBlock: this.block("demoted", pick(classification.demoted), (listed) =>
        demotedDiscoveryBlock(listed, DEMOTED_BLOCK_TOKENS, this.hint),
      ),
      stalePacks,
    });
  }

  /** `write(tools)`, reused while the same tool objects come back in the same order. */
  private block(
    kind: string,
    tools: readonly SurfaceTool[],
    write: (tools: readonly SurfaceTool[]) => string,
  ): string {
    if (tools.length === 0) return write(tools);
    const key = `${kind}\n${tools.map((tool) => tool.name).join("\n")}`;
    const cached = this.blocks.get(key);
    if (cached?.tools.every((tool, index) => tool === tools[index])) {
      this.blockReads.hits++;
      return cached.block;
    }
    this.blockReads.misses++;
    const block = write(tools);
    this.blocks.set(key, { tools, block });
    return block;
  }

  /**
   * Builds the process's invocable tools and classifies them under the chain's budget. Each step
   * is kept per process and reused while its inputs are the same (the listing, the activations,
   * the limit — the tenant's learned limits included —, the skill tools, the demand counters), so
   * a turn that changed nothing gives back the very same classification — and the manifest built
   * from it. `additional` (skill tools) must be in the allow set: 403 `tool_not_allowed`.
   */
  async classify(
    record: ProcessRecord,
    read: CascadeRead,
    additional: readonly string[] = [],
  ): Promise<ProcessSurface> {
    return (await this.memoised(record, read, additional)).surface;
  }

  /**
   * Whether `name` was outside this turn's tools array (deferred, or demoted by the budget): asked
   * of the classification the turn's manifest built, kept per process — classified only when no
   * kept one matches the turn's inputs, exactly as {@link classify}.
   */
  async wasDeferred(
    record: ProcessRecord,
    read: CascadeRead,
    name: string,
    additional: readonly string[] = [],
  ): Promise<boolean> {
    const { classification, tools } = await this.classify(record, read, additional);
    return isDeferred(classification, tools, name);
  }

  /** {@link classify}, with the manifests already built from the classification it answers. */
  private async memoised(
    record: ProcessRecord,
    read: CascadeRead,
    additional: readonly string[],
    keep = true,
  ): Promise<{ surface: ProcessSurface; manifests: Record<string, Manifest> }> {
    // A skill may only bring tools the process can also call: the manifest never offers a 403.
    // The allow set (a set of every allowed name, 10,000 at the largest) is built only to check
    // skill tools, and for the surface when the listing changed — not for every turn's manifest.
    const allowed = additional.length === 0 ? null : this.options.records.allowSet(record);
    const outside = allowed ? additional.filter((name) => !allowed.has(name)) : [];
    if (outside.length > 0) {
      throw new VanceError("tool_not_allowed", `not in this process's allowed tools: ${outside.join(", ")}`);
    }
    const [listed, budget] = await Promise.all([
      this.options.tools.listing(record.tenant, record.project, read),
      record.models.length === 0
        ? { maxTools: null }
        : this.options.budget.budgetForChain(record.models, { tenant: record.tenant, read }),
    ]);
    const memoKey = `${record.tenant}/${record.project}/${record.processId}`;
    let memo = keep ? this.memos.get(memoKey) : undefined;
    // The allow set and client tools are frozen at spawn: the listing alone can change the tools.
    if (memo?.listed === listed) this.memoReads.hits++;
    else {
      this.memoReads.misses++;
      memo = {
        listed,
        tools: this.surfaceOf(record, listed.tools),
        stalePacks: stalePacksOf(record, listed),
      };
      if (keep) this.memos.set(memoKey, memo);
    }
    const { tools, stalePacks } = memo;
    const activated = this.options.records.liveActivations(record);
    const limit = budget.maxTools === null ? null : budget.maxTools - this.reserve;
    const tokenLimit = "maxToolTokens" in budget ? (budget.maxToolTokens ?? null) : null;
    const preparedKey = `${limit}\n${tokenLimit}\n${additional.join(",")}\n${[...activated].join(",")}`;
    if (memo.prepared?.key !== preparedKey) {
      memo.configured ??= configureTools([...tools.values()], record);
      memo.prepared = {
        key: preparedKey,
        value: prepareClassification({
          tools: [...tools.values()],
          configured: memo.configured,
          hints: record,
          activated,
          additional,
          limit,
          tokenLimit,
          tokensOf: this.tokensOf,
        }),
      };
      memo.finished = undefined;
    }
    const prepared = memo.prepared.value;
    // Demand only matters when something must go: read the counters then, not every turn.
    const demand = prepared.needsDemand ? await this.options.usage.demand(record) : NO_DEMAND;
    const demandKey = demand.size === 0 ? "" : [...demand].join(",");
    if (memo.finished?.key !== demandKey) {
      memo.finished = { key: demandKey, value: prepared.finish(demand), manifests: {} };
    }
    const { value: classification, manifests } = memo.finished;
    return {
      surface: {
        tools,
        classification,
        stalePacks,
        maxTools: budget.maxTools,
        maxToolTokens: tokenLimit,
        limit,
      },
      manifests,
    };
  }

  /**
   * The process's invocable tools from a listing: the allowed configured and built-in tools, then
   * its client tools. A built-in whose description depends on the process (`describeFor`) gets it
   * here, once per process and listing, from what configuration and the recipe decide alone — so
   * it reads the same in every turn, whatever activations and the budget do.
   */
  private surfaceOf(record: ProcessRecord, listed: readonly ResolvedTool[]): Map<string, SurfaceTool> {
    const allowed = this.options.records.allowSet(record);
    const tools = new Map<string, SurfaceTool>();
    const describedPerProcess: BuiltInTool[] = [];
    for (const tool of listed) {
      if (!allowed.has(tool.name)) continue;
      if (tool.kind === "builtin" && tool.builtIn.describeFor) describedPerProcess.push(tool.builtIn);
      let surfaceTool = this.surfaceToolReads.read(this.surfaceTools.get(tool));
      if (!surfaceTool) {
        surfaceTool = {
          name: tool.name,
          description: tool.config.description,
          inputSchema: tool.inputSchema,
          origin: tool.layer === "builtin" ? "builtin" : "configured",
          primary: tool.config.primary,
          defaultDeferred: tool.config.defaultDeferred,
          ...(tool.kind === "pack-sub-tool" && tool.pack.hint ? { packHint: tool.pack.hint } : {}),
          ...(tool.kind === "pack-sub-tool" && tool.pack.tool.family
            ? { family: tool.pack.tool.family }
            : {}),
        };
        this.surfaceTools.set(tool, surfaceTool);
      }
      tools.set(tool.name, surfaceTool);
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
    for (const builtIn of describedPerProcess) describePerProcess(record, builtIn, tools);
    return tools;
  }
}

/**
 * Gives `builtIn` its description for this process: what it says about the process's other
 * server tools (client tools run in the engine), each marked deferred as configuration and the
 * recipe decide.
 */
function describePerProcess(
  record: ProcessRecord,
  builtIn: BuiltInTool,
  tools: Map<string, SurfaceTool>,
): void {
  const own = tools.get(builtIn.name)!;
  const others = [...tools.values()].filter((tool) => tool.origin !== "client" && tool.name !== builtIn.name);
  const deferred = configuredDeferred(others, record);
  const callable = others.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    deferred: deferred.has(tool.name),
    ...(tool.packHint ? { packHint: tool.packHint } : {}),
    ...(tool.family ? { family: tool.family } : {}),
  }));
  tools.set(builtIn.name, { ...own, description: builtIn.describeFor!(callable) });
}

/**
 * The referenced packs of `record` without a current list: their source is stale or has never
 * answered, or their document is gone (then they have no sub-tools until one is written again).
 */
function stalePacksOf(record: ProcessRecord, listed: ToolListing): readonly StalePack[] {
  if (record.allowedPacks.length === 0) return NO_STALE_PACKS;
  const packs = new Map(listed.packs.map((pack) => [pack.name, pack]));
  const stale: StalePack[] = [];
  for (const name of record.allowedPacks) {
    const pack = packs.get(name);
    if (!pack) {
      stale.push({
        pack: name,
        status: "unavailable",
        reason: `no enabled pack document '${name}' in this project now`,
      });
    } else if (pack.status !== "current") {
      stale.push({ pack: name, status: pack.status, reason: pack.reason ?? "" });
    }
  }
  return stale.length === 0 ? NO_STALE_PACKS : Object.freeze(stale);
}

const NO_STALE_PACKS: readonly StalePack[] = Object.freeze([]);
