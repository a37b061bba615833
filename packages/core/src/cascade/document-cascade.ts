import { ByteCache, type CacheStats, MIB, stringBytes, utf8Bytes } from "../cache/byte-cache";
import { Errors, VanceError } from "../errors";
import {
  assertDocumentPath,
  assertProjectId,
  assertTenantId,
  innermostFirst,
  layerDocumentKey,
  layerKeyPrefix,
  type ReadLayers,
  readLayersOf,
  TENANT_PROJECT,
} from "../ids";
import { byString } from "../order";
import type { Logger } from "../ports/logger";
import {
  isNotModified,
  listAllObjects,
  listFolderNames,
  type ObjectAudit,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "../ports/object-store";
import type { TenantQuotas } from "../quotas/tenant-quotas";
import { CascadeRead } from "./cascade-read";
import { type GenerationStamp, type Generations, layerMarker, requestMarkers } from "./generations";

/** The layers of the cascade, innermost first. `builtin` exists only for tools. */
export type Layer = "project" | "tenant" | "bundled" | "builtin";
export type DocumentLayer = Exclude<Layer, "builtin">;

/** Documents shipped with the service (`packages/defaults/`), by path. Read once at start-up. */
export type BundledDocuments = ReadonlyMap<
  string,
  { readonly body: string; readonly contentType: string | undefined }
>;

/** A document found by the cascade. `etag`, `key` and `audit` are null for the bundled layer. */
/** A document's version in the cascade: the layer that answers and its ETag (null for bundled ones). */
export interface DocumentVersion {
  readonly layer: DocumentLayer;
  readonly path: string;
  readonly etag: string | null;
}

export interface CascadeHit {
  readonly layer: DocumentLayer;
  readonly path: string;
  readonly key: string | null;
  readonly body: string;
  readonly etag: string | null;
  readonly contentType: string | undefined;
  /** Who wrote it and when, as the store keeps it (null where the store keeps none). */
  readonly audit: ObjectAudit | null;
}

/** The layer a write to `project` addresses: `_tenant` is the tenant layer. */
export function addressedLayer(project: string): "project" | "tenant" {
  return project === TENANT_PROJECT ? "tenant" : "project";
}

/** What the cascade keeps warm by default: document bodies and layer listings. */
export const DEFAULT_DOCUMENT_CACHE_BYTES = 64 * MIB;

export interface DocumentCascadeOptions {
  /**
   * Generation markers. Without them nothing is trusted between calls: every read revalidates
   * against the store (the catalog sync and unit tests run so).
   */
  readonly generations?: Generations;
  /** Bytes of document bodies and layer listings a warm instance keeps. */
  readonly maxCacheBytes?: number;
  /** The part of `maxCacheBytes` one tenant's documents may hold; `DEFAULT_TENANT_SHARE` by default. */
  readonly tenantShare?: number;
  /**
   * Told of every write and delete through the cascade once its generation bump answered (with
   * generation markers only): the composition root rebuilds the layer's compiled tool index.
   */
  readonly onChanged?: (tenant: string, project: string) => void;
  /**
   * The tenants' document byte quota: a write is charged what it adds before the store sees it
   * (429 `quota_exceeded` past the quota), a delete or a smaller replacement refunded after.
   */
  readonly quotas?: Pick<TenantQuotas, "chargeDocumentBytes" | "refundDocumentBytes">;
  /** Where a tenant thrashing its share of the cache is named (`cache_thrash`); none by default. */
  readonly logger?: Logger;
  /** The clock of the cache's thrash windows (ms); `Date.now` by default. */
  readonly now?: () => number;
}

/** What a write was charged against its tenant's quota: settled once the store answered. */
interface QuotaCharge {
  /** The store took the write: a smaller replacement gives back the difference. */
  stored(): Promise<void>;
  /** The store refused the write (a precondition, a path conflict): the charge is given back. */
  refused(): Promise<void>;
}

const NO_CHARGE: QuotaCharge = { stored: async () => {}, refused: async () => {} };

/** One directory of one layer, listed whole; `version` changes whenever the listing may differ. */
export interface LayerListing {
  readonly items: readonly ObjectMeta[];
  readonly version: number;
  /** The layer's generation the listing was read under, and when (`generation` -1 without markers). */
  readonly stamp: GenerationStamp;
}

interface CachedBody {
  readonly kind: "body";
  readonly object: StoredObject;
}

/**
 * What one layer held under one generation: each document looked up (its ETag, or null when
 * absent) and each directory listed whole. A new index replaces it when the generation moves;
 * only this instance's own write, when nobody else wrote in between, carries it over.
 */
interface LayerIndex {
  readonly kind: "layer";
  readonly marker: string;
  readonly stamp: GenerationStamp;
  readonly version: number;
  readonly documents: Map<string, string | null>;
  readonly listings: Map<string, Promise<readonly ObjectMeta[]>>;
  /** Directories whose listing has arrived: a path under one that the listing lacks is absent. */
  readonly listed: Set<string>;
  bytes: number;
}

/** Bytes of bookkeeping per entry beyond its strings (map slots, object headers). */
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * `DocumentCascade` (spec §4, §9): resolves a document path through project → `_tenant` →
 * bundled. With generation markers, a warm instance answers from what it read under the layers'
 * current generations — no store request while nothing moved — and every write through it bumps
 * the layer's generation after the store took it. Reads trust the generations the request read
 * (`refresh`, or ProcessService with the process record). The project and tenant layers are read
 * in parallel; a body seen before is revalidated with `If-None-Match` rather than transferred
 * again. Bodies and listings are kept in one cache bounded by bytes.
 */
export class DocumentCascade {
  readonly #cache: ByteCache<CachedBody | LayerIndex>;
  readonly #generations: Generations | undefined;
  readonly #onChanged: ((tenant: string, project: string) => void) | undefined;
  readonly #quotas: DocumentCascadeOptions["quotas"];
  #versions = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly bundled: BundledDocuments,
    options: DocumentCascadeOptions = {},
  ) {
    this.#generations = options.generations;
    this.#onChanged = options.onChanged;
    this.#quotas = options.quotas;
    this.#cache = new ByteCache({
      maxBytes: options.maxCacheBytes ?? DEFAULT_DOCUMENT_CACHE_BYTES,
      // Each tenant at most its share: one tenant's documents cannot push another's out.
      tenantOf: tenantOfCacheKey,
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      name: "documents",
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.now === undefined ? {} : { now: options.now }),
      sizeOf: (entry, key) =>
        stringBytes(key) +
        (entry.kind === "layer"
          ? entry.bytes
          : stringBytes(entry.object.body) + stringBytes(entry.object.etag) + ENTRY_OVERHEAD_BYTES),
    });
  }

  /** The object key of a document in one layer. Validates every part, so no key can escape its prefix. */
  static key(tenant: string, project: string, path: string): string {
    assertTenantId(tenant);
    assertProjectId(project);
    assertDocumentPath(path);
    return layerDocumentKey(tenant, project, path);
  }

  /**
   * The object keys of a document in the layers a request for `project` reads (its own and the
   * tenant's), each part validated once: a lookup asked {@link key} per layer, which checked the
   * same path and tenant again for the tenant layer on every call.
   */
  static layerKeys(tenant: string, project: string, path: string): ReadLayers<string> {
    assertTenantId(tenant);
    assertProjectId(project);
    assertDocumentPath(path);
    return readLayersOf(project, (layerProject) => layerDocumentKey(tenant, layerProject, path));
  }

  /** Hits and misses of the document cache, and its size. */
  get stats(): CacheStats {
    return this.#cache.stats;
  }

  /**
   * Makes current for `read` the generations a request about this project trusts afterwards:
   * one state-store request unless the request read them already, so its reads see every write
   * that finished before it started.
   */
  async refresh(tenant: string, project: string, read: CascadeRead): Promise<void> {
    assertTenantId(tenant);
    assertProjectId(project);
    await read.ensure(this.#generations, requestMarkers(tenant, project));
  }

  /** A request about this project's documents that begins here: {@link refresh} under a read of its own. */
  begin(tenant: string, project: string): Promise<void> {
    return this.refresh(tenant, project, CascadeRead.begin());
  }

  /** The first hit of project → tenant → bundled, or null. Trusts the known generations (see `refresh`). */
  async lookup(tenant: string, project: string, path: string): Promise<CascadeHit | null> {
    const { project: projectKey, tenant: tenantKey } = DocumentCascade.layerKeys(tenant, project, path);
    const [projectIndex, tenantIndex] = await this.#indexes(tenant, project);
    const [projectHit, tenantHit] = await Promise.all([
      projectKey && projectIndex ? this.#read(projectIndex, projectKey, path) : Promise.resolve(null),
      this.#read(tenantIndex, tenantKey, path),
    ]);
    if (projectHit) return toHit("project", path, projectHit);
    if (tenantHit) return toHit("tenant", path, tenantHit);
    return this.bundledHit(path);
  }

  /**
   * Which version of `path` the cascade resolves to — its layer and ETag — without its body when
   * the layers' indexes know it: a large document (a 13 MB spec, larger than the body cache takes)
   * is not read again only to learn that it did not change.
   */
  async lookupVersion(tenant: string, project: string, path: string): Promise<DocumentVersion | null> {
    const { project: projectKey, tenant: tenantKey } = DocumentCascade.layerKeys(tenant, project, path);
    const [projectIndex, tenantIndex] = await this.#indexes(tenant, project);
    const etagOf = async (index: LayerIndex, key: string): Promise<string | null> => {
      const known = this.#known(index, path);
      if (known !== undefined) return known;
      return (await this.#read(index, key, path))?.etag ?? null;
    };
    const [projectEtag, tenantEtag] = await Promise.all([
      projectKey && projectIndex ? etagOf(projectIndex, projectKey) : Promise.resolve(null),
      etagOf(tenantIndex, tenantKey),
    ]);
    if (projectEtag !== null) return { layer: "project", path, etag: projectEtag };
    if (tenantEtag !== null) return { layer: "tenant", path, etag: tenantEtag };
    return this.bundled.get(path) ? { layer: "bundled", path, etag: null } : null;
  }

  /** The document of exactly one layer (`_tenant` addresses the tenant layer), or null. */
  async readLayer(tenant: string, project: string, path: string): Promise<CascadeHit | null> {
    const key = DocumentCascade.key(tenant, project, path);
    const index = await this.#layerIndex(tenant, project);
    const stored = await this.#read(index, key, path);
    return stored ? toHit(addressedLayer(project), path, stored) : null;
  }

  /** The bundled document at `path`, or null. */
  bundledHit(path: string): CascadeHit | null {
    const doc = this.bundled.get(path);
    return doc
      ? {
          layer: "bundled",
          path,
          key: null,
          body: doc.body,
          etag: null,
          contentType: doc.contentType,
          audit: null,
        }
      : null;
  }

  /** The bundled documents whose path starts with `prefix`. */
  bundledUnder(prefix: string): CascadeHit[] {
    const hits: CascadeHit[] = [];
    for (const path of this.bundled.keys()) if (path.startsWith(prefix)) hits.push(this.bundledHit(path)!);
    return hits.sort(byString((hit) => hit.path));
  }

  /**
   * Every object of one layer under a directory prefix (all LIST pages), with the ETags the
   * listing gives; listed once per generation (concurrent callers share the LIST).
   */
  async listLayer(tenant: string, project: string, dirPrefix: string): Promise<LayerListing> {
    const index = await this.#layerIndex(tenant, project);
    let listing = index.listings.get(dirPrefix);
    if (listing) {
      this.#cache.hit();
    } else {
      this.#cache.miss();
      listing = this.#list(index, layerKeyPrefix(tenant, project), dirPrefix);
      index.listings.set(dirPrefix, listing);
    }
    return { items: await listing, version: index.version, stamp: index.stamp };
  }

  /**
   * The stamp of the layer's current index and whether it has listed `dirPrefix` already; null
   * without generation markers (nothing is trusted, so nothing can be seeded).
   */
  async layerState(
    tenant: string,
    project: string,
    dirPrefix: string,
  ): Promise<{ readonly stamp: GenerationStamp; readonly listed: boolean } | null> {
    if (!this.#generations) return null;
    const index = await this.#layerIndex(tenant, project);
    return { stamp: index.stamp, listed: index.listings.has(dirPrefix) };
  }

  /**
   * Takes a listing of `dirPrefix` that was read under `stamp` (a compiled layer index) as the
   * layer's, instead of listing it: only while `stamp` is still current by the generations this
   * request trusts (and the safety net's age), and the layer's index has not listed it yet.
   */
  seedListing(
    tenant: string,
    project: string,
    dirPrefix: string,
    stamp: GenerationStamp,
    items: readonly ObjectMeta[],
  ): boolean {
    const generations = this.#generations;
    const marker = layerMarker(tenant, project);
    if (!generations?.isCurrent(marker, stamp)) return false;
    const index = this.#index(marker);
    if (index.stamp.generation !== stamp.generation || index.listings.has(dirPrefix)) return false;
    const layerPrefix = layerKeyPrefix(tenant, project);
    for (const item of items) {
      index.documents.set(item.key.slice(layerPrefix.length), item.etag);
      index.bytes += 2 * (stringBytes(item.key) + stringBytes(item.etag)) + 2 * ENTRY_OVERHEAD_BYTES;
    }
    index.listings.set(dirPrefix, Promise.resolve(items));
    index.listed.add(dirPrefix);
    this.#store(index);
    return true;
  }

  /**
   * The layers of `tenant` that hold at least one document (`_tenant` among them), by id: one
   * delimited LIST per thousand, at most `max` of them.
   */
  async layersOf(tenant: string, max: number): Promise<{ ids: string[]; truncated: boolean }> {
    assertTenantId(tenant);
    const { names, truncated } = await listFolderNames(this.store, `${tenant}/`, max);
    return { ids: names, truncated };
  }

  /** Writes one document into the addressed layer. */
  async write(tenant: string, project: string, path: string, body: string, options: PutOptions) {
    const key = DocumentCascade.key(tenant, project, path);
    const charge = await this.#charge(tenant, project, path, key, body, options);
    return this.#write(tenant, project, path, body, options, charge);
  }

  async #write(
    tenant: string,
    project: string,
    path: string,
    body: string,
    options: PutOptions,
    charge: QuotaCharge,
  ) {
    const key = DocumentCascade.key(tenant, project, path);
    const result = await this.store.put(key, body, options);
    if (!result.ok) await charge.refused();
    if (!result.ok && result.reason === "path_conflict") throw Errors.pathConflict(path);
    if (!result.ok) throw Errors.preconditionFailed(preconditionDetail(options));
    await charge.stored();
    await this.#changed(tenant, project, path, {
      key,
      body,
      etag: result.etag,
      contentType: options.contentType,
      ...(result.audit ? { audit: result.audit } : {}),
    });
    return { key, etag: result.etag, audit: result.audit ?? null };
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
  ): Promise<{ key: string; etag: string; audit: ObjectAudit | null; created: boolean }> {
    const key = DocumentCascade.key(tenant, project, path);
    if (options.ifMatch !== undefined || options.ifNoneMatch !== undefined) {
      const charge = await this.#charge(tenant, project, path, key, body, options);
      return {
        ...(await this.#write(tenant, project, path, body, options, charge)),
        created: options.ifNoneMatch === "*",
      };
    }
    // The create is tried first, and one the store takes replaced nothing: an old size this
    // instance does not know already is read only when the create is refused (or the quota is
    // near), not before every write.
    const known = await this.#knownSize(tenant, project, path);
    let charge =
      known === undefined
        ? await this.#chargeCreate(tenant, key, body)
        : await this.#chargeDelta(tenant, utf8Bytes(body) - known);
    const attempt = await this.store.put(key, body, { ...options, ifNoneMatch: "*" });
    if (attempt.ok) {
      await charge.stored();
      const object = {
        key,
        body,
        etag: attempt.etag,
        contentType: options.contentType,
        ...(attempt.audit ? { audit: attempt.audit } : {}),
      };
      await this.#changed(tenant, project, path, object);
      return { key, etag: attempt.etag, audit: attempt.audit ?? null, created: true };
    }
    if (attempt.reason === "path_conflict") {
      await charge.refused();
      throw Errors.pathConflict(path);
    }
    if (known === undefined) {
      // Charged as a creation, it is a replacement: charged what it adds to the old document.
      await charge.refused();
      charge = await this.#charge(tenant, project, path, key, body, options);
    }
    return { ...(await this.#write(tenant, project, path, body, options, charge)), created: false };
  }

  /**
   * Charges `tenant`'s quota what writing `body` under `key` adds: its bytes less those of the
   * document it replaces — none for a creation (`If-None-Match: *`), else what this instance
   * knows of it already ({@link #knownSize}), else read from a one-entry listing (no body). A
   * write whose outcome is unknown (the store failed) keeps its charge: the count may run over,
   * never under. Two concurrent writes of one key are both charged against the same old size, so
   * the count may stray by their difference until the next write of that key.
   */
  async #charge(
    tenant: string,
    project: string,
    path: string,
    key: string,
    body: string,
    options: PutOptions,
  ): Promise<QuotaCharge> {
    if (!this.#quotas) return NO_CHARGE;
    const old =
      options.ifNoneMatch === "*"
        ? 0
        : ((await this.#knownSize(tenant, project, path)) ?? (await this.#storedSize(key)));
    return this.#chargeDelta(tenant, utf8Bytes(body) - old);
  }

  /**
   * Charges a write tried as a creation its whole size, without reading what may be there; when
   * that would pass the quota, what it adds to a document already there (one listing) decides.
   */
  async #chargeCreate(tenant: string, key: string, body: string): Promise<QuotaCharge> {
    if (!this.#quotas) return NO_CHARGE;
    try {
      return await this.#chargeDelta(tenant, utf8Bytes(body));
    } catch (error) {
      if (!(error instanceof VanceError && error.code === "quota_exceeded")) throw error;
      return this.#chargeDelta(tenant, utf8Bytes(body) - (await this.#storedSize(key)));
    }
  }

  /** Charges `delta` bytes (a negative one is refunded once the store took the write). */
  async #chargeDelta(tenant: string, delta: number): Promise<QuotaCharge> {
    const quotas = this.#quotas;
    if (!quotas) return NO_CHARGE;
    if (delta > 0) await quotas.chargeDocumentBytes(tenant, delta);
    return {
      stored: async () => {
        if (delta < 0) await quotas.refundDocumentBytes(tenant, -delta);
      },
      refused: async () => {
        if (delta > 0) await quotas.refundDocumentBytes(tenant, delta);
      },
    };
  }

  /**
   * The stored size of `path` in its layer as this instance knows it already under the layer's
   * current generation, without a request: 0 when the layer's index knows it absent, its size
   * in a listing the index holds, or the bytes of its cached body when that has the ETag the
   * index knows. Undefined when none of these tells (without generation markers, always).
   */
  async #knownSize(tenant: string, project: string, path: string): Promise<number | undefined> {
    const generations = this.#generations;
    if (!generations) return undefined;
    const marker = layerMarker(tenant, project);
    const index = this.#cache.get(layerKey(marker));
    if (index?.kind !== "layer" || !generations.isCurrent(marker, index.stamp)) return undefined;
    const etag = this.#known(index, path);
    if (etag === null) return 0;
    if (etag === undefined) return undefined;
    const key = DocumentCascade.key(tenant, project, path);
    const cached = this.#cache.get(bodyKey(key));
    if (cached?.kind === "body" && cached.object.etag === etag) return utf8Bytes(cached.object.body);
    for (const dir of index.listed) {
      if (!path.startsWith(dir)) continue;
      const item = (await index.listings.get(dir))?.find((meta) => meta.key === key);
      if (item?.etag === etag) return item.size;
    }
    return undefined;
  }

  /** The stored size of the object under `key` (0 when none): the first key of a listing from it. */
  async #storedSize(key: string): Promise<number> {
    const { items } = await this.store.list(key, { limit: 1 });
    const first = items[0];
    return first !== undefined && first.key === key ? first.size : 0;
  }

  /** Deletes one document from the addressed layer; `document_not_found` when the layer has none. */
  async remove(tenant: string, project: string, path: string, ifMatch: string | undefined): Promise<void> {
    const key = DocumentCascade.key(tenant, project, path);
    const size = this.#quotas
      ? ((await this.#knownSize(tenant, project, path)) ?? (await this.#storedSize(key)))
      : 0;
    const result = await this.store.delete(key, ifMatch === undefined ? {} : { ifMatch });
    if (result.ok) {
      await this.#quotas?.refundDocumentBytes(tenant, size);
      return this.#changed(tenant, project, path, null);
    }
    this.#cache.delete(bodyKey(key));
    if (result.reason === "not_found") throw Errors.documentNotFound(path);
    throw Errors.preconditionFailed("the document changed since the given ETag (If-Match)");
  }

  /**
   * After a write or delete the store took: the layer's generation moves, so every instance
   * reads the layer again. The write stands once the object store took it: a bump the state store
   * cannot take now is resent until it lands (`Generations.bumpAfterWrite`; the answer says so),
   * and this instance forgets its index of the layer meanwhile. When the bump shows that nobody
   * else wrote in between, this instance carries its index over to the new generation instead
   * of listing the layer again.
   */
  async #changed(tenant: string, project: string, path: string, object: StoredObject | null): Promise<void> {
    const key = DocumentCascade.key(tenant, project, path);
    if (object) this.#remember(object);
    else this.#cache.delete(bodyKey(key));
    const generations = this.#generations;
    if (!generations) return;
    const marker = layerMarker(tenant, project);
    const before = this.#cache.get(layerKey(marker));
    const generation = await generations.bumpAfterWrite(marker, () => this.#onChanged?.(tenant, project));
    if (generation === "pending") {
      this.#cache.delete(layerKey(marker));
      return;
    }
    this.#onChanged?.(tenant, project);
    if (before?.kind !== "layer" || before.stamp.generation !== generation - 1) return;
    if (this.#cache.get(layerKey(marker)) !== before) return;
    this.#store(this.#carriedOver(before, generation, key, path, object));
  }

  /** `index` under `generation`, with this instance's own write of `path` applied. */
  #carriedOver(
    index: LayerIndex,
    generation: number,
    key: string,
    path: string,
    object: StoredObject | null,
  ): LayerIndex {
    const next = this.#newIndex(index.marker, { generation, at: index.stamp.at });
    for (const [documentPath, etag] of index.documents) next.documents.set(documentPath, etag);
    next.documents.set(path, object?.etag ?? null);
    for (const dir of index.listed) {
      const listing = index.listings.get(dir)!;
      next.listed.add(dir);
      next.listings.set(
        dir,
        path.startsWith(dir) ? listing.then((items) => withItem(items, key, object)) : listing,
      );
    }
    next.bytes = index.bytes + stringBytes(path) * 2 + ENTRY_OVERHEAD_BYTES * 2;
    return next;
  }

  /** Both layers' indexes of a lookup (the project's is null for `_tenant`). */
  async #indexes(tenant: string, project: string): Promise<[LayerIndex | null, LayerIndex]> {
    const markers = readLayersOf(project, (layerProject) => layerMarker(tenant, layerProject));
    await this.#generations?.ensure(innermostFirst(markers));
    return [markers.project === null ? null : this.#index(markers.project), this.#index(markers.tenant)];
  }

  async #layerIndex(tenant: string, project: string): Promise<LayerIndex> {
    assertTenantId(tenant);
    assertProjectId(project);
    const marker = layerMarker(tenant, project);
    await this.#generations?.ensure([marker]);
    return this.#index(marker);
  }

  /** The layer's index under its known generation: the cached one while current, else a new, empty one. */
  #index(marker: string): LayerIndex {
    const generations = this.#generations;
    if (!generations) return this.#newIndex(marker, { generation: -1, at: 0 });
    const cached = this.#cache.get(layerKey(marker));
    if (cached?.kind === "layer" && generations.isCurrent(marker, cached.stamp)) return cached;
    const index = this.#newIndex(marker, generations.stamp(marker));
    this.#store(index);
    return index;
  }

  #newIndex(marker: string, stamp: GenerationStamp): LayerIndex {
    return {
      kind: "layer",
      marker,
      stamp,
      version: ++this.#versions,
      documents: new Map(),
      listings: new Map(),
      listed: new Set(),
      bytes: stringBytes(marker) + ENTRY_OVERHEAD_BYTES,
    };
  }

  /** Caches `index` (again): its size is counted anew. Only with generations: without, nothing is trusted. */
  #store(index: LayerIndex): void {
    if (this.#generations) this.#cache.set(layerKey(index.marker), index);
  }

  /** One document of one layer: from the index and the body cache while they answer, else one GET. */
  async #read(index: LayerIndex, key: string, path: string): Promise<StoredObject | null> {
    const known = this.#known(index, path);
    const cached = this.#cache.get(bodyKey(key));
    const body = cached?.kind === "body" ? cached.object : undefined;
    if (known === null || (known !== undefined && body?.etag === known)) {
      this.#cache.hit();
      return known === null ? null : body!;
    }
    this.#cache.miss();
    const result = await this.store.get(key, body ? { ifNoneMatch: body.etag } : {});
    const object = isNotModified(result) ? (body ?? null) : result;
    if (object) this.#remember(object);
    else this.#cache.delete(bodyKey(key));
    this.#record(index, path, object?.etag ?? null);
    return object;
  }

  /** What the index knows of `path`: its ETag, null when absent, undefined when it was never read. */
  #known(index: LayerIndex, path: string): string | null | undefined {
    const etag = index.documents.get(path);
    if (etag !== undefined) return etag;
    for (const dir of index.listed) if (path.startsWith(dir)) return null;
    return undefined;
  }

  #record(index: LayerIndex, path: string, etag: string | null): void {
    if (!index.documents.has(path)) index.bytes += stringBytes(path) + ENTRY_OVERHEAD_BYTES;
    index.documents.set(path, etag);
    if (this.#cache.get(layerKey(index.marker)) === index) this.#store(index);
  }

  async #list(index: LayerIndex, layerPrefix: string, dirPrefix: string): Promise<readonly ObjectMeta[]> {
    try {
      const items = await listAllObjects(this.store, `${layerPrefix}${dirPrefix}`);
      for (const item of items) {
        index.documents.set(item.key.slice(layerPrefix.length), item.etag);
        index.bytes += 2 * (stringBytes(item.key) + stringBytes(item.etag)) + 2 * ENTRY_OVERHEAD_BYTES;
      }
      index.listed.add(dirPrefix);
      if (this.#cache.get(layerKey(index.marker)) === index) this.#store(index);
      return items;
    } catch (error) {
      index.listings.delete(dirPrefix);
      throw error;
    }
  }

  #remember(object: StoredObject): void {
    this.#cache.set(bodyKey(object.key), { kind: "body", object });
  }
}

