import { LRUCache } from "lru-cache";
import type { BuiltInTool } from "../builtins/built-in-tool";
import { ByteCache, type CacheStats, MIB, stringBytes } from "../cache/byte-cache";
import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import {
  addressedLayer,
  type CascadeHit,
  type DocumentCascade,
  type DocumentLayer,
  type Layer,
} from "../cascade/document-cascade";
import type { Freshness, GenerationStamp } from "../cascade/generations";
import { mapWithConcurrency } from "../concurrency";
import { parseToolDocument, type ToolDocumentResult } from "../config/parse";
import type { ServerToolConfig } from "../config/schema";
import { Errors, VanceError } from "../errors";
import {
  assertToolName,
  invocableToolNameProblem,
  packOf,
  TENANT_PROJECT,
  TOOL_DOCUMENTS_DIR,
  toolDocumentPath,
  toolNameFromPath,
  toolNameProblem,
} from "../ids";
import type { JsonSchema } from "../json-schema";
import { byString } from "../order";
import { type Logger, silentLogger } from "../ports/logger";
import type { ObjectAudit, ObjectMeta, PutOptions } from "../ports/object-store";
import { packMembers } from "../sources/sub-tools";
import { type SourcedTools, sourceToolNamed, type ToolSources } from "../sources/tool-sources";
import { inCapabilityFloor } from "../surface/capability-floor";
import type { ToolTypeRegistry } from "../types/registry";
import type { SourceTool } from "../types/tool-type";
import type { CompiledEntry, CompiledToolLayers } from "./compiled-tool-layers";

/** A tool as the cascade resolved it: its winning layer, normalised configuration and LLM input schema. */
export interface ResolvedTool {
  readonly name: string;
  readonly layer: Layer;
  /** The stored object's ETag; null for bundled and built-in tools. */
  readonly etag: string | null;
  /** Who wrote the document and when (spec §2: the document keeps them); absent for bundled and built-in tools. */
  readonly audit?: ObjectAudit;
  readonly config: ServerToolConfig;
  readonly inputSchema: JsonSchema;
  /** Set for built-in tools only. */
  readonly builtIn?: BuiltInTool;
  /**
   * Set for a pack's sub-tool (`{pack}__{op}`): the pack document's name, the source tool the
   * sub-tool runs, and the pack's hint line. Its `config` is the pack document's, renamed.
   */
  readonly pack?: { readonly name: string; readonly tool: SourceTool; readonly hint?: string };
  /** Set for a `schema` tool (`mcp`) whose input schema is its source's: that source tool. */
  readonly source?: SourceTool;
  /** A remote-backed tool shown from its last known list: its source could not be read just now. */
  readonly stale?: boolean;
}

/** The outcome of a cascade lookup by name. A disabled or invalid document is a hit that stops the cascade. */
export type ToolLookup =
  | { readonly status: "found"; readonly tool: ResolvedTool }
  | { readonly status: "disabled"; readonly layer: Layer }
  | { readonly status: "invalid"; readonly layer: Layer; readonly error: VanceError }
  | { readonly status: "not_found" };

/**
 * A document under `server-tools/` that no listing, selector, manifest or meta-tool offers: its
 * path breaks the name rules (it was written straight into the store), it does not parse or
 * validate, it names a tool of the capability floor, or its source's tools cannot be used.
 */
export interface InvalidToolDocument {
  readonly path: string;
  readonly layer: DocumentLayer;
  /** `invalid_document`, with the cause in its message and `errors`. */
  readonly error: VanceError;
}

/**
 * A pack document of the listing and how its source answered: `current`, `stale` (its sub-tools
 * are the last known ones: the latest read failed or is still running), or `unavailable` (no
 * list ever loaded, so it has no sub-tools right now). `reason` says why for the last two.
 */
export interface PackSource {
  readonly name: string;
  readonly layer: Layer;
  readonly labels: readonly string[];
  readonly status: "current" | "stale" | "unavailable";
  readonly reason?: string;
  /** The pack's hint line (`promptHint`), for discovery blocks. */
  readonly hint?: string;
  /** How many sub-tools it offers now (0 while `unavailable`, or when its list makes it invalid). */
  readonly subTools: number;
  /** What its source offered that the pack leaves out, and why (operations without a usable body …). */
  readonly notes: readonly string[];
}

/** A pack source's health as `vance.packs.sources` counts it: its status, or `invalid` when its list cannot be offered. */
export type PackHealth = PackSource["status"] | "invalid";

/** The pack source states, each counted (zero included). */
export const PACK_HEALTH_STATES: readonly PackHealth[] = ["current", "stale", "unavailable", "invalid"];

/** The merged cascade of a project: its tools, the tool documents it cannot offer, and its packs' sources. */
export interface ToolListing {
  /** Every enabled tool, packs expanded into their sub-tools, sorted by name. */
  readonly tools: readonly ResolvedTool[];
  /** Sorted by path, then layer. */
  readonly invalid: readonly InvalidToolDocument[];
  /** Sorted by name. */
  readonly packs: readonly PackSource[];
}

/** Preconditions and content type of a tool document write. */
export type WriteOptions = PutOptions;

/** GETs in flight at once when a cold `listAll` fetches documents. */
const LIST_FETCH_CONCURRENCY = 16;

/** What the service keeps warm by default: parsed tool documents and merged listings. */
export const DEFAULT_PARSED_CACHE_BYTES = 32 * MIB;

