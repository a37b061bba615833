import { stringBytes } from "../cache/byte-cache";
import { CountedLru } from "../cache/counted-lru";
import type { Layer } from "../cascade/document-cascade";
import { Errors, VanceError } from "../errors";
import { layerProjectOf, toolDocumentPath } from "../ids";
import { byString } from "../order";
import type { Logger } from "../ports/logger";
import { packMembers } from "../sources/sub-tools";
import { type SourcedTools, sourceToolNamed, type ToolSources } from "../sources/tool-sources";
import type { ToolSourcing } from "../tool-types/tool-type";
import {
  byInvalidDocument,
  type HiddenToolDocument,
  type InvalidToolDocument,
  type PackHealth,
  type PackSource,
  type ResolvedDocument,
  type ResolvedSubTool,
  type ResolvedTool,
  type ToolListing,
} from "./resolved-tool";
import type { KeyedListing } from "./tool-snapshot";

/** A remote-backed document expanded for one answer of its source; kept on the source's entry while it holds. */
export interface Expansion {
  readonly list: SourcedTools["list"];
  readonly stale: boolean;
  readonly problem: VanceError | null;
  readonly outcome: readonly ResolvedTool[] | VanceError;
  /** The source's answer it was expanded for (`SourcedTools.version`). */
  readonly version: string;
}

/** A merged listing before its remote-backed documents are expanded, and the layer listings it came from. */
export interface UnexpandedListing {
  readonly tools: readonly ResolvedTool[];
  readonly invalid: readonly InvalidToolDocument[];
  readonly hidden: readonly HiddenToolDocument[];
  /** The versions of the project's and the tenant's layer listings it merged (`LayerListing.version`). */
  readonly projectVersion: number;
  readonly tenantVersion: number;
  /** Whether a tool of it takes its tools or schema from a remote source. */
  readonly sourced: boolean;
  /** The listing as answered while no source is involved. */
  readonly view: ToolListing;
}

/** Names an invalid document in one WARN line per version and cause (`seen` identifies both). */
export type InvalidWarning = (
  tenant: string,
  project: string,
  seen: string,
  layer: Layer,
  path: string,
  error: VanceError,
) => void;

const NO_NOTES: readonly string[] = Object.freeze([]);
const NO_TOOLS: readonly ResolvedTool[] = Object.freeze([]);
const NO_INVALID: readonly InvalidToolDocument[] = Object.freeze([]);
const NO_PACKS: readonly PackSource[] = Object.freeze([]);
const NO_HIDDEN: readonly HiddenToolDocument[] = Object.freeze([]);

/** Packs whose last source state and health an instance remembers. */
const REMEMBERED_PACKS = 4096;

/** What one expanded tool's object weighs beside its name (its description and schema are its source's). */
const EXPANDED_TOOL_BYTES = 192;

/**
 * `ToolExpansion`: remote-backed tool documents expanded by what `ToolSources` offers now — a
 * pack into its sub-tools (`{pack}__{op}`), an `mcp` tool into the tool with its source's input
 * schema — and the health of every pack's source, logged once per change. It keeps no cache of
 * its own (issue 38): an expansion is kept on its source's entry for the source's answer
 * (`SourcedTools.version`), and an expanded listing is named by the versions it was built from
 * (`KeyedListing.key`) for the snapshot cache to keep.
 */
export class ToolExpansion {
  /**
   * Each pack's last logged source state and last seen health, by tenant, project and name: one
   * log line per change, and what `packHealth()` counts.
   */
  private readonly packStates = new CountedLru<
    string,
    { readonly state: string; readonly health: PackHealth }
  >({ max: REMEMBERED_PACKS });
  /** Whether remote sources are configured: without them no document expands. */
  readonly active: boolean;

  constructor(
    private readonly sources: ToolSources | undefined,
    private readonly logger: Logger,
    private readonly warnInvalid: InvalidWarning,
  ) {
    this.active = sources !== undefined;
  }

  /**
   * How a tool document gets its tools or schema from a remote source — its resolved type's
   * sourcing — or undefined when it does not (or no sources are configured).
   */
  sourcing(tool: ResolvedTool): ToolSourcing | undefined {
    return this.sources !== undefined && tool.kind === "document" ? tool.type.sourcing : undefined;
  }

  /**
   * Packs by the health their source had when this instance last listed or looked them up (the
   * last `REMEMBERED_PACKS` packs seen): every state counted, zero included.
   */
  packHealth(): Record<PackHealth, number> {
    const counts: Record<PackHealth, number> = { current: 0, stale: 0, unavailable: 0, invalid: 0 };
    for (const { health } of this.packStates.values()) counts[health]++;
    return counts;
  }

