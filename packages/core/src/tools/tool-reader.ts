import { CountedLru } from "../cache/counted-lru";
import { inCapabilityFloor } from "../calls/capability-floor";
import type { DocumentCascade, DocumentLayer, Layer } from "../cascade/document-cascade";
import { mapWithConcurrency } from "../concurrency";
import { Errors, VanceError } from "../errors";
import {
  assertToolName,
  innermostFirst,
  invocableToolNameProblem,
  layerProjectOf,
  layerProjectsOf,
  packOf,
  parseLayerDocumentKey,
  readLayersOf,
  TOOL_DOCUMENTS_DIR,
  toolDocumentPath,
  toolNameFromPath,
  toolNameProblem,
} from "../ids";
import { byString } from "../order";
import type { Logger } from "../ports/logger";
import type { ObjectMeta } from "../ports/object-store";
import type { ParsedToolCache } from "./parsed-tool-cache";
import {
  byInvalidDocument,
  type HiddenToolDocument,
  type InvalidToolDocument,
  type PackSource,
  type ResolvedTool,
  type ToolLookup,
} from "./resolved-tool";
import { sourceUnavailable, type ToolExpansion } from "./tool-expansion";
import type { KeyedListing } from "./tool-snapshot";
import { reservedName } from "./tool-writer";

/** GETs in flight at once when a cold listing fetches documents. */
const LIST_FETCH_CONCURRENCY = 16;

/** Invalid documents already named in a WARN line, by object key, ETag and cause (each once per instance). */
const WARNED_DOCUMENTS = 4096;

const NO_INVALID: readonly InvalidToolDocument[] = Object.freeze([]);
const NO_PACKS: readonly PackSource[] = Object.freeze([]);
const NO_HIDDEN: readonly HiddenToolDocument[] = Object.freeze([]);

/** One WARN line `tool.invalid_document` per invalid document version and cause on this instance. */
export class InvalidDocumentLog {
  private readonly warned = new CountedLru<string, true>({ max: WARNED_DOCUMENTS });

  constructor(private readonly logger: Logger) {}

  /** `seen` identifies the version (key and ETag, or layer, path and ETag). */
  warn(tenant: string, project: string, seen: string, layer: Layer, path: string, error: VanceError): void {
    const key = `${tenant}\n${project}\n${seen}\n${error.message}`;
    if (this.warned.has(key)) return;
    this.warned.set(key, true);
    this.logger.warn("tool.invalid_document", { tenant, project, path, layer, message: error.message });
  }
}

/** What a `ToolReader` reads through: the cascade, the parsed cache, the expansions and the two fixed layers. */
export interface ToolReaderParts {
  readonly cascade: DocumentCascade;
  readonly parsed: ParsedToolCache;
  readonly expansion: ToolExpansion;
  readonly invalidLog: InvalidDocumentLog;
  /** The built-in layer, below every document layer; the floor's tools answer before any layer is read. */
  readonly builtIns: ReadonlyMap<string, ResolvedTool>;
  /** The bundled layer's tools, parsed at the first lookup or listing that reaches them, not at every cold start. */
  readonly bundled: () => ReadonlyMap<string, ToolLookup>;
}

/**
 * The reads of `ServerToolService` (spec §4, §5, §8). A name walks project → tenant → bundled →
 * built-in, first hit wins; a listing merges outer to inner (built-in → bundled → tenant →
 * project) with the inner layer winning by name and disabled tools left out (in `hidden`). So a
 * document may override or disable a built-in — except the capability floor (spec §13.1), whose
 * names no document can take: a stored one is ignored and listed invalid.
 *
 * It reads under the generations its caller made current (`ToolCatalog.snapshot`, the request's
 * one read of them) and never reads them itself: what it answers is the snapshot's.
 */
export class ToolReader {
  protected readonly cascade: DocumentCascade;
  protected readonly parsed: ParsedToolCache;
  protected readonly expansion: ToolExpansion;
  private readonly invalidLog: InvalidDocumentLog;
  private readonly builtIns: ReadonlyMap<string, ResolvedTool>;
  private readonly bundledTools: () => ReadonlyMap<string, ToolLookup>;