export interface ServerToolServiceOptions {
  /** Bytes of parsed tool documents and merged listings a warm instance keeps. */
  readonly maxCacheBytes?: number;
  /**
   * Where remote-backed documents get their tools (MCP servers, OpenAPI documents). Without it,
   * packs offer no sub-tools and `mcp` tools keep the schema their document gives.
   */
  readonly sources?: ToolSources;
  /**
   * Compiled layer indexes: a layer this instance has not listed yet is read from its index (one
   * GET) rather than document by document, and an index found missing or stale is rebuilt.
   */
  readonly compiled?: CompiledToolLayers;
}

/** A tool document as parsed under one ETag; `bytes` estimates the parsed objects' heap. */
interface ParsedDocument {
  readonly kind: "document";
  readonly etag: string;
  readonly lookup: ToolLookup;
  /** What parsing gave and who wrote this version: what a compiled layer index keeps of it. */
  readonly compiled: NonNullable<CompiledEntry["compiled"]>;
  readonly bytes: number;
}

/** The merged listing of a project, for the versions of its two layer listings it was built from. */
interface MergedListing {
  readonly kind: "listing";
  readonly projectVersion: number;
  readonly tenantVersion: number;
  readonly tools: readonly ResolvedTool[];
  readonly invalid: readonly InvalidToolDocument[];
  /** Whether a tool of the listing takes its tools or schema from a remote source. */
  readonly sourced: boolean;
  /** The listing as answered while no source is involved. */
  readonly view: ToolListing;
  readonly bytes: number;
}

/** A remote-backed document expanded for one state of its source; reused while that state holds. */
interface Expansion {
  readonly list: SourcedTools["list"];
  readonly stale: boolean;
  readonly problem: VanceError | null;
  readonly outcome: readonly ResolvedTool[] | VanceError;
}

const NO_TOOLS: readonly ResolvedTool[] = Object.freeze([]);
const NO_INVALID: readonly InvalidToolDocument[] = Object.freeze([]);
const NO_PACKS: readonly PackSource[] = Object.freeze([]);
const NO_NOTES: readonly string[] = Object.freeze([]);

/** Invalid documents already named in a WARN line, by object key, ETag and cause (each once per instance). */
const WARNED_DOCUMENTS = 4096;

/** Layers an instance remembers having listed; a forgotten one is only read through its index again. */
const LISTED_LAYERS = 10_000;

/** A built-in or bundled tool in a merged listing: small, and never evicted on its own. */
const SHARED_TOOL_BYTES = 64;

/**
 * `ServerToolService` (spec §4, §5, §8): the only place that reads and writes tool documents.
 * A name walks project → tenant → bundled → built-in, first hit wins; `listAll` merges outer to
 * inner (built-in → bundled → tenant → project) with the inner layer winning by name and
 * disabled tools removed. So a document may override or disable a built-in (spec §4: a project
 * disables a system tool with `enabled: false`) — except the capability floor (spec §13.1), whose
 * names no document can take: 422 `reserved_name` on write, ignored (and listed invalid) when
 * stored behind the service's back. Parsed documents are cached by object key and ETag, and the merged
 * listing by the layers' listings it came from, in one cache bounded by bytes: a warm `listAll`
 * of unchanged layers costs no store request and no parsing.
 *
 * Reads are `"fresh"` by default: they read the layers' generations first (see `Generations`).
 * Code below a read that already did so (the tool surface, a call in a process) passes `"known"`.
 */
export class ServerToolService {
  readonly #parsed: ByteCache<ParsedDocument | MergedListing>;
  /** The built-in layer, below every document layer; the floor's tools answer before any layer is read. */
  private readonly builtIns: ReadonlyMap<string, ResolvedTool>;
  private readonly bundledTools: ReadonlyMap<string, ToolLookup>;
  private readonly sources: ToolSources | undefined;
  private readonly compiled: CompiledToolLayers | undefined;
  /** Compiled-index reads in flight by layer: concurrent cold listings share one GET. */
  private readonly compiledReads = new Map<string, Promise<CompiledState | null>>();
  /** Layers whose index this instance is writing: concurrent cold listings write it once. */
  private readonly compiledWrites = new Set<string>();
  /**
   * Layers this instance has listed (by tenant and layer): once warm, a moved generation costs a
   * LIST and the changed documents' GETs, less than the index would, so the index is for cold layers.
   */
  private readonly listedLayers = new LRUCache<string, true>({ max: LISTED_LAYERS });
  readonly #listedLayerReads = new CacheCounters();
  /** Expansions by the document they expand: the same objects come back while the source is unchanged. */
  private readonly expansions = new WeakMap<ResolvedTool, Expansion>();
  /** The last expansion of each merged listing, with the parts it was built from. */
  private readonly expandedListings = new WeakMap<
    MergedListing,
    { readonly parts: readonly (readonly ResolvedTool[])[]; readonly key: string; readonly view: ToolListing }
  >();
  private readonly warned = new LRUCache<string, true>({ max: WARNED_DOCUMENTS });
  /** Each pack's last logged source state by tenant, project and name: one log line per change. */
  private readonly packStates = new LRUCache<string, string>({ max: WARNED_DOCUMENTS });
  /** Each pack's last seen health, by the same key: what `packHealth()` counts. */
  private readonly packHealthSeen = new LRUCache<string, PackHealth>({ max: WARNED_DOCUMENTS });
  readonly #expansionReads = new CacheCounters();
  readonly #listingReads = new CacheCounters();

