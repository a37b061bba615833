import * as v from "valibot";
import { utf8Bytes } from "../cache/byte-cache";
import { addressedLayer, type CascadeHit, type DocumentCascade } from "../cascade/document-cascade";
import { Errors, VanceError } from "../errors";
import {
  isToolDocumentPath,
  layerKeyPrefix,
  ProjectIdSchema,
  readLayersOf,
  SPEC_DOCUMENTS_DIR,
  TENANT_PROJECT,
  toolNameFromPath,
} from "../ids";
import { byString, compareStrings } from "../order";
import type { ObjectAudit, PutOptions } from "../ports/object-store";
import {
  isMcpServerDocumentPath,
  mcpServerNameFromPath,
  parseMcpServerDocument,
} from "../tool-types/mcp-server";
import { openApiShapeProblem } from "../tool-types/openapi/spec-shape";
import { scriptSyntaxMessage, scriptSyntaxProblem } from "../tool-types/script-syntax";
import type { ResolvedTool, ServerToolService } from "../tools/server-tool-service";

/** What a document write stored: a tool document (validated as a tool) or any other document. */
export type DocumentWrite =
  | { readonly kind: "tool"; readonly created: boolean; readonly tool: ResolvedTool }
  | {
      readonly kind: "document";
      readonly created: boolean;
      readonly path: string;
      readonly layer: "project" | "tenant";
      readonly etag: string;
      readonly audit: ObjectAudit | null;
    };

/** Most projects one listing answers; a tenant with more is answered `truncated`. */
export const MAX_LISTED_PROJECTS = 1000;

/**
 * How a spec document (`specs/…`) longer than an ordinary document is checked before it is
 * stored: only an OpenAPI document may use the spec limit (32 MiB), so its top level must be
 * one's (`openApiShapeProblem`, a linear scan: the full parse runs on the task worker when a
 * pack loads it, once per ETag), else 422.
 */
export interface SpecDocumentCheck {
  /** The ordinary document limit, in bytes: a spec at most this long is stored as sent. */
  readonly ordinaryBytes: number;
}

/** A tenant's projects that hold documents (`GET /v1/tenants/{tenant}/projects`). */
export interface TenantProjects {
  readonly tenant: string;
  readonly projects: readonly string[];
  /** Whether the tenant layer (`_tenant`) holds documents. */
  readonly tenantLayer: boolean;
  readonly truncated: boolean;
}

/** One document of a layer's listing. */
export interface LayerDocument {
  readonly path: string;
  readonly etag: string;
  readonly size: number;
}

/**
 * The documents of a layer by path (spec §4, §9): scripts, markdown, MCP server configs and tool
 * documents alike. Reads resolve through the cascade; a write into `server-tools/` is a tool
 * document, so it goes through `ServerToolService` and is stored only when it is a valid tool.
 */
export class DocumentService {
  constructor(
    private readonly cascade: DocumentCascade,
    private readonly tools: ServerToolService,
    private readonly specs: SpecDocumentCheck = { ordinaryBytes: Number.POSITIVE_INFINITY },
  ) {}

  /** The first hit of project → tenant → bundled; `document_not_found` when no layer has one. */
  async get(tenant: string, project: string, path: string): Promise<CascadeHit> {
    await this.#begin(tenant, project);
    const hit = await this.cascade.lookup(tenant, project, path);
    if (!hit) throw Errors.documentNotFound(path);
    return hit;
  }

  /**
   * The document at `path` in every layer that holds one, in cascade order (project → tenant →
   * bundled): the first is the one `get` answers, the others are shadowed by it.
   */
  async layers(tenant: string, project: string, path: string): Promise<CascadeHit[]> {
    await this.#begin(tenant, project);
    const layers = readLayersOf(project, (layerProject) =>
      this.cascade.readLayer(tenant, layerProject, path),
    );
    const hits = await Promise.all([layers.project, layers.tenant]);
    return [...hits, this.cascade.bundledHit(path)].filter((hit): hit is CascadeHit => hit !== null);
  }

