import type { BuiltInTool } from "../builtins/built-in-tool";
import {
  addressedLayer,
  type CascadeHit,
  type DocumentCascade,
  type Layer,
} from "../cascade/document-cascade";
import { mapWithConcurrency } from "../concurrency";
import { parseToolDocument, type ToolDocumentResult } from "../config/parse";
import type { ServerToolConfig } from "../config/schema";
import { Errors, VanceError } from "../errors";
import {
  assertToolName,
  TENANT_PROJECT,
  TOOL_DOCUMENTS_DIR,
  toolDocumentPath,
  toolNameFromPath,
} from "../ids";
import type { JsonSchema } from "../json-schema";
import { byString } from "../order";
import { type Logger, silentLogger } from "../ports/logger";
import type { ObjectMeta, PutOptions } from "../ports/object-store";
import type { ToolTypeRegistry } from "../types/registry";

/** A tool as the cascade resolved it: its winning layer, normalised configuration and LLM input schema. */
export interface ResolvedTool {
  readonly name: string;
  readonly layer: Layer;
  /** The stored object's ETag; null for bundled and built-in tools. */
  readonly etag: string | null;
  readonly config: ServerToolConfig;
  readonly inputSchema: JsonSchema;
  /** Set for built-in tools only. */
  readonly builtIn?: BuiltInTool;
}

/** The outcome of a cascade lookup by name. A disabled or invalid document is a hit that stops the cascade. */
export type ToolLookup =
  | { readonly status: "found"; readonly tool: ResolvedTool }
  | { readonly status: "disabled"; readonly layer: Layer }
  | { readonly status: "invalid"; readonly layer: Layer; readonly error: VanceError }
  | { readonly status: "not_found" };

/** Preconditions and content type of a tool document write. */
export type WriteOptions = PutOptions;

/** GETs in flight at once when a cold `listAll` fetches documents. */
const LIST_FETCH_CONCURRENCY = 16;

/**
 * `ServerToolService` (spec §4, §5, §8): the only place that reads and writes tool documents.
 * Built-in tools come first and their names are reserved; every other name walks project →
 * tenant → bundled, and `listAll` merges outer to inner with the inner layer winning by name and
 * disabled tools removed. Parsed documents are cached by
 * object key and ETag, so a warm `listAll` of unchanged documents costs only the LIST pages.
 */
export class ServerToolService {
  private readonly parsed = new Map<string, { readonly etag: string; readonly result: ToolDocumentResult }>();
  /** Built-in names are reserved: a built-in answers before any layer is read. */
  private readonly builtIns: ReadonlyMap<string, ResolvedTool>;
  private readonly bundledTools: ReadonlyMap<string, ToolLookup>;