  constructor(
    private readonly cascade: DocumentCascade,
    private readonly types: ToolTypeRegistry,
    builtIns: readonly BuiltInTool[],
    private readonly logger: Logger = silentLogger,
    options: ServerToolServiceOptions = {},
  ) {
    const maxBytes = options.maxCacheBytes ?? DEFAULT_PARSED_CACHE_BYTES;
    this.#parsed = new ByteCache({
      maxBytes,
      sizeOf: (entry, key) => stringBytes(key) + entry.bytes,
      // A merged listing counts every document it holds, so a large project's listing is large.
      maxEntryBytes: maxBytes / 2,
    });
    this.sources = options.sources;
    this.compiled = options.compiled;
    this.builtIns = new Map(builtIns.map((tool) => [tool.name, resolveBuiltIn(tool)]));
    this.bundledTools = new Map(
      cascade.bundledUnder(TOOL_DOCUMENTS_DIR).flatMap((hit) => {
        const name = toolNameFromPath(hit.path);
        return name ? [[name, this.interpret(hit, name)] as const] : [];
      }),
    );
  }

  /** The tool type registry the service validates against. */
  get registry(): ToolTypeRegistry {
    return this.types;
  }

  /** Hits and misses of the parsed-document cache, and its size. */
  get stats(): CacheStats {
    return this.#parsed.stats;
  }

  /**
   * Resolves a name: project → tenant → bundled → built-in. A tool of the capability floor is
   * answered by its built-in at once: no document can shadow it, not even one stored behind the
   * service's back.
   */
  async lookup(
    tenant: string,
    project: string,
    name: string,
    freshness: Freshness = "fresh",
  ): Promise<ToolLookup> {
    const pack = packOf(name);
    if (pack !== null) return this.lookupSubTool(tenant, project, name, pack, freshness);
    const found = await this.lookupDocument(tenant, project, name, freshness);
    if (found.status !== "found" || this.sources?.sourcing(found.tool.config)?.kind !== "schema")
      return found;
    const expanded = (await this.expand(tenant, project, found.tool)).outcome;
    if (expanded instanceof VanceError)
      return { status: "invalid", layer: found.tool.layer, error: expanded };
    return { status: "found", tool: expanded[0]! };
  }

  /**
   * A pack's sub-tool: the pack document resolved by its name, then its source's tools. A
   * disabled or invalid pack answers for its sub-tools; a document that is no pack has none.
   */
  private async lookupSubTool(
    tenant: string,
    project: string,
    name: string,
    pack: string,
    freshness: Freshness,
  ): Promise<ToolLookup> {
    const problem = invocableToolNameProblem(name);
    if (problem) throw Errors.invalidId("tool name", name);
    const found = await this.lookupDocument(tenant, project, pack, freshness);
    if (found.status !== "found") return found;
    if (this.sources?.sourcing(found.tool.config)?.kind !== "pack") return { status: "not_found" };
    const expansion = await this.expand(tenant, project, found.tool);
    const expanded = expansion.outcome;
    if (expanded instanceof VanceError)
      return { status: "invalid", layer: found.tool.layer, error: expanded };
    const tool = expanded.find((member) => member.name === name);
    if (tool) return { status: "found", tool };
    // No list yet: the sub-tool may well exist, the source just has not said so.
    if (expansion.list === null) {
      return {
        status: "invalid",
        layer: found.tool.layer,
        error: sourceUnavailable(pack, expansion.problem),
      };
    }
    return { status: "not_found" };
  }

  /** The document (or built-in) called `name`, unexpanded. */
  private async lookupDocument(
    tenant: string,
    project: string,
    name: string,
    freshness: Freshness,
  ): Promise<ToolLookup> {
    assertToolName(name);
    const builtIn = this.builtIns.get(name);
    if (inCapabilityFloor(name))
      return builtIn ? { status: "found", tool: builtIn } : { status: "not_found" };
    if (freshness === "fresh") await this.cascade.refresh(tenant, project);
    const hit = await this.cascade.lookup(tenant, project, toolDocumentPath(name));
    if (hit && hit.layer !== "bundled") return this.interpret(hit, name);
    const bundled = this.bundledTools.get(name);
    if (bundled) return bundled;
    return builtIn ? { status: "found", tool: builtIn } : { status: "not_found" };
  }

  /**
   * How the source of the pack document called `name` answers now (its pack page, `GET
   * T/tools/{name}`), or null when `name` is no enabled pack document.
   */
  async packSource(
    tenant: string,
    project: string,
    name: string,
    freshness: Freshness = "fresh",
  ): Promise<PackSource | null> {
    const found = await this.lookupDocument(tenant, project, name, freshness);
    if (found.status !== "found") return null;
    const sourcing = this.sources?.sourcing(found.tool.config);
    if (sourcing?.kind !== "pack") return null;
    const expansion = await this.expand(tenant, project, found.tool);
    const pack = packSource(found.tool, expansion, sourcing.promptHint?.(found.tool.config.parameters));
    this.logPackState(tenant, project, pack, expansion.outcome instanceof VanceError);
    return pack;
  }

  /** Like `lookup`, but a miss, a disabled or an invalid hit throws its domain error. */
  async require(
    tenant: string,
    project: string,
    name: string,
    freshness: Freshness = "fresh",
  ): Promise<ResolvedTool> {
    const found = await this.lookup(tenant, project, name, freshness);
    switch (found.status) {
      case "found":
        return found.tool;
      case "disabled":
        throw Errors.toolDisabled(name, found.layer);
      case "invalid":
        throw found.error;
      case "not_found":
        throw Errors.toolNotFound(name);
    }
  }

  /**
   * All enabled tools visible in the project, sorted by name. The array is shared (read-only):
   * while nothing changed, the same array comes back, so callers may cache what they derive by it.
   */
  async listAll(
    tenant: string,
    project: string,
    freshness: Freshness = "fresh",
  ): Promise<readonly ResolvedTool[]> {
    return (await this.listing(tenant, project, freshness)).tools;
  }

  /**
   * The merged cascade with what it leaves out: the tools (as `listAll`), the tool documents it
   * cannot offer (each named in one WARN line `tool.invalid_document` per instance and version),
   * and its packs' sources. The same object comes back while nothing of it changed.
   */
  async listing(tenant: string, project: string, freshness: Freshness = "fresh"): Promise<ToolListing> {
    if (freshness === "fresh") await this.cascade.refresh(tenant, project);
    const layerProjects = project === TENANT_PROJECT ? [TENANT_PROJECT] : [project, TENANT_PROJECT];
    const compiled = this.compiled
      ? await Promise.all(layerProjects.map((layerProject) => this.fromCompiled(tenant, layerProject)))
      : [];
    const [projectListing, tenantListing] = await Promise.all([
      project === TENANT_PROJECT ? null : this.cascade.listLayer(tenant, project, TOOL_DOCUMENTS_DIR),
      this.cascade.listLayer(tenant, TENANT_PROJECT, TOOL_DOCUMENTS_DIR),
    ]);
    for (const layerProject of layerProjects) this.listedLayers.set(`${tenant}/${layerProject}`, true);
    const key = listingKey(tenant, project);
    const projectVersion = projectListing?.version ?? 0;
    const cached = this.#parsed.get(key);
    if (
      cached?.kind === "listing" &&
      cached.projectVersion === projectVersion &&
      cached.tenantVersion === tenantListing.version
    ) {
      this.#parsed.hit();
      return cached.sourced ? this.expandAll(tenant, project, cached) : cached.view;
    }
    this.#parsed.miss();
    const { tools, invalid } = await this.merge(
      tenant,
      project,
      projectListing?.items ?? [],
      tenantListing.items,
    );
    const sourced = tools.some((tool) => this.sources?.sourcing(tool.config) !== undefined);
    const bytes = tools.reduce(
      (sum, tool) =>
        sum + (tool.etag === null ? SHARED_TOOL_BYTES : this.documentBytes(tenant, project, tool)),
      invalid.length * PARSED_OVERHEAD_BYTES,
    );
    const frozenTools = Object.freeze(tools);
    const frozenInvalid = invalid.length === 0 ? NO_INVALID : Object.freeze(invalid);
    const listing: MergedListing = {
      kind: "listing",
      projectVersion,
      tenantVersion: tenantListing.version,
      tools: frozenTools,
      invalid: frozenInvalid,
      sourced,
      view: Object.freeze({ tools: frozenTools, invalid: frozenInvalid, packs: NO_PACKS }),
      bytes,
    };
    this.#parsed.set(key, listing);
    await Promise.all(
      compiled.map((state, i) =>
        state?.rebuild
          ? this.rebuildCompiled(
              tenant,
              layerProjects[i]!,
              layerProjects[i] === TENANT_PROJECT ? tenantListing : projectListing!,
              state.etag,
            )
          : undefined,
      ),
    );
    return sourced ? this.expandAll(tenant, project, listing) : listing.view;
  }

  /**
   * A layer this instance has not listed yet: its compiled index read
   * (one GET, shared by concurrent callers), its parsed documents taken into the cache by ETag,
   * and its listing given to the cascade while its generation is current. Answers whether the
   * index must be rebuilt (missing, unusable or stale), and the version to replace; null when the
   * layer is listed already or nothing is trusted.
   */
  private async fromCompiled(tenant: string, layerProject: string): Promise<CompiledState | null> {
    const flightKey = `${tenant}/${layerProject}`;
    if (this.#listedLayerReads.read(this.listedLayers.get(flightKey))) return null;
    const state = await this.cascade.layerState(tenant, layerProject, TOOL_DOCUMENTS_DIR);
    if (state === null || state.listed) return null;
    let flight = this.compiledReads.get(flightKey);
    if (!flight) {
      flight = this.readCompiled(tenant, layerProject).finally(() => this.compiledReads.delete(flightKey));
      this.compiledReads.set(flightKey, flight);
    }
    return flight;
  }

  private async readCompiled(tenant: string, layerProject: string): Promise<CompiledState> {
    let read: Awaited<ReturnType<CompiledToolLayers["read"]>>;
    try {
      read = await this.compiled!.read(tenant, layerProject);
    } catch (error) {
      this.logger.warn("tool.compiled_layer_unreadable", {
        tenant,
        project: layerProject,
        message: error instanceof Error ? error.message : String(error),
      });
      return { rebuild: false, etag: null };
    }
    if (read.status === "missing") return { rebuild: true, etag: null };
    if (read.status === "unusable") {
      this.logger.warn("tool.compiled_layer_unusable", {
        tenant,
        project: layerProject,
        reason: read.reason,
      });
      return { rebuild: true, etag: read.etag };
    }
    const layer = addressedLayer(layerProject);
    for (const { meta, compiled } of read.layer.entries) {
      if (!compiled) continue;
      const cacheKey = documentKey(meta.key);
      const cached = this.#parsed.get(cacheKey);
      if (cached?.kind === "document" && cached.etag === meta.etag) continue;
      const name = toolNameFromPath(meta.key.slice(tenant.length + layerProject.length + 2));
      if (name === null) continue;
      this.#parsed.set(
        cacheKey,
        this.parsedDocument(compiled.result, name, layer, meta.etag, compiled.audit),
      );
    }
    const seeded = this.cascade.seedListing(
      tenant,
      layerProject,
      TOOL_DOCUMENTS_DIR,
      read.layer.stamp,
      read.layer.entries.map((entry) => entry.meta),
    );
    return { rebuild: !seeded, etag: read.etag };
  }

  /**
   * Writes the layer's compiled index from its listing and the parsed documents of its versions;
   * not when a listed document was left unread by every merge but not shadowed (evicted meanwhile).
   * A failed write costs only the next cold instance's speed: it is logged, never the listing's error.
   */
  private async rebuildCompiled(
    tenant: string,
    layerProject: string,
    listing: { readonly items: readonly ObjectMeta[]; readonly stamp: GenerationStamp },
    previousEtag: string | null,
  ): Promise<void> {
    const writeKey = `${tenant}/${layerProject}`;
    if (listing.stamp.generation < 0 || this.compiledWrites.has(writeKey)) return;
    this.compiledWrites.add(writeKey);
    const entries = listing.items.map((meta): CompiledEntry => {
      const cached = this.#parsed.get(documentKey(meta.key));
      return cached?.kind === "document" && cached.etag === meta.etag
        ? { meta, compiled: cached.compiled }
        : { meta };
    });
    try {
      await this.compiled!.write(tenant, layerProject, { stamp: listing.stamp, entries }, previousEtag);
    } catch (error) {
      this.logger.warn("tool.compiled_layer_write_failed", {
        tenant,
        project: layerProject,
        message: error instanceof Error ? error.message : String(error),
      });
    } finally {
      this.compiledWrites.delete(writeKey);
    }
  }

  /**
   * The listing with every remote-backed document expanded: a pack becomes its sub-tools (the
   * pack document itself is no tool), an `mcp` tool takes its source's schema. Sources load in
   * parallel, each within `ToolSources`' wait; one that fails shows its last known tools, and a
   * pack whose source never answered has none — its `PackSource` says so.
   */
  private async expandAll(tenant: string, project: string, listing: MergedListing): Promise<ToolListing> {
    const expansions = await Promise.all(
      listing.tools.map(async (tool) =>
        this.sources?.sourcing(tool.config) ? { tool, ...(await this.expand(tenant, project, tool)) } : null,
      ),
    );
    const parts: (readonly ResolvedTool[])[] = [];
    const sourcedParts: (readonly ResolvedTool[])[] = [];
    const invalid = [...listing.invalid];
    const packs: PackSource[] = [];
    for (const [index, expansion] of expansions.entries()) {
      if (expansion === null) {
        parts.push([listing.tools[index]!]);
        continue;
      }
      const { tool, outcome } = expansion;
      const part = outcome instanceof VanceError ? NO_TOOLS : outcome;
      parts.push(part);
      sourcedParts.push(part);
      if (outcome instanceof VanceError) {
        const path = toolDocumentPath(tool.name);
        const layer = tool.layer as DocumentLayer;
        invalid.push({ path, layer, error: outcome });
        this.warnInvalid(tenant, project, `${layer}/${path}/${tool.etag ?? ""}`, layer, path, outcome);
      }
      const sourcing = this.sources?.sourcing(tool.config);
      if (sourcing?.kind === "pack") {
        const pack = packSource(tool, expansion, sourcing.promptHint?.(tool.config.parameters));
        packs.push(pack);
        this.logPackState(tenant, project, pack, outcome instanceof VanceError);
      }
    }
    const key = packs.map((pack) => `${pack.name}\n${pack.status}\n${pack.reason ?? ""}`).join("\n");
    // The same objects while every source answers with the same tools: derived caches stay warm.
    const last = this.expandedListings.get(listing);
    if (
      last?.key === key &&
      last.parts.length === sourcedParts.length &&
      last.parts.every((part, i) => part === sourcedParts[i])
    ) {
      this.#listingReads.hits++;
      return last.view;
    }
    this.#listingReads.misses++;
    const tools =
      last?.parts.length === sourcedParts.length && last.parts.every((part, i) => part === sourcedParts[i])
        ? last.view.tools
        : Object.freeze(parts.flat().sort(byString((tool) => tool.name)));
    invalid.sort(byInvalidDocument);
    const view: ToolListing = Object.freeze({
      tools,
      invalid: invalid.length === 0 ? NO_INVALID : Object.freeze(invalid),
      packs: packs.length === 0 ? NO_PACKS : Object.freeze(packs.sort(byString((pack) => pack.name))),
    });
    this.expandedListings.set(listing, { parts: sourcedParts, key, view });
    return view;
  }

  /**
   * Packs by the health their source had when this instance last listed or looked them up (the
   * last `WARNED_DOCUMENTS` packs seen): every state counted, zero included.
   */
  packHealth(): Record<PackHealth, number> {
    const counts: Record<PackHealth, number> = { current: 0, stale: 0, unavailable: 0, invalid: 0 };
    for (const health of this.packHealthSeen.values()) counts[health]++;
    return counts;
  }

  /** The parsed-document cache and the expansion caches (weak: entries not counted). */
  cacheReports(): Record<string, CacheReport> {
    return {
      parsed: this.#parsed.stats,
      expansions: this.#expansionReads.report(),
      expandedListings: this.#listingReads.report(),
      listedLayers: this.#listedLayerReads.report(lruExtent(this.listedLayers)),
      ...(this.compiled ? { compiledLayers: compiledLayerReport(this.compiled) } : {}),
    };
  }

  /**
   * One remote-backed document's tools for the current state of its source: a pack's sub-tools
   * (sorted), or the `mcp` tool with its source's input schema. The same objects come back while
   * the source's list and staleness are unchanged, so the surface's per-tool caches stay warm.
   */
  private async expand(tenant: string, project: string, tool: ResolvedTool): Promise<Expansion> {
    const sources = this.sources!;
    const sourcing = sources.sourcing(tool.config)!;
    const layerProject = tool.layer === "project" ? project : TENANT_PROJECT;
    const documentKey = `${tool.layer}\n${layerProject}\n${tool.name}\n${tool.etag ?? ""}`;
    const sourced = await sources.tools(tenant, project, documentKey, tool.config);
    const cached = this.expansions.get(tool);
    if (
      cached &&
      cached.list === sourced.list &&
      cached.stale === sourced.stale &&
      cached.problem === sourced.problem
    ) {
      this.#expansionReads.hits++;
      return cached;
    }
    this.#expansionReads.misses++;
    const outcome =
      sourcing.kind === "pack"
        ? this.packTools(tool, sourced, sourcing.promptHint?.(tool.config.parameters))
        : this.schemaTool(tool, sourced, sourcing.schemaTool?.(tool.config.parameters) ?? null);
    const expansion = { list: sourced.list, stale: sourced.stale, problem: sourced.problem, outcome };
    this.expansions.set(tool, expansion);
    return expansion;
  }

  /** A pack's sub-tools: named `{pack}__{op}`, the pack's flags and labels, the source's description and schema. */
  private packTools(
    pack: ResolvedTool,
    sourced: SourcedTools,
    hint: string | undefined,
  ): readonly ResolvedTool[] | VanceError {
    if (!sourced.list) return [];
    const members = packMembers(pack.name, sourced.list, pack.config.disabledSubTools, pack.layer);
    if (members instanceof VanceError) return members;
    return members.map(({ name, tool }) => ({
      name,
      layer: pack.layer,
      etag: pack.etag,
      ...(pack.audit ? { audit: pack.audit } : {}),
      config: {
        ...pack.config,
        name,
        description: tool.description.trim() || `${tool.sourceName}, from the ${pack.name} pack`,
      },
      inputSchema: tool.inputSchema,
      pack: { name: pack.name, tool, ...(hint ? { hint } : {}) },
      ...(sourced.stale ? { stale: true } : {}),
    }));
  }

  /** A tool whose input schema is its source tool's (unless its document fixes one). */
  private schemaTool(
    tool: ResolvedTool,
    sourced: SourcedTools,
    sourceName: string | null,
  ): readonly ResolvedTool[] | VanceError {
    const stale = sourced.stale || (sourced.list === null && sourceName !== null);
    if (sourceName === null || !sourced.list) return [stale ? { ...tool, stale: true } : tool];
    const source = sourceToolNamed(sourced.list, sourceName);
    if (!source) {
      const cause = Errors.validationFailed(`its source offers no tool named '${sourceName}'`, [
        { path: "parameters.toolName", message: `the source has no tool '${sourceName}'` },
      ]);
      return Errors.invalidDocument(toolDocumentPath(tool.name), tool.layer, cause);
    }
    return [{ ...tool, inputSchema: source.inputSchema, source, ...(stale ? { stale: true } : {}) }];
  }

  /** The enabled tools carrying `label`, across all layers (built-ins included), sorted by name. */
  async findByLabel(
    tenant: string,
    project: string,
    label: string,
    freshness: Freshness = "fresh",
  ): Promise<ResolvedTool[]> {
    return (await this.listAll(tenant, project, freshness)).filter((tool) =>
      tool.config.labels.includes(label),
    );
  }

  /**
   * Merges the layers' listings with the bundled and built-in tools (built-in outermost, the
   * floor above everything); reads only documents not parsed yet. A stored document that breaks
   * the name rules, does not parse or names a floor tool is left out and reported in `invalid`.
   */
  private async merge(
    tenant: string,
    project: string,
    projectMetas: readonly ObjectMeta[],
    tenantMetas: readonly ObjectMeta[],
  ): Promise<{ tools: ResolvedTool[]; invalid: InvalidToolDocument[] }> {
    const winners = new Map<string, { meta: ObjectMeta; layer: "project" | "tenant" }>();
    const invalid: InvalidToolDocument[] = [];
    const consider = (meta: ObjectMeta, layer: "project" | "tenant") => {
      const path = meta.key.split("/").slice(2).join("/");
      const problem = storedToolPathProblem(path);
      if (problem === null) {
        winners.set(toolNameFromPath(path)!, { meta, layer });
        return;
      }
      const error = Errors.invalidDocument(path, layer, problem);
      invalid.push({ path, layer, error });
      this.warnInvalid(tenant, project, `${meta.key}\n${meta.etag}`, layer, path, error);
    };
    for (const meta of tenantMetas) consider(meta, "tenant");
    for (const meta of projectMetas) consider(meta, "project");

    const merged = new Map<string, ToolLookup>();
    for (const [name, tool] of this.builtIns) merged.set(name, { status: "found", tool });
    for (const [name, found] of this.bundledTools) merged.set(name, found);
    const stored = await mapWithConcurrency(
      [...winners],
      LIST_FETCH_CONCURRENCY,
      async ([name, { meta, layer }]) => {
        const cached = this.#parsed.get(documentKey(meta.key));
        if (cached?.kind === "document" && cached.etag === meta.etag) {
          this.#parsed.hit();
          return [name, cached.lookup, meta] as const;
        }
        const hit = await this.cascade.readLayer(
          tenant,
          layer === "tenant" ? TENANT_PROJECT : project,
          toolDocumentPath(name),
        );
        return [name, hit ? this.interpret(hit, name) : null, meta] as const;
      },
    );
    for (const [name, found, meta] of stored) {
      if (!found) continue;
      merged.set(name, found);
      if (found.status !== "invalid") continue;
      const path = toolDocumentPath(name);
      invalid.push({ path, layer: found.layer as DocumentLayer, error: found.error });
      this.warnInvalid(tenant, project, `${meta.key}\n${meta.etag}`, found.layer, path, found.error);
    }

    const tools: ResolvedTool[] = [];
    for (const [, found] of merged) if (found.status === "found") tools.push(found.tool);
    return { tools: tools.sort(byString((tool) => tool.name)), invalid: invalid.sort(byInvalidDocument) };
  }

  /**
   * A WARN line `pack.source_state` with tenant, project and pack when a pack's source turns
   * stale or unavailable (or its reason changes), and an INFO line when it is current again:
   * once per change on this instance, never per listing.
   */
  private logPackState(tenant: string, project: string, pack: PackSource, invalid: boolean): void {
    const key = `${tenant}\n${project}\n${pack.name}`;
    this.packHealthSeen.set(key, invalid ? "invalid" : pack.status);
    const state = `${pack.status}\n${pack.reason ?? ""}`;
    const last = this.packStates.get(key);
    if (last === state) return;
    this.packStates.set(key, state);
    if (pack.status !== "current") {
      this.logger.warn("pack.source_state", {
        tenant,
        project,
        pack: pack.name,
        layer: pack.layer,
        status: pack.status,
        reason: pack.reason ?? "",
      });
    } else if (last !== undefined) {
      this.logger.info("pack.source_state", {
        tenant,
        project,
        pack: pack.name,
        layer: pack.layer,
        status: pack.status,
        subTools: pack.subTools,
      });
    }
  }

  /** One WARN line per invalid document version and cause on this instance (`seen` identifies both). */
  private warnInvalid(
    tenant: string,
    project: string,
    seen: string,
    layer: Layer,
    path: string,
    error: VanceError,
  ): void {
    const key = `${tenant}\n${project}\n${seen}\n${error.message}`;
    if (this.warned.has(key)) return;
    this.warned.set(key, true);
    this.logger.warn("tool.invalid_document", { tenant, project, path, layer, message: error.message });
  }

  /** The accounted size of a stored tool's parsed document, for a merged listing that holds it. */
  private documentBytes(tenant: string, project: string, tool: ResolvedTool): number {
    const layerProject = tool.layer === "tenant" ? TENANT_PROJECT : project;
    const cached = this.#parsed.get(documentKey(`${tenant}/${layerProject}/${toolDocumentPath(tool.name)}`));
    return cached?.kind === "document" ? cached.bytes : parsedBytes(tool.config, tool.inputSchema);
  }

  /**
   * Validates and stores a tool document in the addressed layer, as sent. Without a
   * precondition it creates when absent and replaces otherwise; `created` tells which.
   */
  async put(
    tenant: string,
    project: string,
    name: string,
    text: string,
    options: WriteOptions = {},
  ): Promise<{ created: boolean; tool: ResolvedTool }> {
    assertToolName(name);
    this.assertNotReserved(name);
    const parsed = parseToolDocument(text, name, this.types);
    if (!parsed.ok) throw parsed.error;
    const contentType = options.contentType ?? "application/yaml";
    const written = await this.cascade.upsert(tenant, project, toolDocumentPath(name), text, {
      ...options,
      contentType,
    });
    const tool = this.resolved(parsed.config, addressedLayer(project), written.etag, written.audit);
    this.#parsed.set(
      documentKey(written.key),
      this.parsedDocument(parsed, name, tool.layer, written.etag, written.audit),
    );
    return { created: written.created, tool };
  }

  /** Deletes the tool document of the addressed layer; outer layers show through again. */
  async delete(tenant: string, project: string, name: string, ifMatch?: string): Promise<void> {
    assertToolName(name);
    try {
      await this.cascade.remove(tenant, project, toolDocumentPath(name), ifMatch);
    } catch (error) {
      if (error instanceof Error && "code" in error && error.code === "document_not_found") {
        throw Errors.toolNotFound(name);
      }
      throw error;
    }
  }

  private assertNotReserved(name: string): void {
    if (inCapabilityFloor(name)) throw reservedName(name);
  }

  private interpret(hit: CascadeHit, name: string): ToolLookup {
    if (hit.key === null || hit.etag === null) {
      return this.fromParsed(parseToolDocument(hit.body, name, this.types), name, hit.layer, hit.etag, null);
    }
    const cached = this.#parsed.get(documentKey(hit.key));
    if (cached?.kind === "document" && cached.etag === hit.etag) {
      this.#parsed.hit();
      return cached.lookup;
    }
    this.#parsed.miss();
    const document = this.parsedDocument(
      parseToolDocument(hit.body, name, this.types),
      name,
      hit.layer,
      hit.etag,
      hit.audit,
    );
    this.#parsed.set(documentKey(hit.key), document);
    return document.lookup;
  }

  /** A parsed document version as the cache keeps it. */
  private parsedDocument(
    result: ToolDocumentResult,
    name: string,
    layer: Layer,
    etag: string,
    audit: ObjectAudit | null,
  ): ParsedDocument {
    const lookup = this.fromParsed(result, name, layer, etag, audit);
    const bytes =
      lookup.status === "found"
        ? parsedBytes(lookup.tool.config, lookup.tool.inputSchema)
        : result.ok
          ? stringBytes(JSON.stringify(result.config)) + PARSED_OVERHEAD_BYTES
          : stringBytes(result.error.message) + PARSED_OVERHEAD_BYTES;
    return { kind: "document", etag, lookup, compiled: { result, audit }, bytes };
  }

  private fromParsed(
    result: ToolDocumentResult,
    name: string,
    layer: Layer,
    etag: string | null,
    audit: ObjectAudit | null,
  ): ToolLookup {
    if (!result.ok) {
      return {
        status: "invalid",
        layer,
        error: Errors.invalidDocument(toolDocumentPath(name), layer, result.error),
      };
    }
    if (!result.config.enabled) return { status: "disabled", layer };
    return { status: "found", tool: this.resolved(result.config, layer, etag, audit) };
  }

  private resolved(
    config: ServerToolConfig,
    layer: Layer,
    etag: string | null,
    audit: ObjectAudit | null,
  ): ResolvedTool {
    const type = this.types.find(config.type)!;
    return {
      name: config.name,
      layer,
      etag,
      ...(audit ? { audit } : {}),
      config,
      inputSchema: type.inputSchema(config.parameters),
    };
  }
}