function bodyKey(key: string): string {
  return `body:${key}`;
}

function layerKey(marker: string): string {
  return `layer:${marker}`;
}

/**
 * The tenant a cache entry belongs to: of a body, the object key's first segment
 * (`body:{tenant}/…`); of a layer index, the marker's (`layer:documents/{tenant}/{project}`).
 */
function tenantOfCacheKey(cacheKey: string): string {
  const rest = cacheKey.startsWith("layer:")
    ? cacheKey.slice("layer:documents/".length)
    : cacheKey.slice("body:".length);
  const end = rest.indexOf("/");
  return end < 0 ? rest : rest.slice(0, end);
}

/** A listing with the object at `key` replaced by `object` (or removed, for null), still in key order. */
function withItem(items: readonly ObjectMeta[], key: string, object: StoredObject | null): ObjectMeta[] {
  const rest = items.filter((item) => item.key !== key);
  if (!object) return rest;
  const at = rest.findIndex((item) => item.key > key);
  const meta = { key, etag: object.etag, size: new TextEncoder().encode(object.body).length };
  return at < 0 ? [...rest, meta] : [...rest.slice(0, at), meta, ...rest.slice(at)];
}

function toHit(layer: DocumentLayer, path: string, object: StoredObject): CascadeHit {
  return {
    layer,
    path,
    key: object.key,
    body: object.body,
    etag: object.etag,
    contentType: object.contentType,
    audit: object.audit ?? null,
  };
}

function preconditionDetail(options: PutOptions): string {
  return options.ifNoneMatch === "*"
    ? "a document already exists here (If-None-Match: *)"
    : "the document changed since the given ETag (If-Match)";
}
