import type { BuiltInTool } from "../calls/built-in-tool";
import type { DocumentLayer, Layer } from "../cascade/document-cascade";
import type { ServerToolConfig } from "../config/schema";
import { Errors, type VanceError } from "../errors";
import type { JsonSchema } from "../json-schema";
import type { ObjectAudit, PutOptions } from "../ports/object-store";
import type { AnyToolType, SourceTool } from "../tool-types/tool-type";
import { jsonSchemaText } from "../validation/json-schema-validator";

/** What every resolved tool carries: its winning layer, normalised configuration and LLM input schema. */
interface ResolvedToolBase {
  readonly name: string;
  readonly layer: Layer;
  /** The stored object's ETag; null for bundled and built-in tools. */
  readonly etag: string | null;
  /** Who wrote the document and when (spec §2: the document keeps them); absent for bundled and built-in tools. */
  readonly audit?: ObjectAudit;
  readonly config: ServerToolConfig;
  readonly inputSchema: JsonSchema;
  /**
   * `inputSchema`'s JSON text, computed once where the tool is resolved (a document's version, a
   * built-in, a listed MCP tool: see `SourceTool`): a call finds the compiled schema by it
   * (`compiledNow`) without serialising the schema again. Absent when the schema has no JSON text.
   */
  readonly inputSchemaText?: string;
  /** A remote-backed tool shown from its last known list: its source could not be read just now. */
  readonly stale?: boolean;
}

/** A built-in tool (spec §13): it runs in the service, below every document layer. */
export interface ResolvedBuiltIn extends ResolvedToolBase {
  readonly kind: "builtin";
  readonly layer: "builtin";
  readonly builtIn: BuiltInTool;
  /** Absent: only a pack's sub-tool has a pack (kept so `tool.pack?.…` reads on any tool). */
  readonly pack?: undefined;
}

/**
 * A tool document (bundled or stored) with the type it names, resolved in the registry. A pack
 * document is one too: it is no tool to call (`type.sourcing.kind === "pack"`), its sub-tools are.
 */
export interface ResolvedDocument extends ResolvedToolBase {
  readonly kind: "document";
  readonly layer: DocumentLayer;
  readonly type: AnyToolType;
  /** Absent: only a built-in has one. */
  readonly builtIn?: undefined;
  /** Absent: only a pack's sub-tool has a pack. */
  readonly pack?: undefined;
  /** Set for a `schema` tool (`mcp`) whose input schema is its source's: that source tool. */
  readonly source?: SourceTool;
}

/**
 * A pack's sub-tool (`{pack}__{op}`): the pack document's name, the source tool the sub-tool
 * runs, and the pack's hint line. Its `config` is the pack document's, renamed; `type` the pack's.
 */
export interface ResolvedSubTool extends ResolvedToolBase {
  readonly kind: "pack-sub-tool";
  readonly layer: DocumentLayer;
  readonly type: AnyToolType;
  readonly pack: { readonly name: string; readonly tool: SourceTool; readonly hint?: string };
  /** Absent: only a built-in has one. */
  readonly builtIn?: undefined;
}

/** A tool as the cascade resolved it, tagged by what it is (`kind`), with the type it runs as. */
export type ResolvedTool = ResolvedBuiltIn | ResolvedDocument | ResolvedSubTool;

/** The outcome of a cascade lookup by name. A disabled or invalid document is a hit that stops the cascade. */
export type ToolLookup =
  | { readonly status: "found"; readonly tool: ResolvedTool }
  | { readonly status: "disabled"; readonly layer: Layer }
  | { readonly status: "invalid"; readonly layer: Layer; readonly error: VanceError }
  | { readonly status: "not_found" };

/** The tool a lookup found; a miss, a disabled or an invalid hit throws its domain error. */
export function foundTool(name: string, found: ToolLookup): ResolvedTool {
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
 * A tool name whose winning document the listing leaves out, and why: it disables the tool, or
 * it is invalid (it does not parse or validate, or its source offers no such tool) — what a
 * lookup of the name answers. Pack documents whose source fails are no such entry: their
 * `PackSource` says so.
 */
export type HiddenToolDocument =
  | { readonly name: string; readonly layer: DocumentLayer; readonly status: "disabled" }
  | {
      readonly name: string;
      readonly layer: DocumentLayer;
      readonly status: "invalid";
      readonly error: VanceError;
    };

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
  /** The names whose winning document is disabled or invalid, sorted by name. */
  readonly hidden: readonly HiddenToolDocument[];
}

/** Preconditions and content type of a tool document write. */
export type WriteOptions = PutOptions;

/** The listing's order of invalid documents: by path, then layer. */
export function byInvalidDocument(a: InvalidToolDocument, b: InvalidToolDocument): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.layer < b.layer ? -1 : a.layer > b.layer ? 1 : 0;
}

/** A built-in as the built-in layer resolves it. */
export function resolveBuiltIn(tool: BuiltInTool): ResolvedBuiltIn {
  const inputSchemaText = jsonSchemaText(tool.inputSchema);
  return {
    kind: "builtin",
    name: tool.name,
    layer: "builtin",
    etag: null,
    builtIn: tool,
    inputSchema: tool.inputSchema,
    ...(inputSchemaText === undefined ? {} : { inputSchemaText }),
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

/** A parsed, enabled tool document of `type` as its layer resolves it. */
export function resolveDocument(
  config: ServerToolConfig,
  type: AnyToolType,
  layer: DocumentLayer,
  etag: string | null,
  audit: ObjectAudit | null,
): ResolvedDocument {
  const inputSchema = type.inputSchema(config.parameters);
  // Once per document version (the parsed-tool cache keeps this by ETag), not once per call. Not
  // for a sourced type: its tools take their schema, and its text, from the source
  // (`tool-expansion.ts`), which must never find this document's text beside another schema.
  const inputSchemaText = type.sourcing === undefined ? jsonSchemaText(inputSchema) : undefined;
  return {
    kind: "document",
    name: config.name,
    layer,
    etag,
    ...(audit ? { audit } : {}),
    config,
    type,
    inputSchema,
    ...(inputSchemaText === undefined ? {} : { inputSchemaText }),
  };
}
