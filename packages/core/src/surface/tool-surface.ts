import { LRUCache } from "lru-cache";
import type { BuiltInTool } from "../calls/built-in-tool";
import { CAPABILITY_FLOOR } from "../calls/capability-floor";
import type { ToolBudgetService } from "../catalog/tool-budget";
import { VanceError } from "../errors";
import type { ProcessRecord } from "../ports/state-store";
import type { StalePack } from "../recipes/recipe-resolver";
import type { ServiceMetrics } from "../telemetry/telemetry";
import type { ResolvedTool, ToolListing } from "../tools/resolved-tool";
import { type SnapshotView, snapshotView, type ToolSnapshot } from "../tools/tool-snapshot";
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
import { type DemotionLog, demotionOutcomeKey } from "./demotion-log";
import {
  DEMOTED_BLOCK_TOKENS,
  DISCOVERY_BLOCK_TOKENS,
  demotedDiscoveryBlock,
  discoveryBlock,
  type HintWriter,
  toolHint,
} from "./discovery";
import type { ProcessRecords } from "./process-records";
import { manifestBytes, namesVersionOf, type WireFormat, wireTool } from "./wire";

/**
 * The budget a model chain allows for a tenant's process (min over the chain; null for no known
 * limit): the catalog's, and the limits learned for every tenant or for this one.
 */
export type ToolBudget = Pick<ToolBudgetService, "budgetForChain">;

/** One process's classification steps, each with the key of the inputs it was built from. */
interface SurfaceMemo {
  readonly tools: Map<string, SurfaceTool>;
  /** Each surface tool's estimated tokens (`toolTokens`, read where a `maxToolTokens` limit applies), by name. */
  readonly tokens: Map<string, number>;
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
        /** Manifests built from this classification, by format, each with its encoded body once asked. */
        readonly manifests: Record<string, BuiltManifest>;
        /** Its demotion outcome's key for the demotion log, once computed. */
        demotionKey?: string;
      }
    | undefined;
}

const NO_DEMAND: ReadonlyMap<string, number> = new Map();

/**
 * What the surface keeps on each listing version of a project (issue 38): derived from the
 * version's tools and gone with it, so nothing here is keyed by another cache's object.
 */
interface SurfaceViews {
  /** How many tools the version lists: what its views are accounted by. */
  readonly listed: number;
  /** Each listed tool's surface view, by name: the same object for every process of the version. */
  readonly surfaceTools: Map<string, SurfaceTool>;
  /** Discovery hints by description. */
  readonly hints: Map<string, string>;
  /** Wire tools of the version's surface tools, by format and name, with their JSON. */
  readonly wire: Map<string, WireEntry>;
  /** Discovery blocks by kind and names (of the version's shared surface tools only). */
  readonly blocks: LRUCache<string, string>;
  /** Per process: its surface tools and classification steps; bounded by the tools they hold. */
  readonly memos: LRUCache<string, SurfaceMemo>;
}

/** Discovery blocks one listing version keeps (distinct demotion sets of its processes). */
const MAX_BLOCKS = 256;
/** A manifest as the memo keeps it: its wire tools' JSON beside it, and its bytes once encoded. */
interface BuiltManifest {
  readonly manifest: Manifest;
  readonly toolJson: (wire: Record<string, unknown>, index: number) => string;
  body?: Uint8Array<ArrayBuffer>;
  /** The body without the name lists, for a caller that has them (`?names=` their version). */
  unnamedBody?: Uint8Array<ArrayBuffer>;
  namesVersion?: string;
}

/** A wire tool of the version's own surface tool, and its JSON once serialised. */
interface WireEntry {
  readonly tool: Readonly<Record<string, unknown>>;
  json?: string;
}

/** Tool slots the per-process memos of one listing version hold at most. */
const MEMO_TOOL_SLOTS = 200_000;
/** What the surface adds per listed tool to its version: its surface view, wire tools and their JSON, hint and block share (an estimate). */
const SURFACE_BYTES_PER_TOOL = 1024;

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
  readonly budget: ToolBudget;
  readonly records: Pick<ProcessRecords, "liveActivations" | "allowSet" | "versionOf">;
  readonly usage: Pick<ToolUsage, "demand">;
  /** Writes the `budget.demoted` line once per process and outcome. */
  readonly demotions: Pick<DemotionLog, "record">;
  /** Slots kept free for the engine's action tool appended outside classification. */
  readonly externalReserve?: number;
  /** Manifests counted with their demotions; none without it. */
  readonly metrics?: Pick<ServiceMetrics, "manifestBuilt">;
}

