import { describe, expect, it } from "vitest";
import { Errors } from "../errors";
import { META_TOOL, toolDocumentPath } from "../ids";
import type { PackSource, ResolvedTool, ToolListing } from "../tools/resolved-tool";
import type { ToolSnapshot } from "../tools/tool-snapshot";
import { RecipeResolver, TOOL_SEARCH_AUTO_SIZE } from "./recipe-resolver";

// The resolver reads one thing of the request's snapshot: the project's listing. These tests
// hand it listings built in memory and check the spec's rule (§6) as a spawn's caller sees it:
// `(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove`, labels and packs expanded.

const tool = (name: string, labels: readonly string[] = []): ResolvedTool =>
  ({
    kind: "document",
    name,
    layer: "project",
    etag: "e",
    config: { name, description: `Does ${name}.`, labels },
    inputSchema: { type: "object" },
    type: {},
  }) as unknown as ResolvedTool;

const subTool = (pack: string, operation: string): ResolvedTool =>
  ({
    kind: "pack-sub-tool",
    name: `${pack}__${operation}`,
    layer: "project",
    etag: "e",
    config: { name: `${pack}__${operation}`, description: `${operation} of ${pack}.`, labels: [] },
    inputSchema: { type: "object" },
    type: {},
    pack: { name: pack, tool: { name: operation } },
  }) as unknown as ResolvedTool;

const pack = (
  name: string,
  subTools: number,
  options: Partial<Pick<PackSource, "labels" | "status" | "reason">> = {},
): PackSource => ({ name, layer: "project", labels: [], status: "current", subTools, notes: [], ...options });