/** The compiled indexes read so far: a usable one is a hit, a missing or unusable one a miss. */
function compiledLayerReport(compiled: CompiledToolLayers): CacheReport {
  const { found, missing, unusable } = compiled.stats;
  return { hits: found, misses: missing + unusable };
}

/** A layer's compiled index as a listing found it: whether to rebuild it, replacing which version. */
interface CompiledState {
  readonly rebuild: boolean;
  readonly etag: string | null;
}

/** Object headers, hidden classes and map slots beyond the strings of a parsed document. */
const PARSED_OVERHEAD_BYTES = 512;

/**
 * An estimate of a parsed document's heap: its configuration and input schema as JSON, counted
 * as UTF-16, plus a fixed overhead. Measured here: 3,000 typical `rest` documents with their
 * merged listing took 5.2 MiB of heap and were accounted 11.4 MiB (the listing counts its
 * documents again, so that evicted documents a listing still holds stay within the bound).
 */
function parsedBytes(config: ServerToolConfig, inputSchema: JsonSchema): number {
  return stringBytes(JSON.stringify(config) + JSON.stringify(inputSchema)) + PARSED_OVERHEAD_BYTES;
}

function documentKey(objectKey: string): string {
  return `document:${objectKey}`;
}

function listingKey(tenant: string, project: string): string {
  return `listing:${tenant}/${project}`;
}