/**
 * The tool surface (spec §13, §14): which tools a process may invoke this turn, classified into
 * primary and deferred under the chain's budget, and the manifest built from them — the tools
 * array, the buckets and the two discovery blocks.
 */
export class ToolSurface {
  private readonly reserve: number;
  /** The surface's views of a listing version, memoised on it. */
  private readonly views: SnapshotView<SurfaceViews>;

  constructor(private readonly options: ToolSurfaceOptions) {
    this.reserve = options.externalReserve ?? DEFAULT_EXTERNAL_RESERVE;
    this.views = snapshotView<SurfaceViews>({
      name: "surface",
      build: (listing) => ({
        listed: listing.tools.length,
        surfaceTools: new Map(),
        wire: new Map(),
        hints: new Map(),
        blocks: new LRUCache<string, string>({ max: MAX_BLOCKS }),
        memos: new LRUCache<string, SurfaceMemo>({
          maxSize: MEMO_TOOL_SLOTS,
          sizeCalculation: (memo) => 1 + memo.tools.size,
        }),
      }),
      // Counted up front at their full extent: a version's views grow as processes use them.
      bytes: (views) => SURFACE_BYTES_PER_TOOL * views.listed,
    });
  }

  /**
   * The turn's manifest: the tools array (sorted by name), the buckets, the budget and the two
   * discovery blocks. `additional` (skill tools) must be in the allow set: 403 `tool_not_allowed`.
   */
  async manifest(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    format: WireFormat,
    additional: readonly string[] = [],
  ): Promise<Manifest> {
    return (await this.built(record, snapshot, format, additional)).manifest;
  }

  /**
   * {@link manifest} as the JSON bytes the route sends (`JSON.stringify` byte for byte, with
   * `namesVersion`, the version of its `deferred` and `demoted` lists): encoded once per manifest,
   * so a turn that changed nothing answers the very same bytes. Without the two lists when `names`
   * is that version: the caller has them from an earlier answer, and from a few thousand tools up
   * they are most of the bytes.
   */
  async manifestBody(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    format: WireFormat,
    additional: readonly string[] = [],
    names?: string,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const built = await this.built(record, snapshot, format, additional);
    const { manifest, toolJson } = built;
    built.namesVersion ??= namesVersionOf(manifest.deferred, manifest.demoted);
    const { namesVersion } = built;
    if (names === namesVersion) {
      const { deferred: _deferred, demoted: _demoted, ...rest } = manifest;
      const unnamed = { ...rest, namesVersion };
      built.unnamedBody ??= manifestBytes(unnamed, toolJson);
      return built.unnamedBody;
    }
    const named = { ...manifest, namesVersion };
    built.body ??= manifestBytes(named, toolJson);
    return built.body;
  }

  private async built(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    format: WireFormat,
    additional: readonly string[],
  ): Promise<BuiltManifest> {
    const { surface, manifests, views, finished } = await this.memoised(record, snapshot, additional);
    const { classification } = surface;
    this.options.metrics?.manifestBuilt(record.tenant, classification.demoted.length);
    if (classification.demoted.length > 0) {
      // Written once per classification, on its memo: a turn that changed nothing has it.
      // Its limit is in the classification's key, so the outcome's key is the classification's.
      finished.demotionKey ??= demotionOutcomeKey({
        maxTools: surface.maxTools,
        limit: surface.limit,
        families: classification.demotedUnits,
      });
      await this.options.demotions.record(record, {
        maxTools: surface.maxTools,
        limit: surface.limit,
        demoted: classification.demoted.length,
        families: classification.demotedUnits,
        tools: classification.demoted,
        key: finished.demotionKey,
      });
    }
    const built = manifests[format] ?? this.assemble(surface, format, views);
    manifests[format] = built;
    return built;
  }

