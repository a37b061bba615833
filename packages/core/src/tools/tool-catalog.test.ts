import { describe, expect, it } from "vitest";
import { CascadeRead } from "../cascade/cascade-read";
import type { ResolvedTool, ToolListing, ToolLookup } from "./resolved-tool";
import { ToolCatalog } from "./tool-catalog";
import { type KeyedListing, snapshotView } from "./tool-snapshot";

const listed = (name: string, description = `Does ${name}.`): ResolvedTool =>
  ({
    kind: "document",
    name,
    layer: "project",
    etag: "e",
    config: { name, description, labels: name.startsWith("web") ? ["web"] : [] },
    inputSchema: { type: "object" },
    type: {},
  }) as unknown as ResolvedTool;

const listingOf = (tools: ResolvedTool[]): ToolListing =>
  Object.freeze({ tools: Object.freeze(tools), invalid: [], packs: [], hidden: [] });

/** A listing keyed by what it holds, as `ToolReader.listing` keys one by the versions it is built from. */
const keyed = (listing: ToolListing): KeyedListing => ({
  key: listing.tools.map((tool) => `${tool.name}\n${tool.config.description}`).join("\n\n"),
  listing: () => listing,
});

/**
 * A catalog over an in-memory reader: each project answers its current listing (a new object
 * after a "write"), keyed by its content, and every read is counted.
 */
function catalogOver(projects: Map<string, ToolListing>, options: { maxBytes?: number } = {}) {
  const counts = { refreshes: 0, listings: 0, lookups: 0 };
  const catalog = new ToolCatalog({
    reader: {
      listing: async (tenant, project) => {
        counts.listings++;
        return keyed(projects.get(`${tenant}/${project}`) ?? listingOf([]));
      },
      lookup: async (tenant, project, name): Promise<ToolLookup> => {
        counts.lookups++;
        const tool = projects.get(`${tenant}/${project}`)?.tools.find((each) => each.name === name);
        return tool ? { status: "found", tool } : { status: "not_found" };
      },
      packSource: async () => null,
    },
    cascade: {
      refresh: async () => {
        counts.refreshes++;
      },
    },
    ...(options.maxBytes ? { maxBytes: options.maxBytes, tenantShare: 0.25 } : {}),
  });
  return { catalog, counts };
}

/** A view that counts its builds: the names of the listing, joined. */
function countingView() {
  const built: number[] = [];
  const view = snapshotView({
    name: "names",
    build: (listing: ToolListing) => {
      built.push(listing.tools.length);
      return listing.tools.map((tool) => tool.name).join(",");
    },
    bytes: (value: string) => 2 * value.length,
  });
  return { view, built };
}