function listingOf(listing: Partial<ToolListing>): ToolListing {
  const tools = [...(listing.tools ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return { tools, invalid: listing.invalid ?? [], packs: listing.packs ?? [], hidden: listing.hidden ?? [] };
}

/** A snapshot whose listing is `listing`, counting how often it is read. */
function snapshotOf(listing: ToolListing) {
  const reads = { listings: 0 };
  const snapshot: Pick<ToolSnapshot, "listing"> = {
    listing: async () => {
      reads.listings++;
      return listing;
    },
  };
  return { snapshot: snapshot as ToolSnapshot, reads };
}

const resolver = new RecipeResolver();

describe("RecipeResolver: the allow set of a recipe", () => {
  it("is the defaults and the additions without the removals, sorted, and warns of nothing when all exist", async () => {
    const { snapshot } = snapshotOf(
      listingOf({ tools: [tool("search"), tool("fetch"), tool("write"), tool("delete")] }),
    );
    const resolved = await resolver.resolve(snapshot, {
      engineDefault: ["write", "search"],
      allowedToolsAdd: ["fetch", "delete", "search"],
      allowedToolsRemove: ["delete"],
    });
    expect(resolved).toEqual({
      allowedTools: ["fetch", "search", "write"],
      allowedPacks: [],
      excludedTools: [],
      stalePacks: [],
      warnings: [],
    });
  });

  it("expands an @label to the tools carrying it, and keeps a pack carrying it by reference", async () => {
    const { snapshot } = snapshotOf(
      listingOf({
        tools: [
          tool("crawl", ["web"]),
          tool("fetch", ["web", "net"]),
          tool("notes"),
          subTool("jira", "search"),
        ],
        packs: [pack("jira", 1, { labels: ["web"] })],
      }),
    );
    const resolved = await resolver.resolve(snapshot, {
      engineDefault: ["@web"],
      allowedToolsRemove: ["@net"],
    });
    expect(resolved.allowedTools).toEqual(["crawl"]);
    expect(resolved.allowedPacks).toEqual(["jira"]);
    expect(resolved.warnings).toEqual([]);
  });

  it("allows a named pack's current sub-tools and the pack itself; a sub-tool removed by name is excluded", async () => {
    const { snapshot } = snapshotOf(
      listingOf({
        tools: [
          subTool("jira", "search"),
          subTool("jira", "create"),
          subTool("jira", "delete"),
          tool("notes"),
        ],
        packs: [pack("jira", 3)],
      }),
    );
    const resolved = await resolver.resolve(snapshot, {
      allowedToolsAdd: ["jira", "notes"],
      allowedToolsRemove: ["jira__delete"],
    });
    expect(resolved.allowedTools).toEqual(["jira__create", "jira__search", "notes"]);
    expect(resolved.allowedPacks).toEqual(["jira"]);
    // The pack is allowed by reference: the removed sub-tool stays out whatever its source offers later.
    expect(resolved.excludedTools).toEqual(["jira__delete"]);
  });

  it("removing a pack removes its sub-tools, named or expanded", async () => {
    const { snapshot } = snapshotOf(
      listingOf({ tools: [subTool("jira", "search"), tool("notes")], packs: [pack("jira", 1)] }),
    );
    const resolved = await resolver.resolve(snapshot, {
      // jira__archive: a sub-tool the pack's source does not offer right now, named all the same.
      engineDefault: ["jira", "jira__search", "jira__archive", "notes"],
      allowedToolsRemove: ["jira"],
    });
    expect(resolved.allowedTools).toEqual(["notes"]);
    expect(resolved.allowedPacks).toEqual([]);
  });

  it("keeps a name no tool has as written, and says so; an engine's client tool is known", async () => {
    const invalidError = Errors.invalidDocument(
      toolDocumentPath("broken"),
      "project",
      Errors.validationFailed("its url is missing", []),
    );
    const { snapshot } = snapshotOf(
      listingOf({
        tools: [tool("search")],
        invalid: [{ path: toolDocumentPath("broken"), layer: "project", error: invalidError }],
      }),
    );
    const resolved = await resolver.resolve(
      snapshot,
      { engineDefault: ["search", "ask_user"], allowedToolsAdd: ["missing", "broken", "@nolabel"] },
      { clientTools: ["ask_user"] },
    );
    expect(resolved.allowedTools).toEqual(["ask_user", "broken", "missing", "search"]);
    expect(resolved.warnings).toEqual([
      {
        code: "unknown_tool",
        list: "allowedToolsAdd",
        entry: "missing",
        message: "no enabled tool named 'missing' in this project",
      },
      { code: "invalid_tool", list: "allowedToolsAdd", entry: "broken", message: invalidError.message },
      {
        code: "unknown_label",
        list: "allowedToolsAdd",
        entry: "@nolabel",
        message: "no tool carries the label 'nolabel'",
      },
    ]);
  });

  it("names the packs whose source is not current, and does not warn of a sub-tool of a pack that is unavailable", async () => {
    const { snapshot } = snapshotOf(
      listingOf({
        tools: [subTool("jira", "search")],
        packs: [
          pack("github", 0, { status: "unavailable", reason: "connection refused" }),
          pack("jira", 1, { status: "stale", reason: "HTTP 503" }),
        ],
      }),
    );
    const resolved = await resolver.resolve(snapshot, {
      engineDefault: ["jira", "github", "github__issues"],
    });
    expect(resolved.allowedPacks).toEqual(["github", "jira"]);
    expect(resolved.allowedTools).toEqual(["github__issues", "jira__search"]);
    expect(resolved.stalePacks).toEqual([
      { pack: "github", status: "unavailable", reason: "connection refused" },
      { pack: "jira", status: "stale", reason: "HTTP 503" },
    ]);
    expect(resolved.warnings).toEqual([]);
  });

  it("refuses an entry that is neither a tool name nor an @label, before reading the project", async () => {
    const { snapshot, reads } = snapshotOf(listingOf({ tools: [tool("search")] }));
    await expect(
      resolver.resolve(snapshot, { allowedToolsAdd: ["search", "Bad Name"] }),
    ).rejects.toMatchObject({
      code: "validation_failed",
      errors: [{ path: "allowedTools", message: "'Bad Name' is not a tool name or an @label selector" }],
    });
    expect(reads.listings).toBe(0);
  });

  it("reads the listing once for a whole recipe, and not at all for an empty one", async () => {
    const { snapshot, reads } = snapshotOf(listingOf({ tools: [tool("a", ["x"]), tool("b", ["y"])] }));
    await resolver.resolve(snapshot, {
      engineDefault: ["@x", "a"],
      allowedToolsAdd: ["@y"],
      allowedToolsRemove: ["b"],
    });
    expect(reads.listings).toBe(1);
    expect(await resolver.resolve(snapshot, {})).toEqual({
      allowedTools: [],
      allowedPacks: [],
      excludedTools: [],
      stalePacks: [],
      warnings: [],
    });
    expect(reads.listings).toBe(1);
  });
});

describe("RecipeResolver: tool_search for a large allow set", () => {
  const many = (count: number) => Array.from({ length: count }, (_, i) => tool(`t${i}`, ["bulk"]));

  it(`adds ${META_TOOL.search} by itself, with a warning, once the set holds more than ${TOOL_SEARCH_AUTO_SIZE} tools (a pack counted by its sub-tools)`, async () => {
    const { snapshot } = snapshotOf(
      listingOf({
        tools: [...many(TOOL_SEARCH_AUTO_SIZE - 1), tool(META_TOOL.search)],
        packs: [pack("big", 2)],
      }),
    );
    const small = await resolver.resolve(snapshot, { engineDefault: ["@bulk"] });
    expect(small.allowedTools).toHaveLength(TOOL_SEARCH_AUTO_SIZE - 1);
    expect(small.warnings).toEqual([]);

    const large = await resolver.resolve(snapshot, { engineDefault: ["@bulk", "big"] });
    expect(large.allowedTools).toContain(META_TOOL.search);
    expect(large.warnings).toEqual([
      expect.objectContaining({ code: "tool_search_added", entry: META_TOOL.search }),
    ]);
  });

  it("leaves it out when the recipe removes it, or when the project has no such tool", async () => {
    const withSearch = snapshotOf(
      listingOf({ tools: [...many(TOOL_SEARCH_AUTO_SIZE + 1), tool(META_TOOL.search)] }),
    );
    const removed = await resolver.resolve(withSearch.snapshot, {
      engineDefault: ["@bulk"],
      allowedToolsRemove: [META_TOOL.search],
    });
    expect(removed.allowedTools).not.toContain(META_TOOL.search);
    expect(removed.warnings).toEqual([]);

    const without = snapshotOf(listingOf({ tools: many(TOOL_SEARCH_AUTO_SIZE + 1) }));
    const absent = await resolver.resolve(without.snapshot, { engineDefault: ["@bulk"] });
    expect(absent.allowedTools).toHaveLength(TOOL_SEARCH_AUTO_SIZE + 1);
    expect(absent.warnings).toEqual([]);
  });
});