  /** How the source of the pack document `tool` answers now, or null when `tool` is no pack. */
  async packSource(tenant: string, project: string, tool: ResolvedDocument): Promise<PackSource | null> {
    const sourcing = this.sourcing(tool);
    if (sourcing?.kind !== "pack") return null;
    const expansion = await this.expand(tenant, project, tool);
    const pack = packSource(tool, expansion, sourcing.promptHint?.(tool.config.parameters));
    this.logPackState(tenant, project, pack, expansion.outcome instanceof VanceError);
    return pack;
  }

  /**
   * The listing with every remote-backed document expanded: a pack becomes its sub-tools (the
   * pack document itself is no tool), an `mcp` tool takes its source's schema. Sources load in
   * parallel, each within `ToolSources`' wait; one that fails shows its last known tools, and a
   * pack whose source never answered has none — its `PackSource` says so. Answered by its key —
   * the layer listings' versions and every source's answer — and built only when asked (the
   * snapshot cache builds it for a key it does not hold).
   */
  async expandAll(tenant: string, project: string, listing: UnexpandedListing): Promise<KeyedListing> {
    const layers = `${listing.projectVersion}.${listing.tenantVersion}`;
    if (!listing.sourced || !this.active) return new LayersListing(layers, listing.view);
    const expansions = await Promise.all(
      listing.tools.map(async (tool) =>
        tool.kind === "document" && this.sourcing(tool)
          ? { tool, ...(await this.expand(tenant, project, tool)) }
          : null,
      ),
    );
    const versions: string[] = [];
    const invalid = [...listing.invalid];
    const hidden = [...listing.hidden];
    const packs: PackSource[] = [];
    for (const expansion of expansions) {
      if (expansion === null) continue;
      const { tool, outcome } = expansion;
      versions.push(expansion.version);
      const sourcing = this.sourcing(tool);
      if (outcome instanceof VanceError) {
        const path = toolDocumentPath(tool.name);
        const layer = tool.layer;
        invalid.push({ path, layer, error: outcome });
        // A lookup of a pack's name finds the pack document; of an `mcp` tool's, this error.
        if (sourcing?.kind !== "pack")
          hidden.push({ name: tool.name, layer, status: "invalid", error: outcome });
        this.warnInvalid(tenant, project, `${layer}/${path}/${tool.etag ?? ""}`, layer, path, outcome);
      }
      if (sourcing?.kind === "pack") {
        const pack = packSource(tool, expansion, sourcing.promptHint?.(tool.config.parameters));
        packs.push(pack);
        this.logPackState(tenant, project, pack, outcome instanceof VanceError);
      }
    }
    return {
      key: `${layers}|${versions.join(",")}`,
      listing: () => {
        const parts = expansions.map((expansion, index) =>
          expansion === null
            ? [listing.tools[index]!]
            : expansion.outcome instanceof VanceError
              ? NO_TOOLS
              : expansion.outcome,
        );
        invalid.sort(byInvalidDocument);
        return Object.freeze({
          tools: Object.freeze(parts.flat().sort(byString((tool) => tool.name))),
          invalid: invalid.length === 0 ? NO_INVALID : Object.freeze(invalid),
          packs: packs.length === 0 ? NO_PACKS : Object.freeze(packs.sort(byString((pack) => pack.name))),
          hidden:
            hidden.length === 0 ? NO_HIDDEN : Object.freeze(hidden.sort(byString((entry) => entry.name))),
        });
      },
    };
  }

  /**
   * One remote-backed document's tools for the current answer of its source: a pack's sub-tools
   * (sorted), or the `mcp` tool with its source's input schema. Derived once per answer and kept
   * on the source's entry (`ToolSources.expanded`): lookups and listings of an unchanged source
   * reuse it.
   */
  async expand(tenant: string, project: string, tool: ResolvedDocument): Promise<Expansion> {
    const sources = this.sources!;
    const sourcing = tool.type.sourcing!;
    if (sourcing.kind === "schema" && (sourcing.schemaTool?.(tool.config.parameters) ?? null) === null) {
      // A schema tool that fixes its own schema (`mcp` with `inputSchema`) needs nothing from its
      // source to be listed or called: its call locates the server once, no listing does.
      return { list: null, stale: false, problem: null, outcome: [tool], version: "own" };
    }
    const layerProject = layerProjectOf(tool.layer, project) ?? "";
    const documentKey = `${tool.layer}\n${layerProject}\n${tool.name}\n${tool.etag ?? ""}`;
    const sourced = await sources.expanded(tenant, project, documentKey, tool.config, (answer) => {
      const outcome =
        sourcing.kind === "pack"
          ? packTools(tool, answer, sourcing.promptHint?.(tool.config.parameters))
          : schemaTool(tool, answer, sourcing.schemaTool?.(tool.config.parameters) ?? null);
      return { value: outcome, bytes: expandedBytes(outcome) };
    });
    return {
      list: sourced.list,
      stale: sourced.stale,
      problem: sourced.problem,
      outcome: sourced.value,
      version: sourced.version,
    };
  }