describe("ToolCatalog: one snapshot per request, views memoised on the listing's version", () => {
  it("reads the generations once per snapshot and lists the project only when asked", async () => {
    const { catalog, counts } = catalogOver(new Map([["acme/shop", listingOf([listed("crawl")])]]));
    const snapshot = await catalog.snapshot("acme", "shop", CascadeRead.begin());
    expect(counts.refreshes).toBe(1);
    expect((await snapshot.require("crawl")).name).toBe("crawl");
    await expect(snapshot.require("nothing")).rejects.toMatchObject({ code: "tool_not_found" });
    // A lookup resolves one name: an invocation of a cold project does not list it.
    expect(counts.listings).toBe(0);
    expect((await snapshot.tools()).map((tool) => tool.name)).toEqual(["crawl"]);
    await snapshot.listing();
    await snapshot.withLabel("web");
    expect(counts.listings).toBe(1);
    expect(counts.refreshes).toBe(1);
  });

  it("builds a view once per version, and again (once) after the listing changed", async () => {
    const projects = new Map([["acme/shop", listingOf([listed("crawl")])]]);
    const { catalog } = catalogOver(projects);
    const { view, built } = countingView();
    for (let request = 0; request < 5; request++) {
      const snapshot = await catalog.snapshot("acme", "shop", CascadeRead.begin());
      expect(await snapshot.view(view)).toBe("crawl");
    }
    expect(built).toEqual([1]);
    const before = await (await catalog.snapshot("acme", "shop", CascadeRead.begin())).version();

    projects.set("acme/shop", listingOf([listed("crawl"), listed("web_search")]));
    for (let request = 0; request < 5; request++) {
      const snapshot = await catalog.snapshot("acme", "shop", CascadeRead.begin());
      expect(await snapshot.view(view)).toBe("crawl,web_search");
    }
    expect(built).toEqual([1, 2]);
    const after = await (await catalog.snapshot("acme", "shop", CascadeRead.begin())).version();
    expect(after.version).toBeGreaterThan(before.version);
    // The old version is unchanged: a request holding it still sees what it saw.
    expect(before.listing.tools.map((tool) => tool.name)).toEqual(["crawl"]);
    expect(before.view(view)).toBe("crawl");
  });

  it("keeps the version and its views when the reader answers a fresh but equal listing", async () => {
    const projects = new Map([["acme/shop", listingOf([listed("crawl")])]]);
    const { catalog } = catalogOver(projects);
    const { view, built } = countingView();
    const before = await (await catalog.snapshot("acme", "shop", CascadeRead.begin())).version();
    expect(before.view(view)).toBe("crawl");
    // Rebuilt upstream (a cache evicted it, a source answered again): another object, the same key.
    projects.set("acme/shop", listingOf([listed("crawl")]));
    const after = await (await catalog.snapshot("acme", "shop", CascadeRead.begin())).version();
    expect(after.version).toBe(before.version);
    expect(await (await catalog.snapshot("acme", "shop", CascadeRead.begin())).view(view)).toBe("crawl");
    expect(built).toEqual([1]);
    expect(catalog.cacheReport()).toMatchObject({ hits: 2, misses: 1 });
  });

  it("keeps one tenant's many big projects within its share; another tenant's snapshot stays cached", async () => {
    const big = (prefix: string) =>
      listingOf(Array.from({ length: 200 }, (_, i) => listed(`${prefix}_${i}`, "x".repeat(200))));
    const projects = new Map<string, ToolListing>([["victim/shop", listingOf([listed("crawl")])]]);
    for (let i = 0; i < 30; i++) projects.set(`attacker/p${i}`, big(`p${i}`));
    const maxBytes = 1024 * 1024;
    const { catalog } = catalogOver(projects, { maxBytes });
    const { view, built } = countingView();
    await (await catalog.snapshot("victim", "shop", CascadeRead.begin())).view(view);
    for (let i = 0; i < 30; i++) {
      await (await catalog.snapshot("attacker", `p${i}`, CascadeRead.begin())).view(view);
      expect(catalog.bytesOf("attacker")).toBeLessThanOrEqual(maxBytes / 4);
    }
    const victimBuilds = built.filter((tools) => tools === 1).length;
    await (await catalog.snapshot("victim", "shop", CascadeRead.begin())).view(view);
    expect(built.filter((tools) => tools === 1).length).toBe(victimBuilds);
    expect(victimBuilds).toBe(1);
    // The attacker's oldest project went: its view is built again.
    await (await catalog.snapshot("attacker", "p0", CascadeRead.begin())).view(view);
    expect(built.length).toBe(1 + 30 + 1);
    expect(catalog.cacheReport().bytes).toBeLessThanOrEqual(maxBytes);
  });

  it("does not keep a view whose build failed: the next use builds it again", async () => {
    const { catalog } = catalogOver(new Map([["acme/shop", listingOf([listed("crawl")])]]));
    let attempts = 0;
    const flaky = snapshotView({
      name: "flaky",
      build: async () => {
        attempts++;
        if (attempts === 1) throw new Error("builder busy");
        return "built";
      },
    });
    const snapshot = await catalog.snapshot("acme", "shop", CascadeRead.begin());
    await expect(snapshot.view(flaky)).rejects.toThrow("builder busy");
    await new Promise((resolve) => setImmediate(resolve));
    expect(await snapshot.view(flaky)).toBe("built");
    expect(attempts).toBe(2);
  });
});