  constructor(parts: ToolReaderParts) {
    this.cascade = parts.cascade;
    this.parsed = parts.parsed;
    this.expansion = parts.expansion;
    this.invalidLog = parts.invalidLog;
    this.builtIns = parts.builtIns;
    this.bundledTools = parts.bundled;
  }

  /**
   * Resolves a name: project → tenant → bundled → built-in. A tool of the capability floor is
   * answered by its built-in at once: no document can shadow it, not even one stored behind the
   * service's back.
   */
  async lookup(tenant: string, project: string, name: string): Promise<ToolLookup> {
    const pack = packOf(name);
    if (pack !== null) return this.lookupSubTool(tenant, project, name, pack);
    const found = await this.lookupDocument(tenant, project, name);
    // The resolved type says whether the document takes its schema from a source: no look-up.
    if (found.status !== "found" || found.tool.kind !== "document") return found;
    if (!this.expansion.active || found.tool.type.sourcing?.kind !== "schema") return found;
    const expanded = (await this.expansion.expand(tenant, project, found.tool)).outcome;
    if (expanded instanceof VanceError)
      return { status: "invalid", layer: found.tool.layer, error: expanded };
    return { status: "found", tool: expanded[0]! };
  }

  /**
   * How the source of the pack document called `name` answers now (its pack page, `GET
   * T/tools/{name}`), or null when `name` is no enabled pack document.
   */
  async packSource(tenant: string, project: string, name: string): Promise<PackSource | null> {
    const found = await this.lookupDocument(tenant, project, name);
    if (found.status !== "found" || found.tool.kind !== "document") return null;
    return this.expansion.packSource(tenant, project, found.tool);
  }