  /**
   * A WARN line `pack.source_state` with tenant, project and pack when a pack's source turns
   * stale or unavailable (or its reason changes), and an INFO line when it is current again:
   * once per change on this instance, never per listing.
   */
  private logPackState(tenant: string, project: string, pack: PackSource, invalid: boolean): void {
    const key = `${tenant}\n${project}\n${pack.name}`;
    const state = `${pack.status}\n${pack.reason ?? ""}`;
    const last = this.packStates.get(key)?.state;
    this.packStates.set(key, { state, health: invalid ? "invalid" : pack.status });
    if (last === state) return;
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
}

/** What an expansion adds to its source's list: its tools' objects and names. */
function expandedBytes(outcome: readonly ResolvedTool[] | VanceError): number {
  if (outcome instanceof VanceError) return EXPANDED_TOOL_BYTES + stringBytes(outcome.message);
  let bytes = 0;
  for (const tool of outcome) bytes += EXPANDED_TOOL_BYTES + stringBytes(tool.name);
  return bytes;
}

/** A pack's sub-tools: named `{pack}__{op}`, the pack's flags and labels, the source's description and schema. */
function packTools(
  pack: ResolvedDocument,
  sourced: SourcedTools,
  hint: string | undefined,
): readonly ResolvedTool[] | VanceError {
  if (!sourced.list) return [];
  const members = packMembers(pack.name, sourced.list, pack.config.disabledSubTools, pack.layer);
  if (members instanceof VanceError) return members;
  return members.map(
    ({ name, tool }): ResolvedSubTool => ({
      kind: "pack-sub-tool",
      name,
      layer: pack.layer,
      etag: pack.etag,
      ...(pack.audit ? { audit: pack.audit } : {}),
      config: {
        ...pack.config,
        name,
        description: tool.description.trim() || `${tool.sourceName}, from the ${pack.name} pack`,
      },
      type: pack.type,
      inputSchema: tool.inputSchema,
      ...(tool.inputSchemaText === undefined ? {} : { inputSchemaText: tool.inputSchemaText }),
      pack: { name: pack.name, tool, ...(hint ? { hint } : {}) },
      ...(sourced.stale ? { stale: true } : {}),
    }),
  );
}

/** A tool whose input schema is its source tool's (unless its document fixes one). */
function schemaTool(
  tool: ResolvedDocument,
  sourced: SourcedTools,
  sourceName: string | null,
): readonly ResolvedTool[] | VanceError {
  const stale = sourced.stale || (sourced.list === null && sourceName !== null);
  if (sourceName === null || !sourced.list) return [stale ? { ...tool, stale: true } : tool];
  const source = sourceToolNamed(sourced.list, sourceName);
  if (!source) {
    // The source may have left it out on purpose (an MCP tool that requires tasks): its note says why.
    const said = sourced.list.notes?.find((note) => note.includes(`'${sourceName}' is not offered`));
    const cause = Errors.validationFailed(`its source offers no tool named '${sourceName}'`, [
      { path: "parameters.toolName", message: said ?? `the source has no tool '${sourceName}'` },
    ]);
    return Errors.invalidDocument(toolDocumentPath(tool.name), tool.layer, cause);
  }
  return [
    {
      ...tool,
      inputSchema: source.inputSchema,
      ...(source.inputSchemaText === undefined ? {} : { inputSchemaText: source.inputSchemaText }),
      source,
      ...(stale ? { stale: true } : {}),
    },
  ];
}

/** A pack document's source as the listing shows it. */
function packSource(pack: ResolvedDocument, expansion: Expansion, hint: string | undefined): PackSource {
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
export function sourceUnavailable(pack: string, problem: VanceError | null): VanceError {
  const why = problem?.message ?? `the source of '${pack}' has not answered yet`;
  return new VanceError(
    "source_unavailable",
    `pack '${pack}' has no sub-tools right now: ${why}; they come back as soon as its source answers`,
  );
}

/**
 * A listing without remote sources, keyed by its layers' versions: a class, not an object with a
 * closure, which the bundles' `keepNames` would name on every listing of a request.
 */
class LayersListing implements KeyedListing {
  constructor(
    readonly key: string,
    private readonly view: ToolListing,
  ) {}

  listing(): ToolListing {
    return this.view;
  }
}
