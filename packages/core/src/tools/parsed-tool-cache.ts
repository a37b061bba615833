import { ByteCache, type CacheStats, MIB, stringBytes } from "../cache/byte-cache";
import type { CacheReport } from "../cache/cache-registry";
import { TenantByteCache } from "../cache/tenant-byte-cache";
import {
  addressedLayer,
  type CascadeHit,
  type DocumentCascade,
  type DocumentLayer,
} from "../cascade/document-cascade";
import type { GenerationStamp } from "../cascade/generations";
import type { ServerToolConfig } from "../config/schema";
import { Errors } from "../errors";
import {
  layerDocumentKey,
  layerKeyPrefix,
  layerProjectOf,
  parseLayerDocumentKey,
  TOOL_DOCUMENTS_DIR,
  toolDocumentPath,
  toolNameFromPath,
} from "../ids";
import type { JsonSchema } from "../json-schema";
import type { Logger } from "../ports/logger";
import type { ObjectAudit, ObjectMeta } from "../ports/object-store";
import { parseToolDocument, type ToolDocumentResult } from "../tool-types/parse";
import type { ToolTypeRegistry } from "../tool-types/registry";
import type { CompiledEntry, CompiledToolLayers } from "./compiled-tool-layers";
import {
  type HiddenToolDocument,
  type InvalidToolDocument,
  type ResolvedTool,
  resolveDocument,
  type ToolListing,
  type ToolLookup,
} from "./resolved-tool";

/** What the service keeps warm by default: parsed tool documents and merged listings. */
export const DEFAULT_PARSED_CACHE_BYTES = 128 * MIB;

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
export interface MergedListing {
  readonly kind: "listing";
  readonly projectVersion: number;
  readonly tenantVersion: number;
  readonly tools: readonly ResolvedTool[];
  readonly invalid: readonly InvalidToolDocument[];
  readonly hidden: readonly HiddenToolDocument[];
  /** Whether a tool of the listing takes its tools or schema from a remote source. */
  readonly sourced: boolean;
  /** The listing as answered while no source is involved. */
  readonly view: ToolListing;
  readonly bytes: number;
}

/** A layer's compiled index as a listing found it: whether to rebuild it, replacing which version. */
export interface CompiledState {
  readonly rebuild: boolean;
  readonly etag: string | null;
}

/**
 * Layers an instance remembers having listed (each tenant at most its share of them); a forgotten
 * one is only read through its index again.
 */
export const LISTED_LAYERS = 10_000;

/** What remembering one listed layer is accounted, at most (its project id as UTF-16 plus this half). */
const LISTED_LAYER_BYTES = 512;

/** The value of a listed layer: only its presence counts. */
const LISTED = Object.freeze({ listed: true as const });

/** A built-in or bundled tool in a merged listing: small, and never evicted on its own. */
const SHARED_TOOL_BYTES = 64;

/** Object headers, hidden classes and map slots beyond the strings of a parsed document. */
export const PARSED_OVERHEAD_BYTES = 512;

/**
 * The parsed-document cache of `ServerToolService`: tool documents parsed by object key and
 * ETag, and merged listings by the layers' listings they came from, in one cache bounded by bytes
 * (a warm listing of unchanged layers costs no store request and no parsing). With compiled layer
 * indexes, a layer this instance has not listed yet is taken from its index (one GET) rather
 * than document by document, and an index found missing or stale is rebuilt from the cache.
 */
export class ParsedToolCache {
  readonly #parsed: ByteCache<ParsedDocument | MergedListing>;
  /** Compiled-index reads in flight by layer: concurrent cold listings share one GET. */
  private readonly compiledReads = new Map<string, Promise<CompiledState | null>>();
  /** Layers whose index this instance is writing: concurrent cold listings write it once. */
  private readonly compiledWrites = new Set<string>();
  /**
   * Layers this instance has listed (by tenant and layer): once warm, a moved generation costs a
   * LIST and the changed documents' GETs, less than the index would, so the index is for cold layers.
   */
  private readonly listedLayers: TenantByteCache<typeof LISTED>;