  /**
   * The merged cascade with what it leaves out: the tools (`ToolSnapshot.tools`), the tool documents it
   * cannot offer (each named in one WARN line `tool.invalid_document` per instance and version),
   * the names it hides (disabled or invalid) and its packs' sources; keyed by the versions it is
   * built from, so a caller holding the key builds nothing again while none of them changed.
   */
  async listing(tenant: string, project: string): Promise<KeyedListing> {
    const layerProjects = layerProjectsOf(project);
    const compiled = await this.parsed.fromCompiledLayers(tenant, layerProjects);
    const listings = readLayersOf(project, (layerProject) =>
      this.cascade.listLayer(tenant, layerProject, TOOL_DOCUMENTS_DIR),
    );
    const [projectListing, tenantListing] = await Promise.all([listings.project, listings.tenant]);
    const layerListings = innermostFirst({ project: projectListing, tenant: tenantListing });
    const projectVersion = projectListing?.version ?? 0;
    const cached = this.parsed.listingOf(
      tenant,
      project,
      layerProjects,
      projectVersion,
      tenantListing.version,
    );
    if (cached) return this.expansion.expandAll(tenant, project, cached);
    const { tools, invalid, hidden } = await this.merge(
      tenant,
      project,
      projectListing?.items ?? [],
      tenantListing.items,
    );
    const sourced = tools.some((tool) => this.expansion.sourcing(tool) !== undefined);
    const frozenTools = Object.freeze(tools);
    const frozenInvalid = invalid.length === 0 ? NO_INVALID : Object.freeze(invalid);
    const frozenHidden = hidden.length === 0 ? NO_HIDDEN : Object.freeze(hidden);
    const listing = this.parsed.keepListing(tenant, project, {
      projectVersion,
      tenantVersion: tenantListing.version,
      tools: frozenTools,
      invalid: frozenInvalid,
      hidden: frozenHidden,
      sourced,
      view: Object.freeze({
        tools: frozenTools,
        invalid: frozenInvalid,
        packs: NO_PACKS,
        hidden: frozenHidden,
      }),
    });
    await Promise.all(
      compiled.map((state, i) =>
        state?.rebuild
          ? this.parsed.rebuildCompiled(tenant, layerProjects[i]!, layerListings[i]!, state.etag)
          : undefined,
      ),
    );
    return this.expansion.expandAll(tenant, project, listing);
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
  ): Promise<ToolLookup> {
    const problem = invocableToolNameProblem(name);
    if (problem) throw Errors.invalidId("tool name", name);
    const found = await this.lookupDocument(tenant, project, pack);
    if (found.status !== "found") return found;
    if (this.expansion.sourcing(found.tool)?.kind !== "pack" || found.tool.kind !== "document")
      return { status: "not_found" };
    const expansion = await this.expansion.expand(tenant, project, found.tool);
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
  private async lookupDocument(tenant: string, project: string, name: string): Promise<ToolLookup> {
    assertToolName(name);
    const builtIn = this.builtIns.get(name);
    if (inCapabilityFloor(name))
      return builtIn ? { status: "found", tool: builtIn } : { status: "not_found" };
    const hit = await this.cascade.lookup(tenant, project, toolDocumentPath(name));
    if (hit && hit.layer !== "bundled") return this.parsed.interpretStored(hit, name);
    const bundled = this.bundledTools().get(name);
    if (bundled) return bundled;
    return builtIn ? { status: "found", tool: builtIn } : { status: "not_found" };
  }

  /**
   * Merges the layers' listings with the bundled and built-in tools (built-in outermost, the
   * floor above everything); reads only documents not parsed yet. A stored document that breaks
   * the name rules, does not parse or names a floor tool is left out and reported in `invalid`;
   * a name whose winner is disabled or invalid, in `hidden`.
   */
  private async merge(
    tenant: string,
    project: string,
    projectMetas: readonly ObjectMeta[],
    tenantMetas: readonly ObjectMeta[],
  ): Promise<{ tools: ResolvedTool[]; invalid: InvalidToolDocument[]; hidden: HiddenToolDocument[] }> {
    const winners = new Map<string, { meta: ObjectMeta; layer: "project" | "tenant" }>();
    const invalid: InvalidToolDocument[] = [];
    const consider = (meta: ObjectMeta, layer: "project" | "tenant") => {
      const path = parseLayerDocumentKey(meta.key)?.path ?? "";
      const problem = storedToolPathProblem(path);
      if (problem === null) {
        winners.set(toolNameFromPath(path)!, { meta, layer });
        return;
      }
      const error = Errors.invalidDocument(path, layer, problem);
      invalid.push({ path, layer, error });
      this.invalidLog.warn(tenant, project, `${meta.key}\n${meta.etag}`, layer, path, error);
    };
    for (const meta of tenantMetas) consider(meta, "tenant");
    for (const meta of projectMetas) consider(meta, "project");

    const merged = new Map<string, ToolLookup>();
    for (const [name, tool] of this.builtIns) merged.set(name, { status: "found", tool });
    for (const [name, found] of this.bundledTools()) merged.set(name, found);
    const stored = await mapWithConcurrency(
      [...winners],
      LIST_FETCH_CONCURRENCY,
      async ([name, { meta, layer }]) => {
        const cached = this.parsed.cachedLookup(meta.key, meta.etag);
        if (cached) return [name, cached, meta] as const;
        const hit = await this.cascade.readLayer(
          tenant,
          layerProjectOf(layer, project)!,
          toolDocumentPath(name),
        );
        return [name, hit ? await this.parsed.interpretStored(hit, name) : null, meta] as const;
      },
    );
    for (const [name, found, meta] of stored) {
      if (!found) continue;
      merged.set(name, found);
      if (found.status !== "invalid") continue;
      const path = toolDocumentPath(name);
      invalid.push({ path, layer: found.layer as DocumentLayer, error: found.error });
      this.invalidLog.warn(tenant, project, `${meta.key}\n${meta.etag}`, found.layer, path, found.error);
    }

    const tools: ResolvedTool[] = [];
    const hidden: HiddenToolDocument[] = [];
    for (const [name, found] of merged) {
      if (found.status === "found") tools.push(found.tool);
      else if (found.status === "disabled")
        hidden.push({ name, layer: found.layer as DocumentLayer, status: "disabled" });
      else if (found.status === "invalid")
        hidden.push({ name, layer: found.layer as DocumentLayer, status: "invalid", error: found.error });
    }
    return {
      tools: tools.sort(byString((tool) => tool.name)),
      invalid: invalid.sort(byInvalidDocument),
      hidden: hidden.sort(byString((entry) => entry.name)),
    };
  }
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