  /** The documents of the addressed layer alone (not the cascade) under a folder prefix, sorted by path. */
  async list(tenant: string, project: string, prefix: string): Promise<LayerDocument[]> {
    await this.#begin(tenant, project);
    const { items } = await this.cascade.listLayer(tenant, project, prefix);
    const layerPrefix = layerKeyPrefix(tenant, project);
    return items
      .filter((item) => item.key.startsWith(layerPrefix))
      .map((item) => ({ path: item.key.slice(layerPrefix.length), etag: item.etag, size: item.size }))
      .sort(byString((document) => document.path));
  }

  /**
   * The projects of a tenant that hold documents, sorted, and whether its tenant layer holds any:
   * what the listing's picker offers. At most `MAX_LISTED_PROJECTS`; `truncated` says more exist.
   */
  async projects(tenant: string): Promise<TenantProjects> {
    const { ids, truncated } = await this.cascade.layersOf(tenant, MAX_LISTED_PROJECTS + 1);
    const projects = ids
      .filter((id) => id !== TENANT_PROJECT && v.is(ProjectIdSchema, id))
      .sort(compareStrings);
    return {
      tenant,
      projects: projects.slice(0, MAX_LISTED_PROJECTS),
      tenantLayer: ids.includes(TENANT_PROJECT),
      truncated: truncated || projects.length > MAX_LISTED_PROJECTS,
    };
  }

  /** Stores a document in the addressed layer, as sent; `created` tells a creation from a replacement. */
  async put(
    tenant: string,
    project: string,
    path: string,
    body: string,
    options: PutOptions,
  ): Promise<DocumentWrite> {
    if (isToolDocumentPath(path)) {
      const name = toolNameFromPath(path);
      if (!name) throw new VanceError("invalid_id", "tool documents are stored as server-tools/{name}.yaml");
      return { kind: "tool", ...(await this.tools.put(tenant, project, name, body, options)) };
    }
    if (isMcpServerDocumentPath(path)) this.validateMcpServer(path, body);
    if (path.startsWith(SPEC_DOCUMENTS_DIR) && utf8Bytes(body) > this.specs.ordinaryBytes) {
      this.checkSpec(path, body);
    }
    if (isScriptDocumentPath(path)) validateScript(body);
    const written = await this.cascade.upsert(tenant, project, path, body, options);
    return {
      kind: "document",
      created: written.created,
      path,
      layer: addressedLayer(project),
      etag: written.etag,
      audit: written.audit,
    };
  }

  /** A long spec is stored only when it has an OpenAPI document's top level ({@link SpecDocumentCheck}). */
  private checkSpec(path: string, body: string): void {
    const problem = openApiShapeProblem(body);
    if (problem === null) return;
    throw Errors.validationFailed(
      `'${path}' is longer than an ordinary document (${this.specs.ordinaryBytes} bytes); only an OpenAPI 3 document may be, and this is none: ${problem}`,
      [{ path: "", message: problem }],
    );
  }

  /** An MCP server document is stored only when it is one: a valid server name and a valid connection. */
  private validateMcpServer(path: string, body: string): void {
    if (!mcpServerNameFromPath(path)) {
      throw new VanceError(
        "invalid_id",
        "MCP server documents are stored as mcp-servers/{name}.yaml, name in lowercase snake_case",
      );
    }
    const parsed = parseMcpServerDocument(body, this.tools.registry.environment);
    if (!parsed.ok) throw parsed.error;
  }

  /** Deletes the document of the addressed layer (`If-Match` honoured); outer layers show through again. */
  async remove(tenant: string, project: string, path: string, ifMatch: string | undefined): Promise<void> {
    await this.cascade.remove(tenant, project, path, ifMatch);
  }

  /**
   * A read of documents is a request of its own: it reads the project's generations first, so it
   * sees every write that finished before it began, on any instance.
   */
  async #begin(tenant: string, project: string): Promise<void> {
    await this.cascade.begin(tenant, project);
  }
}

/** A `.js` document is a script a `scripted` tool's `scriptPath` may name: the sandbox runs nothing else. */
export function isScriptDocumentPath(path: string): boolean {
  return path.endsWith(".js");
}

/** A script is stored only when it compiles (it is parsed, never run). */
function validateScript(body: string): void {
  const problem = scriptSyntaxProblem(body);
  if (problem) {
    throw Errors.validationFailed("the script does not compile", [
      { path: "", message: scriptSyntaxMessage(problem), line: problem.line },
    ]);
  }
}
