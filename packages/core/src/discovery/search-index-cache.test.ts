import { describe, expect, it } from "vitest";
import { CascadeRead } from "../cascade/cascade-read";
import type { ResolvedTool, ToolListing } from "../tools/resolved-tool";
import { ToolCatalog } from "../tools/tool-catalog";
import { buildSearchIndex } from "./search-index";
import { type SearchIndexBuilder, searchIndexView } from "./search-index-cache";

/** A listed tool as the index reads it: a name and a description. */
const listed = (name: string, description: string): ResolvedTool =>
  ({
    kind: "document",
    name,
    layer: "project",
    etag: "e",
    config: { description },
    inputSchema: { type: "object", properties: {} },
    type: {},
  }) as unknown as ResolvedTool;

const listingOf = (tools: ResolvedTool[]): ToolListing => ({ tools, invalid: [], packs: [], hidden: [] });

/** The index of a project's tools as `tool_search` reads it: the view of one snapshot per request. */
function indexes(listing: () => ToolListing, builder: SearchIndexBuilder) {
  const generations: ToolListing[] = [];
  const generationOf = (current: ToolListing) =>
    generations.includes(current) ? generations.indexOf(current) : generations.push(current) - 1;
  const catalog = new ToolCatalog({
    reader: {
      listing: async () => {
        const current = listing();
        // Keyed as `ToolReader.listing` keys one: here by the object, one per generation.
        return { key: String(generationOf(current)), listing: () => current };
      },
      lookup: async () => ({ status: "not_found" }),
      packSource: async () => null,
    },
    cascade: { refresh: async () => undefined },
  });
  const search = searchIndexView(builder);
  return {
    index: async (tenant: string, project: string, read: CascadeRead) =>
      (await catalog.snapshot(tenant, project, read)).view(search.view),
    builds: search.builds,
  };
}

/** A project whose listing is `current` (one object per generation, as `ToolReader.listing` answers). */
function project(initial: ToolListing) {
  const state = { current: initial };
  const built: number[] = [];
  const builder: SearchIndexBuilder = async ({ documents }) => {
    built.push(documents.length);
    return buildSearchIndex(documents);
  };
  return { state, built, cache: indexes(() => state.current, builder) };
}

describe("SearchIndexCache: one index per (project, generation), reused", () => {
  it("20 searches at one generation build once; a write (a new listing) builds once more; the new tool is found", async () => {
    const { state, built, cache } = project(
      listingOf([listed("find_customer", "Finds a customer by email")]),
    );
    const read = CascadeRead.begin();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () =>
        (await cache.index("acme", "shop", read)).search("customer email", 3).map((hit) => hit.name),
      ),
    );
    expect(answers.every((names) => names[0] === "find_customer")).toBe(true);
    expect(cache.builds()).toBe(1);
    expect(built).toEqual([1]);

    state.current = listingOf([
      listed("find_customer", "Finds a customer by email"),
      listed("refund_order", "Refunds an order to its customer"),
    ]);
    for (let search = 0; search < 5; search++) {
      const index = await cache.index("acme", "shop", read);
      expect(index.search("refund an order", 1).map((hit) => hit.name)).toEqual(["refund_order"]);
    }
    expect(cache.builds()).toBe(2);
    expect(built).toEqual([1, 2]);
    // Another project of the same tenant has its own index.
    await cache.index("acme", "other", read);
    expect(cache.builds()).toBe(3);
  });

  it("a failed build says why, is not kept, and the next search builds again", async () => {
    let fail = true;
    const listing = listingOf([listed("find_customer", "Finds a customer")]);
    const cache = indexes(
      () => listing,
      async ({ documents }) => {
        if (fail) throw new Error("building search indexes did not finish within 30000 ms");
        return buildSearchIndex(documents);
      },
    );
    await expect(cache.index("acme", "shop", CascadeRead.begin())).rejects.toThrow(
      "the search index of this project could not be built: building search indexes did not finish within 30000 ms",
    );
    fail = false;
    const index = await cache.index("acme", "shop", CascadeRead.begin());
    expect(index.size).toBe(1);
    expect(cache.builds()).toBe(2);
  });
});