  constructor(
    private readonly cascade: DocumentCascade,
    private readonly types: ToolTypeRegistry,
    builtIns: readonly BuiltInTool[],
    private readonly logger: Logger = silentLogger,
  ) {
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

  /**
   * Resolves a name: a built-in (its name is reserved, so no document can shadow it, not even
   * one stored behind the service's back), else project → tenant → bundled.
   */
  async lookup(tenant: string, project: string, name: string): Promise<ToolLookup> {
    assertToolName(name);
    const builtIn = this.builtIns.get(name);
    if (builtIn) return { status: "found", tool: builtIn };
    const hit = await this.cascade.lookup(tenant, project, toolDocumentPath(name));
    if (hit && hit.layer !== "bundled") return this.interpret(hit, name);
    return this.bundledTools.get(name) ?? { status: "not_found" };
  }

  /** Like `lookup`, but a miss, a disabled or an invalid hit throws its domain error. */
  async require(tenant: string, project: string, name: string): Promise<ResolvedTool> {
    const found = await this.lookup(tenant, project, name);
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

  /** All enabled tools visible in the project, sorted by name. */
  async listAll(tenant: string, project: string): Promise<ResolvedTool[]> {
    const [projectMetas, tenantMetas] = await Promise.all([
      project === TENANT_PROJECT
        ? Promise.resolve([])
        : this.cascade.listLayer(tenant, project, TOOL_DOCUMENTS_DIR),
      this.cascade.listLayer(tenant, TENANT_PROJECT, TOOL_DOCUMENTS_DIR),
    ]);
    const winners = new Map<string, { meta: ObjectMeta; layer: "project" | "tenant" }>();
    for (const meta of tenantMetas) addWinner(winners, meta, "tenant");
    for (const meta of projectMetas) addWinner(winners, meta, "project");

    const merged = new Map<string, ToolLookup>();
    for (const [name, found] of this.bundledTools) merged.set(name, found);
    const stored = await mapWithConcurrency(
      [...winners],
      LIST_FETCH_CONCURRENCY,
      async ([name, { meta, layer }]) => {
        const cached = this.parsed.get(meta.key);
        if (cached && cached.etag === meta.etag)
          return [name, this.fromParsed(cached.result, name, layer, meta.etag)] as const;
        const hit = await this.cascade.readLayer(
          tenant,
          layer === "tenant" ? TENANT_PROJECT : project,
          toolDocumentPath(name),
        );
        return [name, hit ? this.interpret(hit, name) : null] as const;
      },
    );
    for (const [name, found] of stored) if (found) merged.set(name, found);
    for (const [name, tool] of this.builtIns) merged.set(name, { status: "found", tool });

    const tools: ResolvedTool[] = [];
    for (const [name, found] of merged) {
      if (found.status === "found") tools.push(found.tool);
      else if (found.status === "invalid")
        this.logger.warn("tool.invalid_document", { tenant, project, name, layer: found.layer });
    }
    return tools.sort(byString((tool) => tool.name));
  }

  /** The enabled tools carrying `label`, across all layers (built-ins included), sorted by name. */
  async findByLabel(tenant: string, project: string, label: string): Promise<ResolvedTool[]> {
    return (await this.listAll(tenant, project)).filter((tool) => tool.config.labels.includes(label));
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
    this.parsed.set(written.key, { etag: written.etag, result: parsed });
    return {
      created: written.created,
      tool: this.resolved(parsed.config, addressedLayer(project), written.etag),
    };
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
    if (this.builtIns.has(name)) {
      throw new VanceError(
        "reserved_name",
        422,
        `'${name}' is a built-in tool; no document can replace or disable it`,
        [{ path: "name", message: "reserved" }],
      );
    }
  }

  private interpret(hit: CascadeHit, name: string): ToolLookup {
    if (hit.key !== null && hit.etag !== null) {
      const cached = this.parsed.get(hit.key);
      if (cached && cached.etag === hit.etag)
        return this.fromParsed(cached.result, name, hit.layer, hit.etag);
      const result = parseToolDocument(hit.body, name, this.types);
      this.parsed.set(hit.key, { etag: hit.etag, result });
      return this.fromParsed(result, name, hit.layer, hit.etag);
    }
    return this.fromParsed(parseToolDocument(hit.body, name, this.types), name, hit.layer, hit.etag);
  }

  private fromParsed(
    result: ToolDocumentResult,
    name: string,
    layer: Layer,
    etag: string | null,
  ): ToolLookup {
    if (!result.ok) {
      return {
        status: "invalid",
        layer,
        error: Errors.invalidDocument(toolDocumentPath(name), layer, result.error),
      };
    }
    if (!result.config.enabled) return { status: "disabled", layer };
    return { status: "found", tool: this.resolved(result.config, layer, etag) };
  }

  private resolved(config: ServerToolConfig, layer: Layer, etag: string | null): ResolvedTool {
    const type = this.types.find(config.type)!;
    return { name: config.name, layer, etag, config, inputSchema: type.inputSchema(config.parameters) };
  }
}

function addWinner(
  winners: Map<string, { meta: ObjectMeta; layer: "project" | "tenant" }>,
  meta: ObjectMeta,
  layer: "project" | "tenant",
): void {
  const path = meta.key.split("/").slice(2).join("/");
  const name = toolNameFromPath(path);
  if (name) winners.set(name, { meta, layer });
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
