import type { ToolListing } from "../tools/resolved-tool";
import { type SnapshotView, snapshotView } from "../tools/tool-snapshot";
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

/**
 * `tool_search`'s index as a view of a tool snapshot: built once per listing version (one per
 * project and generation, its sources' answers included) on `builder`'s thread, kept on the
 * version and counted against the snapshot cache at its real bytes once built. Concurrent
 * searches of one version share its build; a failed build is not kept (the next search tries
 * again); a new version (a write, a source's new list) builds it anew. `builds` counts builds.
 */
export function searchIndexView(builder: SearchIndexBuilder): {
  readonly view: SnapshotView<Promise<SearchIndex>>;
  builds(): number;
} {
  let builds = 0;
  const view = snapshotView<Promise<SearchIndex>>({
    name: "searchIndex",
    build: (listing: ToolListing, owner) => {
      builds++;
      const documents = searchDocumentsOf(listing.tools);
      return builder({ documents, tenant: owner.tenant }).then(
        (data) => new SearchIndex(data),
        (error: unknown) => {
          throw new Error(
            `the search index of this project could not be built: ${error instanceof Error ? error.message : String(error)}`,
          );
        },
      );
    },
    bytes: (index) => index.bytes,
  });
  return { view, builds: () => builds };
}
