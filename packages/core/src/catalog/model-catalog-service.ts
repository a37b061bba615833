import { CacheCounters, type CacheReport } from "../cache/cache-registry";
import { CascadeRead, type GenerationReads } from "../cascade/cascade-read";
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
  #kept: { readonly stamp: GenerationStamp; readonly catalog: CompiledCatalog } | null = null;
  /** A read answered without a store request (kept under the generation, or `notModified`) is a hit. */
  readonly #reads = new CacheCounters();

  constructor(options: ModelCatalogServiceOptions) {
    this.#store = options.store;
    this.#bundled = options.bundled;
    this.#logger = options.logger;
    this.#generations = options.generations;
  }

  /**
   * The model catalog as one request sees it (issue 38): `read` is the request's — the one its
   * tool snapshot was taken under, or {@link begin}'s — and the catalog is read under it once, at
   * the snapshot's first ask. Nothing below takes a read: the budget, the model picker and the
   * learned limits take this snapshot.
   */
  snapshot(read: CascadeRead): CatalogSnapshot {
    return new CatalogSnapshot(
      async () => {
        const generations = this.#generations;
        if (!generations) return this.#revalidate();
        await read.ensure(generations, [CATALOG_MARKER]);
        return this.#current(generations);
      },
      (generations, markers) => read.ensure(generations, markers),
    );
  }

  /** A request about the model catalog alone (the catalog routes, a reported limit): a read of its own. */
  begin(): CatalogSnapshot {
    return this.snapshot(CascadeRead.begin());
  }

  /**
   * `catalog.json` when the sync has written it, else compiled from the sources: no store request
   * while the catalog's generation stands as the caller's read made it current.
   */
  async #current(generations: Generations): Promise<CompiledCatalog> {
    const current = this.#kept;
    if (current && generations.isCurrent(CATALOG_MARKER, current.stamp)) {
      this.#reads.hits++;
      return current.catalog;
    }
    const stamp = generations.stamp(CATALOG_MARKER);
    const catalog = await this.#revalidate();
    this.#kept = { stamp, catalog };
    return catalog;
  }

  /** `catalog.json` revalidated by ETag, or the sources compiled while it is absent or invalid. */
  async #revalidate(): Promise<CompiledCatalog> {
    const cached = this.#compiled;
    const result = await this.#store.get(CATALOG_KEY, cached ? { ifNoneMatch: cached.etag } : undefined);
    if (isNotModified(result)) {
      if (cached) {
        this.#reads.hits++;
        return cached.catalog;
      }
      // A notModified answer to an unconditional GET breaks the port's contract.
      throw new Error(`the catalog store answered notModified to an unconditional GET of ${CATALOG_KEY}`);
    }
    this.#reads.misses++;
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

  /**
   * What this instance keeps of the model catalog (listed in `/v1/metrics` as part of `catalog`):
   * `catalog.json` parsed, by its ETag and the catalog's generation, and the YAML sources by their
   * ETags (read only while `catalog.json` is absent).
   */
  cacheReport(): CacheReport {
    return this.#reads.report({ entries: (this.#compiled ? 1 : 0) + this.#sources.size });
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

/** The catalog of a deployment that has none wired (tools alone, in a test): no endpoint, no limit. */
export const NO_MODEL_CATALOG: CompiledCatalog = Object.freeze({
  version: 1,
  compiledAt: new Date(0).toISOString(),
  providers: Object.freeze({}),
});

/**
 * The model catalog as one request sees it (issue 38): taken where the request begins — beside its
 * `ToolSnapshot` (`ToolSnapshot.catalog`), or by a catalog route — and handed to the budget, the
 * model picker and the learned limits, which take no read of their own. The compiled catalog is
 * read at the first ask and is the same for every later one.
 */
export class CatalogSnapshot {
  #catalog: Promise<CompiledCatalog> | undefined;

  constructor(
    private readonly load: () => Promise<CompiledCatalog>,
    private readonly current: (
      generations: GenerationReads | undefined,
      markers: readonly string[],
    ) => Promise<void>,
  ) {}

  /**
   * Makes these markers' generations current under the request's read (what else the request
   * reads by generation, the learned limits): one state-store request unless it read them already.
   */
  ensure(generations: GenerationReads | undefined, markers: readonly string[]): Promise<void> {
    return this.current(generations, markers);
  }

  /** The compiled catalog under the request's read; read once per snapshot (a failed read is tried again). */
  catalog(): Promise<CompiledCatalog> {
    if (this.#catalog) return this.#catalog;
    const loading = this.load();
    this.#catalog = loading;
    loading.catch(() => {
      if (this.#catalog === loading) this.#catalog = undefined;
    });
    return loading;
  }
}

/** Logs one WARN per catalog document that could not be compiled. */
export function logCatalogErrors(logger: Logger, errors: readonly CatalogError[]): void {
  for (const error of errors)
    logger.warn("catalog.invalid_document", { path: error.path, message: error.message });
}
