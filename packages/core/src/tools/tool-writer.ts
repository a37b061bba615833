import { inCapabilityFloor } from "../calls/capability-floor";
import { addressedLayer, type DocumentCascade } from "../cascade/document-cascade";
import { Errors, VanceError } from "../errors";
import { assertToolName, toolDocumentPath } from "../ids";
import { parseToolDocument } from "../tool-types/parse";
import type { ToolTypeRegistry } from "../tool-types/registry";
import type { ParsedToolCache } from "./parsed-tool-cache";
import type { ResolvedTool, WriteOptions } from "./resolved-tool";

/**
 * The writes of `ServerToolService`: a tool document validated and stored in the addressed
 * layer (and kept parsed, so the next read parses nothing), or deleted so outer layers show
 * through. No document may take a name of the capability floor (spec §13.1).
 */
export class ToolWriter {
  constructor(
    private readonly cascade: DocumentCascade,
    private readonly types: ToolTypeRegistry,
    private readonly parsed: ParsedToolCache,
  ) {}

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
    if (inCapabilityFloor(name)) throw reservedName(name);
    // Parsing compiles the document's schemas: on the serving thread, in the tenant's turn.
    const parsed = await this.types.environment.jsonSchemas.inTenantTurn(tenant, () =>
      parseToolDocument(text, name, this.types),
    );
    if (!parsed.ok) throw parsed.error;
    const contentType = options.contentType ?? "application/yaml";
    const written = await this.cascade.upsert(tenant, project, toolDocumentPath(name), text, {
      ...options,
      contentType,
    });
    const tool = this.parsed.written(
      written.key,
      parsed,
      addressedLayer(project),
      written.etag,
      written.audit,
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
}

/** 422 `reserved_name`: the capability floor's names are not configurable (spec §13.1). */
export function reservedName(name: string): VanceError {
  return new VanceError(
    "reserved_name",
    `'${name}' belongs to the capability floor (tool_list, tool_description); no document can replace or disable it`,
    [{ path: "name", message: "reserved for the capability floor" }],
  );
}
