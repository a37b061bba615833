import type { CatalogSnapshot } from "../catalog/model-catalog-service";
import {
  foundTool,
  type PackSource,
  type ResolvedTool,
  type ToolListing,
  type ToolLookup,
} from "./resolved-tool";

/**
 * A view derived from a project's listing (a search index, wire tools, discovery hints), built
 * at most once per snapshot version and kept on it: `name` identifies it, `build` makes it from
 * the listing, `bytes` says what it weighs once built (counted against the snapshot cache).
 */
export interface SnapshotView<T> {
  readonly name: string;
  build(listing: ToolListing, owner: { readonly tenant: string; readonly project: string }): T;
  /** What the built view weighs (a promise's settled value). */
  bytes?(value: Awaited<T>): number;
}

/** Declares a derived view; the object itself is the key it is memoised by on every snapshot. */
export function snapshotView<T>(view: SnapshotView<T>): SnapshotView<T> {
  return Object.freeze({ ...view });
}

/**
 * A project's listing named by what it was built from (issue 38: versions, not objects): two
 * listings of one project with one key are equal on this instance, however many objects answered
 * them, so a fresh but equal listing keeps its snapshot and the views derived from it.
 */
export interface KeyedListing {
  /** The versions of the layer listings merged and of every remote source's answer expanded. */
  readonly key: string;
  /** The listing, built when asked: the snapshot cache asks only for a key it does not hold. */
  listing(): ToolListing;
}

/**
 * One version of a project's tools: the listing of its layers at their generations with its
 * remote sources expanded as they answered, numbered (`version` grows with every new one on this
 * instance) and never changed. Derived views are memoised on it, so they go with it: nothing
 * below it keeps a cache keyed by the listing's object.
 */
export class ListingVersion {
  readonly #views = new Map<SnapshotView<unknown>, unknown>();
  #viewBytes = 0;

  constructor(
    readonly tenant: string,
    readonly project: string,
    readonly version: number,
    /** What the listing was built from (`KeyedListing.key`): the version holds while it does. */
    readonly key: string,
    readonly listing: ToolListing,
    /** What the listing weighs (its tools' names and descriptions; schemas belong to the documents). */
    readonly listingBytes: number,
    /** Called when a view was added or learned its size: the cache accounts the version again. */
    private readonly resized: (version: ListingVersion) => void,
  ) {}

  /** The listing's bytes and its views'. */
  get bytes(): number {
    return this.listingBytes + this.#viewBytes;
  }

  /** How many views this version holds (each built once). */
  get views(): number {
    return this.#views.size;
  }

  /** `view` of this version, built at its first use. A view that is a promise is sized once it settles. */
  view<T>(view: SnapshotView<T>): T {
    if (this.#views.has(view as SnapshotView<unknown>))
      return this.#views.get(view as SnapshotView<unknown>) as T;
    const value = view.build(this.listing, this);
    this.#views.set(view as SnapshotView<unknown>, value);
    if (value instanceof Promise) {
      value.then(
        (settled: unknown) => this.#account(view as SnapshotView<unknown>, settled),
        () => {
          // A failed build is not kept: the next use builds it again.
          if (this.#views.get(view as SnapshotView<unknown>) === value)
            this.#views.delete(view as SnapshotView<unknown>);
        },
      );
    } else this.#account(view as SnapshotView<unknown>, value);
    return value;
  }

  #account(view: SnapshotView<unknown>, value: unknown): void {
    const bytes = view.bytes?.(value as Awaited<unknown>) ?? 0;
    if (bytes <= 0) return;
    this.#viewBytes += bytes;
    this.resized(this);
  }
}

/** What a snapshot reads through: the catalog's version of the listing and its lookups. */
export interface SnapshotSource {
  listingVersion(): Promise<ListingVersion>;
  lookup(name: string): Promise<ToolLookup>;
  packSource(name: string): Promise<PackSource | null>;
}

/**
 * `ToolSnapshot`: what tools a project has for one request (issue 38) — taken once by the route or
 * `ProcessService` after the request's one read of the generations, and handed to everything
 * below it, which never reads the generations again. `lookup` resolves one name without listing
 * the project (an invocation of a cold project reads one document); `listing` and the views
 * derived from it come from the project's current `ListingVersion`, shared by every request
 * while the project's layers and sources are unchanged.
 */
export class ToolSnapshot {
  #version: Promise<ListingVersion> | undefined;

  constructor(
    readonly tenant: string,
    readonly project: string,
    /**
     * The model catalog under the request's read of the generations, which this snapshot made
     * current for the project: the budget, the model picker and the learned limits answer from it.
     */
    readonly catalog: CatalogSnapshot,
    private readonly source: SnapshotSource,
  ) {}

  /** Resolves a name: project → tenant → bundled → built-in (see `ToolReader.lookup`). */
  lookup(name: string): Promise<ToolLookup> {
    return this.source.lookup(name);
  }

  /** Like `lookup`, but a miss, a disabled or an invalid hit throws its domain error. */
  async require(name: string): Promise<ResolvedTool> {
    return foundTool(name, await this.lookup(name));
  }

  /** How the source of the pack document `name` answers now, or null when it is no enabled pack document. */
  packSource(name: string): Promise<PackSource | null> {
    return this.source.packSource(name);
  }

  /** The project's listing version for this request: listed at its first use, then the same. */
  version(): Promise<ListingVersion> {
    this.#version ??= this.source.listingVersion();
    return this.#version;
  }

  /** The merged cascade with what it leaves out (see `ToolReader.listing`). */
  async listing(): Promise<ToolListing> {
    return (await this.version()).listing;
  }

  /** All enabled tools visible in the project, sorted by name. */
  async tools(): Promise<readonly ResolvedTool[]> {
    return (await this.listing()).tools;
  }

  /** The enabled tools carrying `label`, sorted by name. */
  async withLabel(label: string): Promise<ResolvedTool[]> {
    return (await this.tools()).filter((tool) => tool.config.labels.includes(label));
  }

  /** A view derived from the listing, memoised on its version. */
  async view<T>(view: SnapshotView<T>): Promise<T> {
    return (await this.version()).view(view);
  }
}
