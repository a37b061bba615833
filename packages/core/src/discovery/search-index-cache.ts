import { LRUCache } from "lru-cache";
import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import type { CascadeRead } from "../cascade/cascade-read";
import type { ToolListing } from "../tools/resolved-tool";
import type { ServerToolService } from "../tools/server-tool-service";
import { searchDocumentsOf } from "./search-document";
import { buildSearchIndex, type SearchDocument, SearchIndex, type SearchIndexData } from "./search-index";

/** What building one project's search index asks for. */
export interface SearchIndexBuildRequest {
  readonly documents: readonly SearchDocument[];
  /** Whose project: each tenant has its own share of the builder's threads. */
  readonly tenant: string;
}

/**
 * The search index builder port: `buildSearchIndex` run where its cost — linear in every tool's
 * text, seconds for thousands of MCP tools with long descriptions — holds no request (a task
 * worker thread in the API), answering plain data; rejects saying why (`Busy`, a deadline).
 */
export type SearchIndexBuilder = (request: SearchIndexBuildRequest) => Promise<SearchIndexData>;

/** `buildSearchIndex` on the calling thread: for tests and tools, never the serving thread. */
export const inProcessSearchIndexBuilder: SearchIndexBuilder = async ({ documents }) =>
  buildSearchIndex(documents);

/** Bytes of built indexes one instance keeps, across projects (about 2 MB per 5,000 OpenAPI operations). */
export const SEARCH_INDEX_CACHE_BYTES = 64 * 1024 * 1024;

export interface SearchIndexCacheOptions {
  readonly tools: Pick<ServerToolService, "listing">;
  readonly builder: SearchIndexBuilder;
  /** Bytes of indexes kept; `SEARCH_INDEX_CACHE_BYTES` by default. */
  readonly maxBytes?: number;
}

interface Entry {
  /** The listing the index was built from: the project's tools at one generation of its documents. */
  readonly listing: ToolListing;
  readonly index: Promise<SearchIndex>;
  bytes: number;
}

/**
 * `tool_search`'s indexes, one per (tenant, project) for the listing it was built from. The
 * listing is the project's generation: `ToolReader.listing` answers the same object while no
 * document, pack source or marker of the project changed, and a new one after a write. A search
 * at the same generation reuses the index (concurrent ones share its build); the first search
 * after a write builds it again, once, on the builder's thread. Bounded by bytes (least recently
 * used out first).
 */
export class SearchIndexCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly reads = new CacheCounters();
  private buildCount = 0;

  constructor(private readonly options: SearchIndexCacheOptions) {
    this.entries = new LRUCache<string, Entry>({
      maxSize: options.maxBytes ?? SEARCH_INDEX_CACHE_BYTES,
      // Sized at its real bytes once built (`set` again); a build in flight counts its documents.
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
    });
  }

  /** How many indexes were built since the start: one per (project, generation) searched. */
  builds(): number {
    return this.buildCount;
  }

  cacheReports(): Record<string, CacheReport> {
    return { searchIndexes: this.reads.report(lruExtent(this.entries)) };
  }

  /**
   * The index of the project's tools at the generation `read` sees, built when this generation
   * has none yet. A failed build rejects saying why and is not kept: the next search tries again.
   */
  async index(tenant: string, project: string, read: CascadeRead): Promise<SearchIndex> {
    const listing = await this.options.tools.listing(tenant, project, read);
    const key = `${tenant}/${project}`;
    const cached = this.entries.get(key);
    if (cached?.listing === listing) {
      this.reads.hits++;
      return cached.index;
    }
    this.reads.misses++;
    this.buildCount++;
    const documents = searchDocumentsOf(listing.tools);
    const entry: Entry = {
      listing,
      bytes: 256 * documents.length,
      index: this.options.builder({ documents, tenant }).then(
        (data) => new SearchIndex(data),
        (error: unknown) => {
          throw new Error(
            `the search index of this project could not be built: ${error instanceof Error ? error.message : String(error)}`,
          );
        },
      ),
    };
    this.entries.set(key, entry);
    entry.index.then(
      (index) => {
        if (this.entries.peek(key) !== entry) return;
        entry.bytes = index.bytes;
        this.entries.set(key, entry);
      },
      () => {
        if (this.entries.peek(key) === entry) this.entries.delete(key);
      },
    );
    return entry.index;
  }
}
