import { describe, expect, it } from "vitest";
import { silentLogger } from "../ports/logger";
import { ToolSources } from "../sources/tool-sources";
import type { AnyToolType, SourceContext, SourceList, ToolSourcing } from "../tool-types/tool-type";
import type { ResolvedDocument, ResolvedTool, ToolListing } from "./resolved-tool";
import { ToolExpansion, type UnexpandedListing } from "./tool-expansion";

/**
 * A pack type whose source (an MCP server: no version, read again when its TTL passes) answers
 * `answer()` — a new list object on every load — counting its loads.
 */
function packSource(answer: () => SourceList) {
  const counts = { loads: 0 };
  const sourcing: ToolSourcing = {
    kind: "pack",
    open: async () => ({
      key: "server",
      load: async () => {
        counts.loads++;
        return answer();
      },
    }),
  };
  const type = { id: "fake_pack", sourcing } as unknown as AnyToolType;
  return { type, counts };
}

const tools = (...names: string[]): SourceList => ({
  tools: names.map((name) => ({
    sourceName: name,
    description: `Does ${name}.`,
    inputSchema: { type: "object" },
  })),
});

function packDocument(type: AnyToolType): ResolvedDocument {
  return {
    kind: "document",
    name: "crm",
    layer: "project",
    etag: "e1",
    config: {
      name: "crm",
      type: "fake_pack",
      description: "A CRM.",
      labels: [],
      parameters: {},
      disabledSubTools: [],
    },
    type,
    inputSchema: { type: "object" },
  } as unknown as ResolvedDocument;
}

/** An unexpanded listing of the pack document, as `ParsedToolCache` keeps one for two layer listing versions. */
function unexpanded(pack: ResolvedDocument, versions = { project: 7, tenant: 3 }): UnexpandedListing {
  const view: ToolListing = { tools: [pack], invalid: [], packs: [], hidden: [] };
  return {
    tools: [pack],
    invalid: [],
    hidden: [],
    projectVersion: versions.project,
    tenantVersion: versions.tenant,
    sourced: true,
    view,
  };
}

function expansionOver(type: AnyToolType) {
  const clock = { now: 1_000 };
  const sources = new ToolSources({
    types: { find: () => type },
    context: (tenant, project) => ({ tenant, project }) as unknown as SourceContext,
    now: () => clock.now,
    ttlMs: 60_000,
  });
  const expansion = new ToolExpansion(sources, silentLogger, () => {});
  return { expansion, sources, clock };
}

const names = (listed: readonly ResolvedTool[]) => listed.map((tool) => tool.name);

describe("ToolExpansion: expansions keyed by the source's answer, no cache of its own", () => {
  it("a source answering a fresh but equal list after its TTL keeps the listing's key and the expansion", async () => {
    let answer = tools("find_contact", "add_note");
    const { type, counts } = packSource(() => answer);
    const { expansion, sources, clock } = expansionOver(type);
    const pack = packDocument(type);
    const first = await expansion.expandAll("acme", "shop", unexpanded(pack));
    expect(names(first.listing().tools)).toEqual(["crm__add_note", "crm__find_contact"]);
    const expanded = (await expansion.expand("acme", "shop", pack)).outcome;

    // The TTL passes: the source is read again and answers an equal list in new objects.
    answer = tools("find_contact", "add_note");
    clock.now += 61_000;
    const again = await expansion.expandAll("acme", "shop", unexpanded(pack));
    expect(counts.loads).toBe(2);
    expect(again.key).toBe(first.key);
    // The sub-tools derived from the first answer are kept on the source's entry, not derived again.
    expect((await expansion.expand("acme", "shop", pack)).outcome).toBe(expanded);

    // A list that did change: another key, the new sub-tool listed.
    answer = tools("find_contact", "add_note", "delete_contact");
    clock.now += 61_000;
    const changed = await expansion.expandAll("acme", "shop", unexpanded(pack));
    expect(counts.loads).toBe(3);
    expect(changed.key).not.toBe(first.key);
    expect(names(changed.listing().tools)).toContain("crm__delete_contact");
    expect(sources.cacheReports().lists?.entries).toBe(1);
  });

  it("keys a listing by its layer listings' versions: a rebuilt but equal merged listing keeps its key", async () => {
    const { type } = packSource(() => tools("find_contact"));
    const { expansion } = expansionOver(type);
    const pack = packDocument(type);
    const first = await expansion.expandAll("acme", "shop", unexpanded(pack));
    // The parsed cache merged the same layer versions again: another object, the same key.
    const rebuilt = await expansion.expandAll("acme", "shop", unexpanded(packDocument(type)));
    expect(rebuilt.key).toBe(first.key);
    const moved = await expansion.expandAll("acme", "shop", unexpanded(pack, { project: 8, tenant: 3 }));
    expect(moved.key).not.toBe(first.key);
  });

  it("a lookup of a sub-tool derives the pack's sub-tools once per answer of its source", async () => {
    const { type, counts } = packSource(() => tools("find_contact", "add_note"));
    const { expansion } = expansionOver(type);
    const pack = packDocument(type);
    const outcomes = [];
    for (let call = 0; call < 5; call++)
      outcomes.push((await expansion.expand("acme", "shop", pack)).outcome);
    expect(counts.loads).toBe(1);
    expect(new Set(outcomes).size).toBe(1);
  });
});