  constructor(
    private readonly cascade: DocumentCascade,
    private readonly types: ToolTypeRegistry,
    private readonly logger: Logger,
    maxBytes: number,
    private readonly compiled: CompiledToolLayers | undefined,
    tenantShare?: number,
  ) {
    this.#parsed = new ByteCache({
      maxBytes,
      sizeOf: (entry, key) => stringBytes(key) + entry.bytes,
      // A merged listing counts every document it holds, so a large project's listing is large;
      // it is kept up to a tenant's share (the cache caps an entry there).
      maxEntryBytes: maxBytes / 2,
      // Each tenant at most its share: one tenant's documents cannot push another's out.
      tenantOf: tenantOfCacheKey,
      ...(tenantShare === undefined ? {} : { tenantShare }),
      name: "tools.parsed",
      logger,
    });
    this.listedLayers = new TenantByteCache({
      maxBytes: LISTED_LAYERS * LISTED_LAYER_BYTES,
      maxEntries: LISTED_LAYERS,
      sizeOf: (_, layerProject) => stringBytes(layerProject) + LISTED_LAYER_BYTES / 2,
      ...(tenantShare === undefined ? {} : { tenantShare }),
      name: "tools.listedLayers",
      logger,
    });
  }

  /** Hits and misses of the cache, and its size. */
  get stats(): CacheStats {
    return this.#parsed.stats;
  }

  /** `fromCompiled` for each of a listing's layers, together; none when no indexes are kept. */
  async fromCompiledLayers(
    tenant: string,
    layerProjects: readonly string[],
  ): Promise<readonly (CompiledState | null)[]> {
    if (!this.compiled) return [];
    return Promise.all(layerProjects.map((layerProject) => this.fromCompiled(tenant, layerProject)));
  }

  /** The parsed cache, the listed layers and the compiled indexes read so far. */
  cacheReports(): Record<string, CacheReport> {
    return {
      parsed: this.#parsed.stats,
      listedLayers: this.listedLayers.report(),
      ...(this.compiled ? { compiledLayers: compiledLayerReport(this.compiled) } : {}),
    };
  }

  /**
   * A bundled hit of the cascade parsed (ours: its schemas are small and compile here). A stored
   * document is read with `interpretStored`.
   */
  interpret(hit: CascadeHit, name: string): ToolLookup {
    return fromParsed(
      this.types,
      parseToolDocument(hit.body, name, this.types),
      name,
      hit.layer,
      hit.etag,
      null,
    );
  }

  /**
   * A hit of the cascade parsed (from the cache when its version was parsed already). A stored
   * document's parse compiles its schemas charged to its tenant, its large ones on the worker
   * (`asTenantLargeOnWorker`): a cold instance reading a document its compiled index does not
   * hold compiles no large schema on the serving thread.
   */
  async interpretStored(hit: CascadeHit, name: string): Promise<ToolLookup> {
    if (hit.key === null || hit.etag === null) return this.interpret(hit, name);
    const key = hit.key;
    const cached = this.#parsed.get(documentKey(key));
    if (cached?.kind === "document" && cached.etag === hit.etag) {
      this.#parsed.hit();
      return cached.lookup;
    }
    this.#parsed.miss();
    const tenant = parseLayerDocumentKey(key)?.tenant;
    const parse = () => parseToolDocument(hit.body, name, this.types);
    const result =
      tenant === undefined
        ? parse()
        : await this.types.environment.jsonSchemas.asTenantLargeOnWorker(tenant, parse);
    const document = this.parsedDocument(result, name, hit.layer, hit.etag, hit.audit);
    this.#parsed.set(documentKey(key), document);
    return document.lookup;
  }

  /** The parsed version `etag` of the object `key`, counted as a hit; undefined (not counted) when not cached. */
  cachedLookup(key: string, etag: string): ToolLookup | undefined {
    const cached = this.#parsed.get(documentKey(key));
    if (cached?.kind !== "document" || cached.etag !== etag) return undefined;
    this.#parsed.hit();
    return cached.lookup;
  }

  /** A document just written, as the write's caller sent it: parsed already, so no read parses it again. */
  written(
    key: string,
    result: ToolDocumentResult & { readonly ok: true },
    layer: DocumentLayer,
    etag: string,
    audit: ObjectAudit | null,
  ): ResolvedTool {
    const document = this.parsedDocument(result, result.config.name, layer, etag, audit);
    this.#parsed.set(documentKey(key), document);
    return document.lookup.status === "found"
      ? document.lookup.tool
      : resolveDocument(result.config, this.types.find(result.config.type)!, layer, etag, audit);
  }

  /**
   * After its layers were listed: marks them listed by this instance, and answers the merged
   * listing of `tenant`/`project` for these layer listing versions, counted; undefined on a miss.
   */
  listingOf(
    tenant: string,
    project: string,
    layerProjects: readonly string[],
    projectVersion: number,
    tenantVersion: number,
  ): MergedListing | undefined {
    // Kept already (every warm turn): its recency refreshed, not set again.
    for (const layerProject of layerProjects)
      if (!this.listedLayers.touch(tenant, layerProject)) this.listedLayers.set(tenant, layerProject, LISTED);
    const cached = this.#parsed.get(listingKey(tenant, project));
    if (
      cached?.kind === "listing" &&
      cached.projectVersion === projectVersion &&
      cached.tenantVersion === tenantVersion
    ) {
      this.#parsed.hit();
      return cached;
    }
    this.#parsed.miss();
    return undefined;
  }

  /** Keeps a merged listing, accounted by the documents it holds. */
  keepListing(
    tenant: string,
    project: string,
    merged: Omit<MergedListing, "kind" | "bytes" | "view"> & { readonly view: ToolListing },
  ): MergedListing {
    const bytes = merged.tools.reduce(
      (sum, tool) =>
        sum + (tool.etag === null ? SHARED_TOOL_BYTES : this.documentBytes(tenant, project, tool)),
      merged.invalid.length * PARSED_OVERHEAD_BYTES,
    );
    const listing: MergedListing = { kind: "listing", ...merged, bytes };
    this.#parsed.set(listingKey(tenant, project), listing);
    return listing;
  }

  /** The accounted size of a stored tool's parsed document, for a merged listing that holds it. */
  private documentBytes(tenant: string, project: string, tool: ResolvedTool): number {
    const layerProject = layerProjectOf(tool.layer, project);
    const cached =
      layerProject === null
        ? undefined
        : this.#parsed.get(documentKey(layerDocumentKey(tenant, layerProject, toolDocumentPath(tool.name))));
    return cached?.kind === "document" ? cached.bytes : parsedBytes(tool.config, tool.inputSchema);
  }

  /**
   * A layer this instance has not listed yet: its compiled index read
   * (one GET, shared by concurrent callers), its parsed documents taken into the cache by ETag,
   * and its listing given to the cascade while its generation is current. Answers whether the
   * index must be rebuilt (missing, unusable or stale), and the version to replace; null when the
   * layer is listed already, nothing is trusted, or no indexes are kept.
   */
  async fromCompiled(tenant: string, layerProject: string): Promise<CompiledState | null> {
    if (!this.compiled) return null;
    const flightKey = layerKeyPrefix(tenant, layerProject);
    if (this.listedLayers.get(tenant, layerProject)) return null;
    const state = await this.cascade.layerState(tenant, layerProject, TOOL_DOCUMENTS_DIR);
    if (state === null || state.listed) return null;
    let flight = this.compiledReads.get(flightKey);
    if (!flight) {
      flight = this.readCompiled(this.compiled, tenant, layerProject).finally(() =>
        this.compiledReads.delete(flightKey),
      );
      this.compiledReads.set(flightKey, flight);
    }
    return flight;
  }

  private async readCompiled(
    compiled: CompiledToolLayers,
    tenant: string,
    layerProject: string,
  ): Promise<CompiledState> {
    let read: Awaited<ReturnType<CompiledToolLayers["read"]>>;
    try {
      read = await compiled.read(tenant, layerProject);
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
    const prefix = layerKeyPrefix(tenant, layerProject);
    for (const { meta, compiled } of read.layer.entries) {
      if (!compiled) continue;
      const cacheKey = documentKey(meta.key);
      const cached = this.#parsed.get(cacheKey);
      if (cached?.kind === "document" && cached.etag === meta.etag) continue;
      const name = toolNameFromPath(meta.key.slice(prefix.length));
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
  async rebuildCompiled(
    tenant: string,
    layerProject: string,
    listing: { readonly items: readonly ObjectMeta[]; readonly stamp: GenerationStamp },
    previousEtag: string | null,
  ): Promise<void> {
    const writeKey = layerKeyPrefix(tenant, layerProject);
    if (!this.compiled || listing.stamp.generation < 0 || this.compiledWrites.has(writeKey)) return;
    this.compiledWrites.add(writeKey);
    const entries = listing.items.map((meta): CompiledEntry => {
      const cached = this.#parsed.get(documentKey(meta.key));
      return cached?.kind === "document" && cached.etag === meta.etag
        ? { meta, compiled: cached.compiled }
        : { meta };
    });
    try {
      await this.compiled.write(tenant, layerProject, { stamp: listing.stamp, entries }, previousEtag);
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

  /** A parsed document version as the cache keeps it. */
  private parsedDocument(
    result: ToolDocumentResult,
    name: string,
    layer: DocumentLayer,
    etag: string,
    audit: ObjectAudit | null,
  ): ParsedDocument {
    const lookup = fromParsed(this.types, result, name, layer, etag, audit);
    const bytes =
      lookup.status === "found"
        ? parsedBytes(lookup.tool.config, lookup.tool.inputSchema)
        : result.ok
          ? stringBytes(JSON.stringify(result.config)) + PARSED_OVERHEAD_BYTES
          : stringBytes(result.error.message) + PARSED_OVERHEAD_BYTES;
    return { kind: "document", etag, lookup, compiled: { result, audit }, bytes };
  }
}

function fromParsed(
  types: ToolTypeRegistry,
  result: ToolDocumentResult,
  name: string,
  layer: DocumentLayer,
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
  return {
    status: "found",
    tool: resolveDocument(result.config, types.find(result.config.type)!, layer, etag, audit),
  };
}

/** The compiled indexes read so far: a usable one is a hit, a missing or unusable one a miss. */
function compiledLayerReport(compiled: CompiledToolLayers): CacheReport {
  const { found, missing, unusable } = compiled.stats;
  return { hits: found, misses: missing + unusable };
}

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

/** The tenant of a cache entry: the first segment after `document:` (an object key) or `listing:`. */
function tenantOfCacheKey(cacheKey: string): string {
  const rest = cacheKey.slice(cacheKey.indexOf(":") + 1);
  const end = rest.indexOf("/");
  return end < 0 ? rest : rest.slice(0, end);
}
