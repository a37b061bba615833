import { MIB, stringBytes } from "../cache/byte-cache";
import type { CacheReport } from "../cache/cache-registry";
import { TenantByteCache } from "../cache/tenant-byte-cache";
import { CascadeRead } from "../cascade/cascade-read";
import type { DocumentCascade } from "../cascade/document-cascade";
import {
  CatalogSnapshot,
  type ModelCatalogService,
  NO_MODEL_CATALOG,
} from "../catalog/model-catalog-service";
import type { Logger } from "../ports/logger";
import type { ToolListing } from "./resolved-tool";
import type { ToolReader } from "./tool-reader";
import { ListingVersion, ToolSnapshot } from "./tool-snapshot";

/** Bytes of snapshots (listings and their derived views) one instance keeps by default. */
export const DEFAULT_SNAPSHOT_CACHE_BYTES = 256 * MIB;

/** A listed tool's object, beyond its name and description (its schema is its document's). */
const TOOL_BYTES = 128;

export interface ToolCatalogOptions {
  readonly reader: Pick<ToolReader, "listing" | "lookup" | "packSource">;
  /** Makes the project's generations current for a request's read. */
  readonly cascade: Pick<DocumentCascade, "refresh">;
  /**
   * The model catalog each snapshot carries under the same read (`ToolSnapshot.catalog`). Without
   * it (tools alone, in a test) the snapshots' model catalog is empty: no endpoint, no limit.
   */
  readonly models?: Pick<ModelCatalogService, "snapshot">;
  /** Bytes of snapshots kept; `DEFAULT_SNAPSHOT_CACHE_BYTES` by default. */
  readonly maxBytes?: number;
  /** The part of `maxBytes` one tenant may hold; a quarter by default. */
  readonly tenantShare?: number;
  /** Where a tenant thrashing its share is named (`cache_thrash`). */
  readonly logger?: Logger;
}

/**
 * `ToolCatalog` (issue 38): the one place that reads a project's generations for its tools and
 * answers a `ToolSnapshot`. The project's listing versions are kept in one cache bounded by
 * bytes, with a share per tenant; a version is replaced when the reader answers another listing
 * (a document, a marker or a source's answer changed), and the views derived from the old one go
 * with it.
 */
export class ToolCatalog {
  readonly #reader: ToolCatalogOptions["reader"];
  readonly #cascade: ToolCatalogOptions["cascade"];
  readonly #models: ToolCatalogOptions["models"];
  readonly #versions: TenantByteCache<ListingVersion>;
  #lastVersion = 0;

  constructor(options: ToolCatalogOptions) {
    this.#reader = options.reader;
    this.#cascade = options.cascade;
    this.#models = options.models;
    this.#versions = new TenantByteCache<ListingVersion>({
      maxBytes: options.maxBytes ?? DEFAULT_SNAPSHOT_CACHE_BYTES,
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      sizeOf: (version) => version.bytes,
      name: "tools.snapshots",
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    });
  }

  /**
   * The project's tools for one request: its generations made current for `read` (one
   * state-store request unless the request read them already), then a snapshot that answers
   * every later question of the request without reading them again. The reader below it never
   * sees the read: it answers under the generations made current here (a marker this instance
   * forgot meanwhile the cascade reads again itself).
   */
  async snapshot(tenant: string, project: string, read: CascadeRead): Promise<ToolSnapshot> {
    await this.#cascade.refresh(tenant, project, read);
    const models =
      this.#models?.snapshot(read) ??
      new CatalogSnapshot(
        async () => NO_MODEL_CATALOG,
        (generations, markers) => read.ensure(generations, markers),
      );
    // Methods, not arrow properties: the bundles' `keepNames` renames each named closure made per
    // request with `Object.defineProperty` (~0.7 µs each).
    const catalog = this;
    const reader = this.#reader;
    return new ToolSnapshot(tenant, project, models, {
      listingVersion() {
        return catalog.#listingVersion(tenant, project);
      },
      lookup(name) {
        return reader.lookup(tenant, project, name);
      },
      packSource(name) {
        return reader.packSource(tenant, project, name);
      },
    });
  }

  /**
   * The project's tools for a request that begins here (a route, a spawn): its one read of the
   * generations, then {@link snapshot}. Everything the request does after takes this snapshot.
   */
  begin(tenant: string, project: string): Promise<ToolSnapshot> {
    return this.snapshot(tenant, project, CascadeRead.begin());
  }

  /** The snapshot cache's counters and extent. */
  cacheReport(): CacheReport {
    return this.#versions.report();
  }

  /** The bytes of snapshots `tenant` holds on this instance. */
  bytesOf(tenant: string): number {
    return this.#versions.bytesOf(tenant);
  }

  async #listingVersion(tenant: string, project: string): Promise<ListingVersion> {
    const keyed = await this.#reader.listing(tenant, project);
    // Compared by what the listing was built from, never by object: a fresh but equal listing
    // keeps its version, and everything derived hangs on the version.
    const cached = this.#versions.get(tenant, project, (version) => version.key === keyed.key);
    if (cached) return cached;
    const listing = keyed.listing();
    const version = new ListingVersion(
      tenant,
      project,
      ++this.#lastVersion,
      keyed.key,
      listing,
      listingBytes(listing),
      (resized) => {
        if (this.#versions.peek(tenant, project) === resized) this.#versions.set(tenant, project, resized);
      },
    );
    this.#versions.set(tenant, project, version);
    return version;
  }
}

/** What a listing adds to the documents it lists: its tools' objects, names and descriptions. */
function listingBytes(listing: ToolListing): number {
  let bytes = TOOL_BYTES * (listing.invalid.length + listing.hidden.length + listing.packs.length);
  for (const tool of listing.tools)
    bytes += TOOL_BYTES + stringBytes(tool.name) + stringBytes(tool.config.description);
  return bytes;
}
