import type { CascadeRead } from "../cascade/cascade-read";
import { CATALOG_MARKER, type GenerationStamp, type Generations } from "../cascade/generations";
import { mapWithConcurrency } from "../concurrency";
import type { Logger } from "../ports/logger";
import { isNotModified, listAllObjects, type ObjectStore } from "../ports/object-store";
import { CATALOG_KEY, CATALOG_MODEL_PREFIX, mergeCatalogSources, parseCatalogFile } from "./catalog-file";
import {
  type CatalogDocument,
  type CatalogError,
  type CompiledCatalog,
  compileCatalog,
} from "./model-catalog";

/** Parallel GETs when the YAML sources are read one by one. */
const READ_CONCURRENCY = 16;

export interface ModelCatalogServiceOptions {
  /** The catalog bucket. */
  readonly store: ObjectStore;
  /** Bundled catalog documents, paths `model/…`; a bucket document at the same path replaces one. */
  readonly bundled: readonly CatalogDocument[];
  readonly logger: Logger;
  /**
   * Generation markers: the catalog is then kept warm until a write into the catalog bucket
   * bumps `CATALOG_MARKER`. Without them each call revalidates `catalog.json` by ETag.
   */
  readonly generations?: Generations;
}

/**
 * `ModelCatalog` (spec §14.1): serves the compiled catalog to handlers. The normal path is one
 * GET of `catalog.json` per call, revalidated by ETag in a warm instance, so a request never
 * pays for listing the catalog. Until the first sync has written `catalog.json`, the YAML
 * sources are listed and compiled instead (each source re-read only when its ETag changed).
 */
export class ModelCatalogService {
  readonly #store: ObjectStore;
  readonly #bundled: readonly CatalogDocument[];
  readonly #logger: Logger;
  #compiled: { etag: string; catalog: CompiledCatalog } | null = null;
  readonly #sources = new Map<string, { etag: string; body: string }>();
  #fromSources: CompiledCatalog | null = null;
  readonly #generations: Generations | undefined;
  #current: { readonly stamp: GenerationStamp; readonly catalog: CompiledCatalog } | null = null;

  constructor(options: ModelCatalogServiceOptions) {
    this.#store = options.store;
    this.#bundled = options.bundled;
    this.#logger = options.logger;
    this.#generations = options.generations;
  }

  /**
   * The current catalog: `catalog.json` when the sync has written it, else compiled from the
   * sources. With generation markers, no store request while the catalog's generation stands as
   * the request's `read` read it (one state-store request unless the request read it already).
   */
  async catalog(read: CascadeRead): Promise<CompiledCatalog> {
    const generations = this.#generations;
    if (!generations) return this.#revalidate();
    await read.ensure(generations, [CATALOG_MARKER]);
    const current = this.#current;
    if (current && generations.isCurrent(CATALOG_MARKER, current.stamp)) return current.catalog;
    const stamp = generations.stamp(CATALOG_MARKER);
    const catalog = await this.#revalidate();
    this.#current = { stamp, catalog };
    return catalog;
  }

  /** `catalog.json` revalidated by ETag, or the sources compiled while it is absent or invalid. */
  async #revalidate(): Promise<CompiledCatalog> {
    const cached = this.#compiled;
    const result = await this.#store.get(CATALOG_KEY, cached ? { ifNoneMatch: cached.etag } : undefined);
    if (isNotModified(result)) {
      if (cached) return cached.catalog;
      // A notModified answer to an unconditional GET breaks the port's contract.
      throw new Error(`the catalog store answered notModified to an unconditional GET of ${CATALOG_KEY}`);
    }
    if (result === null) {
      this.#compiled = null;
      return this.compileFromSources();
    }
    const catalog = parseCatalogFile(result.body);
    if (!catalog) {
      this.#compiled = null;
      this.#logger.warn("catalog.invalid_compiled", {
        key: CATALOG_KEY,
        fix: "run the catalog sync to rewrite it; the YAML sources are used meanwhile",
      });
      return this.compileFromSources();
    }
    this.#compiled = { etag: result.etag, catalog };
    return catalog;
  }

  /** Compiles the bucket's YAML sources together with the bundled ones (for the sync job and the fallback). */
  async compileFromSources(): Promise<CompiledCatalog> {
    const { documents, changed } = await this.#readSources();
    if (!changed && this.#fromSources) return this.#fromSources;
    const { catalog, errors } = compileCatalog(documents);
    logCatalogErrors(this.#logger, errors);
    this.#fromSources = catalog;
    return catalog;
  }

  /** The catalog's source documents: the bundled ones, each replaced by a bucket document at the same path. */
  async sources(): Promise<CatalogDocument[]> {
    return (await this.#readSources()).documents;
  }

  async #readSources(): Promise<{ documents: CatalogDocument[]; changed: boolean }> {
    const listed = new Map<string, string>();
    for (const item of await listAllObjects(this.#store, CATALOG_MODEL_PREFIX)) {
      if (item.key.endsWith(".yaml")) listed.set(item.key, item.etag);
    }

    let changed = false;
    for (const key of this.#sources.keys()) {
      if (!listed.has(key)) {
        this.#sources.delete(key);
        changed = true;
      }
    }
    const stale = [...listed].filter(([key, etag]) => this.#sources.get(key)?.etag !== etag);
    await mapWithConcurrency(stale, READ_CONCURRENCY, async ([key]) => {
      const object = await this.#store.get(key);
      // Deleted between the listing and the read: it is simply no longer a source.
      if (object === null || isNotModified(object)) this.#sources.delete(key);
      else this.#sources.set(key, { etag: object.etag, body: object.body });
    });
    if (stale.length > 0) changed = true;

    const stored = [...this.#sources].map(([path, { body }]) => ({ path, body }));
    return { documents: mergeCatalogSources(this.#bundled, stored), changed };
  }
}

/** Logs one WARN per catalog document that could not be compiled. */
export function logCatalogErrors(logger: Logger, errors: readonly CatalogError[]): void {
  for (const error of errors)
    logger.warn("catalog.invalid_document", { path: error.path, message: error.message });
}
