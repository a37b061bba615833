import { Errors } from "../errors";
import { assertDocumentPath, assertProjectId, assertTenantId, TENANT_PROJECT } from "../ids";
import { byString } from "../order";
import {
  isNotModified,
  listAllObjects,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "../ports/object-store";

/** The layers of the cascade, innermost first. `builtin` exists only for tools. */
export type Layer = "project" | "tenant" | "bundled" | "builtin";
export type DocumentLayer = Exclude<Layer, "builtin">;

/** Documents shipped with the service (`packages/defaults/`), by path. Read once at start-up. */
export type BundledDocuments = ReadonlyMap<
  string,
  { readonly body: string; readonly contentType: string | undefined }
>;

/** A document found by the cascade. `etag` and `key` are null for the bundled layer. */
export interface CascadeHit {
  readonly layer: DocumentLayer;
  readonly path: string;
  readonly key: string | null;
  readonly body: string;
  readonly etag: string | null;
  readonly contentType: string | undefined;
}

/** The layer a write to `project` addresses: `_tenant` is the tenant layer. */
export function addressedLayer(project: string): "project" | "tenant" {
  return project === TENANT_PROJECT ? "tenant" : "project";
}

/** How many documents' bodies a warm instance keeps for conditional GETs. */
const BODY_CACHE_ENTRIES = 4096;

/**
 * `DocumentCascade` (spec §4, §9): resolves a document path through project → `_tenant` →
 * bundled. The project and tenant layers are read in parallel, so a lookup costs one round
 * trip; `_tenant` as the project collapses the two reads into one. Bodies already seen are
 * revalidated with `If-None-Match` instead of transferred again — never served unchecked.
 */
export class DocumentCascade {
  private readonly bodies = new Map<string, StoredObject>();

  constructor(
    private readonly store: ObjectStore,
    private readonly bundled: BundledDocuments,
  ) {}

  /** The object key of a document in one layer. Validates every part, so no key can escape its prefix. */
  static key(tenant: string, project: string, path: string): string {
    assertTenantId(tenant);
    assertProjectId(project);
    assertDocumentPath(path);
    return `${tenant}/${project}/${path}`;
  }

  /** The first hit of project → tenant → bundled, or null. */
  async lookup(tenant: string, project: string, path: string): Promise<CascadeHit | null> {
    const tenantKey = DocumentCascade.key(tenant, TENANT_PROJECT, path);
    const projectKey = project === TENANT_PROJECT ? null : DocumentCascade.key(tenant, project, path);
    const [projectHit, tenantHit] = await Promise.all([
      projectKey ? this.read(projectKey) : Promise.resolve(null),
      this.read(tenantKey),
    ]);
    if (projectHit) return toHit("project", path, projectHit);
    if (tenantHit) return toHit("tenant", path, tenantHit);
    return this.bundledHit(path);
  }

  /** The document of exactly one layer (`_tenant` addresses the tenant layer), or null. */
  async readLayer(tenant: string, project: string, path: string): Promise<CascadeHit | null> {
    const stored = await this.read(DocumentCascade.key(tenant, project, path));
    return stored ? toHit(addressedLayer(project), path, stored) : null;
  }

  /** The bundled document at `path`, or null. */
  bundledHit(path: string): CascadeHit | null {
    const doc = this.bundled.get(path);
    return doc
      ? { layer: "bundled", path, key: null, body: doc.body, etag: null, contentType: doc.contentType }
      : null;
  }

  /** The bundled documents whose path starts with `prefix`. */
  bundledUnder(prefix: string): CascadeHit[] {
    const hits: CascadeHit[] = [];
    for (const path of this.bundled.keys()) if (path.startsWith(prefix)) hits.push(this.bundledHit(path)!);
    return hits.sort(byString((hit) => hit.path));
  }

  /** Every object of one layer under a directory prefix (all LIST pages), with the ETags the listing gives. */
  async listLayer(tenant: string, project: string, dirPrefix: string): Promise<ObjectMeta[]> {
    assertTenantId(tenant);
    assertProjectId(project);
    return listAllObjects(this.store, `${tenant}/${project}/${dirPrefix}`);
  }

  /** Reads one object by key, revalidating a cached body by ETag. */
  async read(key: string): Promise<StoredObject | null> {
    const cached = this.bodies.get(key);
    const result = await this.store.get(key, cached ? { ifNoneMatch: cached.etag } : {});
    if (cached && isNotModified(result)) {
      this.remember(cached);
      return cached;
    }
    if (result === null || isNotModified(result)) {
      this.bodies.delete(key);
      return null;
    }
    this.remember(result);
    return result;
  }

  /** Writes one document into the addressed layer. */
  async write(tenant: string, project: string, path: string, body: string, options: PutOptions) {
    const key = DocumentCascade.key(tenant, project, path);
    const result = await this.store.put(key, body, options);
    if (!result.ok && result.reason === "path_conflict") throw Errors.pathConflict(path);
    if (!result.ok) throw Errors.preconditionFailed(preconditionDetail(options));
    this.remember({ key, body, etag: result.etag, contentType: options.contentType });
    return { key, etag: result.etag };
  }

  /**
   * Stores a document as sent. With a precondition it is one conditional write; without, it
   * creates when absent and replaces otherwise, and `created` tells which — no read first.
   */
  async upsert(
    tenant: string,
    project: string,
    path: string,
    body: string,
    options: PutOptions,
  ): Promise<{ key: string; etag: string; created: boolean }> {
    if (options.ifMatch !== undefined || options.ifNoneMatch !== undefined) {
      return {
        ...(await this.write(tenant, project, path, body, options)),
        created: options.ifNoneMatch === "*",
      };
    }
    const key = DocumentCascade.key(tenant, project, path);
    const attempt = await this.store.put(key, body, { ...options, ifNoneMatch: "*" });
    if (attempt.ok) {
      this.remember({ key, body, etag: attempt.etag, contentType: options.contentType });
      return { key, etag: attempt.etag, created: true };
    }
    if (attempt.reason === "path_conflict") throw Errors.pathConflict(path);
    return { ...(await this.write(tenant, project, path, body, options)), created: false };
  }

  /** Deletes one document from the addressed layer; `document_not_found` when the layer has none. */
  async remove(tenant: string, project: string, path: string, ifMatch: string | undefined): Promise<void> {
    const key = DocumentCascade.key(tenant, project, path);
    const result = await this.store.delete(key, ifMatch === undefined ? {} : { ifMatch });
    this.bodies.delete(key);
    if (result.ok) return;
    if (result.reason === "not_found") throw Errors.documentNotFound(path);
    throw Errors.preconditionFailed("the document changed since the given ETag (If-Match)");
  }

  private remember(object: StoredObject): void {
    this.bodies.delete(object.key);
    this.bodies.set(object.key, object);
    if (this.bodies.size > BODY_CACHE_ENTRIES) this.bodies.delete(this.bodies.keys().next().value!);
  }
}

function toHit(layer: DocumentLayer, path: string, object: StoredObject): CascadeHit {
  return {
    layer,
    path,
    key: object.key,
    body: object.body,
    etag: object.etag,
    contentType: object.contentType,
  };
}

function preconditionDetail(options: PutOptions): string {
  return options.ifNoneMatch === "*"
    ? "a document already exists here (If-None-Match: *)"
    : "the document changed since the given ETag (If-Match)";
}