/** 422 `reserved_name`: the capability floor's names are not configurable (spec §13.1). */
export function reservedName(name: string): VanceError {
  return new VanceError(
    "reserved_name",
    `'${name}' belongs to the capability floor (tool_list, tool_description); no document can replace or disable it`,
    [{ path: "name", message: "reserved for the capability floor" }],
  );
}

/**
 * Why a stored object under `server-tools/` can be no tool document, or null: its path is not
 * `server-tools/{name}.yaml` with a valid name, or the name is the floor's. Such an object got
 * there behind the service's back (a bucket write, a sync job): the API refuses it on write.
 */
function storedToolPathProblem(path: string): VanceError | null {
  const name = toolNameFromPath(path);
  if (name === null) {
    return Errors.validationFailed("tool documents are stored as server-tools/{name}.yaml", [
      { path: "name", message: "not a server-tools/{name}.yaml path" },
    ]);
  }
  const problem = toolNameProblem(name);
  if (problem !== null) {
    return Errors.validationFailed(`'${name}' is no tool name: ${problem}`, [
      { path: "name", message: problem },
    ]);
  }
  return inCapabilityFloor(name) ? reservedName(name) : null;
}

/** A pack document's source as the listing shows it. */
function packSource(pack: ResolvedTool, expansion: Expansion, hint: string | undefined): PackSource {
  const base = {
    name: pack.name,
    layer: pack.layer,
    labels: pack.config.labels,
    ...(hint ? { hint } : {}),
    subTools: expansion.outcome instanceof VanceError ? 0 : expansion.outcome.length,
    notes: expansion.list?.notes ?? NO_NOTES,
  };

  if (expansion.list === null) {
    return {
      ...base,
      status: "unavailable",
      reason: sourceUnavailable(pack.name, expansion.problem).message,
    };
  }
  if (!expansion.stale) return { ...base, status: "current" };
  const reason = expansion.problem?.message ?? "its list is being read again";
  return { ...base, status: "stale", reason };
}

/** A pack whose source has given no list: why its sub-tools cannot be offered or called now. */
function sourceUnavailable(pack: string, problem: VanceError | null): VanceError {
  const why = problem?.message ?? `the source of '${pack}' has not answered yet`;
  return new VanceError(
    "source_unavailable",
    `pack '${pack}' has no sub-tools right now: ${why}; they come back as soon as its source answers`,
  );
}

function byInvalidDocument(a: InvalidToolDocument, b: InvalidToolDocument): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.layer < b.layer ? -1 : a.layer > b.layer ? 1 : 0;
}

function resolveBuiltIn(tool: BuiltInTool): ResolvedTool {
  return {
    name: tool.name,
    layer: "builtin",
    etag: null,
    builtIn: tool,
    inputSchema: tool.inputSchema,
    config: {
      name: tool.name,
      type: "builtin",
      description: tool.description,
      enabled: true,
      primary: tool.primary,
      labels: tool.labels,
      disabledSubTools: [],
      defaultDeferred: false,
      parameters: {},
    },
  };
}
