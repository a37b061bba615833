import type { CacheStats } from "../cache/byte-cache";
import type { CacheReport } from "../cache/cache-registry";
import type { BuiltInTool } from "../calls/built-in-tool";
import type { DocumentCascade } from "../cascade/document-cascade";
import type { ModelCatalogService } from "../catalog/model-catalog-service";
import { TOOL_DOCUMENTS_DIR, toolNameFromPath } from "../ids";
import { type Logger, silentLogger } from "../ports/logger";
import type { ToolSources } from "../sources/tool-sources";
import type { ToolTypeRegistry } from "../tool-types/registry";
import type { CompiledToolLayers } from "./compiled-tool-layers";
import { DEFAULT_PARSED_CACHE_BYTES, ParsedToolCache } from "./parsed-tool-cache";
import {
  type PackHealth,
  type ResolvedTool,
  resolveBuiltIn,
  type ToolLookup,
  type WriteOptions,
} from "./resolved-tool";
import { ToolCatalog } from "./tool-catalog";
import { ToolExpansion } from "./tool-expansion";
import { InvalidDocumentLog, ToolReader } from "./tool-reader";
import type { ToolSnapshot } from "./tool-snapshot";
import { ToolWriter } from "./tool-writer";

export { DEFAULT_PARSED_CACHE_BYTES } from "./parsed-tool-cache";
export * from "./resolved-tool";
export { DEFAULT_SNAPSHOT_CACHE_BYTES, ToolCatalog } from "./tool-catalog";
export { InvalidDocumentLog, ToolReader, type ToolReaderParts } from "./tool-reader";
export { ListingVersion, type SnapshotView, snapshotView, ToolSnapshot } from "./tool-snapshot";
export { reservedName } from "./tool-writer";

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
  /** Bytes of tool snapshots (listings and their derived views) kept per instance. */
  readonly maxSnapshotBytes?: number;
  /** The part of the snapshot and parsed caches (and of the listed layers remembered) one tenant may hold. */
  readonly tenantShare?: number;
  /** The model catalog each tool snapshot carries (`ToolSnapshot.catalog`); without it, an empty one. */
  readonly models?: Pick<ModelCatalogService, "snapshot">;
}

/**
 * `ServerToolService` (spec §4, §5, §8): the only place that reads and writes tool documents,
 * composed of its `ToolCatalog` (the snapshots requests read their tools from, over a
 * `ToolReader`) and its `ToolWriter`, over one `ParsedToolCache` (parsed documents and merged
 * listings, bounded by bytes) and one `ToolExpansion` (remote-backed documents expanded by their
 * sources).
 */
export class ServerToolService {
  private readonly types: ToolTypeRegistry;
  private readonly writer: ToolWriter;
  private readonly reader: ToolReader;
  private readonly parsed: ParsedToolCache;
  private readonly expansion: ToolExpansion;
  /** The snapshots of projects' tools: what every request reads its tools from. */
  readonly catalog: ToolCatalog;

  constructor(
    cascade: DocumentCascade,
    types: ToolTypeRegistry,
    builtIns: readonly BuiltInTool[],
    logger: Logger = silentLogger,
    options: ServerToolServiceOptions = {},
  ) {
    const parsed = new ParsedToolCache(
      cascade,
      types,
      logger,
      options.maxCacheBytes ?? DEFAULT_PARSED_CACHE_BYTES,
      options.compiled,
      options.tenantShare,
    );
    const invalidLog = new InvalidDocumentLog(logger);
    const expansion = new ToolExpansion(options.sources, logger, (...warning) => invalidLog.warn(...warning));
    let bundledTools: ReadonlyMap<string, ToolLookup> | undefined;
    const bundled = () =>
      (bundledTools ??= new Map(
        cascade.bundledUnder(TOOL_DOCUMENTS_DIR).flatMap((hit) => {
          const name = toolNameFromPath(hit.path);
          return name ? [[name, parsed.interpret(hit, name)] as const] : [];
        }),
      ));
    this.reader = new ToolReader({
      cascade,
      parsed,
      expansion,
      invalidLog,
      builtIns: new Map<string, ResolvedTool>(builtIns.map((tool) => [tool.name, resolveBuiltIn(tool)])),
      bundled,
    });
    this.parsed = parsed;
    this.expansion = expansion;
    this.types = types;
    this.writer = new ToolWriter(cascade, types, parsed);
    this.catalog = new ToolCatalog({
      reader: this.reader,
      cascade,
      ...(options.models === undefined ? {} : { models: options.models }),
      ...(options.maxSnapshotBytes === undefined ? {} : { maxBytes: options.maxSnapshotBytes }),
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      logger,
    });
  }

  /**
   * The project's tools for a request that begins here (a route): its one read of the generations,
   * then `ToolCatalog.snapshot`. Everything the request does after takes this snapshot, not a read.
   */
  snapshot(tenant: string, project: string): Promise<ToolSnapshot> {
    return this.catalog.begin(tenant, project);
  }

  /** The tool type registry the service validates against. */
  get registry(): ToolTypeRegistry {
    return this.types;
  }

  /** Hits and misses of the parsed-document cache, and its size. */
  get stats(): CacheStats {
    return this.parsed.stats;
  }

  /** Packs by the health their source had when this instance last listed or looked them up. */
  packHealth(): Record<PackHealth, number> {
    return this.expansion.packHealth();
  }

  /** The parsed-document cache, the snapshots and the layers listed (expansions are kept on the sources' entries). */
  cacheReports(): Record<string, CacheReport> {
    const { parsed, listedLayers, compiledLayers } = this.parsed.cacheReports();
    return {
      parsed: parsed!,
      snapshots: this.catalog.cacheReport(),
      listedLayers: listedLayers!,
      ...(compiledLayers ? { compiledLayers } : {}),
    };
  }

  /**
   * Validates and stores a tool document in the addressed layer, as sent. Without a
   * precondition it creates when absent and replaces otherwise; `created` tells which.
   */
  put(
    tenant: string,
    project: string,
    name: string,
    text: string,
    options: WriteOptions = {},
  ): Promise<{ created: boolean; tool: ResolvedTool }> {
    return this.writer.put(tenant, project, name, text, options);
  }

  /** Deletes the tool document of the addressed layer; outer layers show through again. */
  delete(tenant: string, project: string, name: string, ifMatch?: string): Promise<void> {
    return this.writer.delete(tenant, project, name, ifMatch);
  }
}