  /**
   * The manifest a process of `record` would get now, for a page that shows it: built from a
   * fresh classification that is neither kept nor logged, so a record that was never stored
   * (`ProcessRecords.draft`) leaves nothing behind.
   */
  async preview(record: ProcessRecord, snapshot: ToolSnapshot, format: WireFormat): Promise<Manifest> {
    const { surface, views } = await this.memoised(record, snapshot, [], false);
    return this.assemble(surface, format, views).manifest;
  }

  /**
   * Refuses a spawn whose model chain cannot hold the capability floor (spec §14.2: a
   * configuration error), with the numbers: 422 `budget_floor_exceeded`. Every manifest of such a
   * process would answer 409, so it is said before the process exists.
   */
  async admit(record: ProcessRecord, snapshot: ToolSnapshot): Promise<void> {
    if (record.models.length === 0) return;
    const { maxTools } = await this.options.budget.budgetForChain(record.models, {
      tenant: record.tenant,
      catalog: snapshot.catalog,
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
  private assemble(surface: ProcessSurface, format: WireFormat, views: SurfaceViews): BuiltManifest {
    const { classification, tools, stalePacks } = surface;
    const hint = hintsOf(views);
    const entries = classification.primary.map((name) => wireEntry(views, tools.get(name)!, format));
    const pick = (names: readonly string[]) => names.map((name) => tools.get(name)!);
    const unavailable = stalePacks.filter((pack) => pack.status === "unavailable").map((pack) => pack.pack);
    const manifest: Manifest = Object.freeze({
      tools: Object.freeze(entries.map((entry) => entry.tool)),
      primary: Object.freeze([...classification.primary]),
      deferred: Object.freeze([...classification.deferred]),
      demoted: Object.freeze([...classification.demoted]),
      budget: Object.freeze({
        maxTools: surface.maxTools,
        reserve: this.reserve,
        limit: surface.limit,
        ...(surface.maxToolTokens === null ? {} : { maxToolTokens: surface.maxToolTokens }),
      }),
      discoveryBlock: block(
        views,
        `static\n${unavailable.join(",")}`,
        pick(classification.staticDeferred),
        (listed) => discoveryBlock(listed, unavailable, DISCOVERY_BLOCK_TOKENS, hint),
      ),
      demotedDiscoveryBlock: block(views, "demoted", pick(classification.demoted), (listed) =>
        demotedDiscoveryBlock(listed, DEMOTED_BLOCK_TOKENS, hint),
      ),
      stalePacks,
    });
    const toolJson = (_wire: Record<string, unknown>, index: number) => {
      const entry = entries[index]!;
      entry.json ??= JSON.stringify(entry.tool);
      return entry.json;
    };
    return { manifest, toolJson };
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
    snapshot: ToolSnapshot,
    additional: readonly string[] = [],
  ): Promise<ProcessSurface> {
    return (await this.memoised(record, snapshot, additional)).surface;
  }

  /**
   * Whether `name` was outside this turn's tools array (deferred, or demoted by the budget): asked
   * of the classification the turn's manifest built, kept per process — classified only when no
   * kept one matches the turn's inputs, exactly as {@link classify}.
   */
  async wasDeferred(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    name: string,
    additional: readonly string[] = [],
  ): Promise<boolean> {
    const { classification, tools } = await this.classify(record, snapshot, additional);
    return isDeferred(classification, tools, name);
  }

  /** {@link classify}, with the manifests already built from the classification it answers. */
  private async memoised(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    additional: readonly string[],
    keep = true,
  ): Promise<{
    surface: ProcessSurface;
    manifests: Record<string, BuiltManifest>;
    views: SurfaceViews;
    finished: NonNullable<SurfaceMemo["finished"]>;
  }> {
    // A skill may only bring tools the process can also call: the manifest never offers a 403.
    // The allow set (a set of every allowed name, 10,000 at the largest) is built only to check
    // skill tools, and for the surface when the listing changed — not for every turn's manifest.
    const allowed = additional.length === 0 ? null : this.options.records.allowSet(record);
    const outside = allowed ? additional.filter((name) => !allowed.has(name)) : [];
    if (outside.length > 0) {
      throw new VanceError("tool_not_allowed", `not in this process's allowed tools: ${outside.join(", ")}`);
    }
    const [version, budget] = await Promise.all([
      snapshot.version(),
      record.models.length === 0
        ? { maxTools: null }
        : this.options.budget.budgetForChain(record.models, {
            tenant: record.tenant,
            catalog: snapshot.catalog,
          }),
    ]);
    const views = version.view(this.views);
    // The allow set and client tools are frozen at spawn: the listing version and the record's
    // version alone can change the tools, and a process's memo lives on the listing version it
    // was built from, under the record's version (a record stored anew under the id is another).
    const memoKey = `${record.processId}\n${this.options.records.versionOf(record) ?? ""}`;
    let memo = keep ? views.memos.get(memoKey) : undefined;
    if (!memo) {
      memo = {
        tools: this.surfaceOf(record, version.listing.tools, views),
        tokens: new Map(),
        stalePacks: stalePacksOf(record, version.listing),
      };
      if (keep) views.memos.set(memoKey, memo);
    }
    const { tools, stalePacks, tokens } = memo;
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
          tokensOf: (tool) => {
            let counted = tokens.get(tool.name);
            if (counted === undefined) {
              counted = toolTokens(tool);
              tokens.set(tool.name, counted);
            }
            return counted;
          },
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
    const { finished } = memo;
    const { value: classification, manifests } = finished;
    return {
      finished,
      surface: {
        tools,
        classification,
        stalePacks,
        maxTools: budget.maxTools,
        maxToolTokens: tokenLimit,
        limit,
      },
      manifests,
      views,
    };
  }

  /**
   * The process's invocable tools from a listing: the allowed configured and built-in tools, then
   * its client tools. A built-in whose description depends on the process (`describeFor`) gets it
   * here, once per process and listing, from what configuration and the recipe decide alone — so
   * it reads the same in every turn, whatever activations and the budget do.
   */
  private surfaceOf(
    record: ProcessRecord,
    listed: readonly ResolvedTool[],
    views: SurfaceViews,
  ): Map<string, SurfaceTool> {
    const allowed = this.options.records.allowSet(record);
    const tools = new Map<string, SurfaceTool>();
    const describedPerProcess: BuiltInTool[] = [];
    for (const tool of listed) {
      if (!allowed.has(tool.name)) continue;
      if (tool.kind === "builtin" && tool.builtIn.describeFor) describedPerProcess.push(tool.builtIn);
      let surfaceTool = views.surfaceTools.get(tool.name);
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
        views.surfaceTools.set(tool.name, surfaceTool);
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
 * The wire tool of `tool` in `format`: kept on the version for its own surface tools (with its
 * JSON once serialised), built for this manifest alone for a process's own (client tools, a
 * description written for the process).
 */
function wireEntry(views: SurfaceViews, tool: SurfaceTool, format: WireFormat): WireEntry {
  if (views.surfaceTools.get(tool.name) !== tool) return { tool: wireTool(tool, format) };
  const key = `${format}\n${tool.name}`;
  let entry = views.wire.get(key);
  if (!entry) {
    entry = { tool: wireTool(tool, format) };
    views.wire.set(key, entry);
  }
  return entry;
}

/** The hint writer of a version: each description's hint computed once while the version lives. */
function hintsOf(views: SurfaceViews): HintWriter {
  return (description) => {
    let hint = views.hints.get(description);
    if (hint === undefined) {
      hint = toolHint(description);
      views.hints.set(description, hint);
    }
    return hint;
  };
}

/**
 * `write(tools)`, kept on the version when every tool is the version's own surface tool (a
 * process's client tools and per-process descriptions make its block its own, written each time).
 */
function block(
  views: SurfaceViews,
  kind: string,
  tools: readonly SurfaceTool[],
  write: (tools: readonly SurfaceTool[]) => string,
): string {
  if (tools.length === 0) return write(tools);
  const shared = tools.every((tool) => views.surfaceTools.get(tool.name) === tool);
  if (!shared) return write(tools);
  const key = `${kind}\n${tools.map((tool) => tool.name).join("\n")}`;
  let written = views.blocks.get(key);
  if (written === undefined) {
    written = write(tools);
    views.blocks.set(key, written);
  }
  return written;
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
