import { MemoryObjectStore } from "@vance/adapters/testing";
import { BUILT_IN_TOOLS } from "@vance/core";
import { describe, expect, it } from "vitest";
import { docTool, toolServices } from "./support/fixtures";

const T = "acme";
const P = "shop";

async function layerOf(tools: ReturnType<typeof toolServices>["tools"], name: string) {
  const found = await (await tools.snapshot(T, P)).lookup(name);
  return found.status === "found" ? found.tool.layer : found.status;
}

describe("ServerToolService cascade (spec §4)", () => {
  it("project beats tenant beats bundled", async () => {
    const { tools } = toolServices({ bundled: { "server-tools/doc_intro.yaml": docTool("bundled intro") } });
    expect(await layerOf(tools, "doc_intro")).toBe("bundled");
    await tools.put(T, "_tenant", "doc_intro", docTool("tenant intro"));
    expect(await layerOf(tools, "doc_intro")).toBe("tenant");
    await tools.put(T, P, "doc_intro", docTool("project intro"));
    expect(await layerOf(tools, "doc_intro")).toBe("project");
    const listed = (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "doc_intro");
    expect(listed?.config.description).toBe("project intro");

    await tools.delete(T, P, "doc_intro");
    expect(await layerOf(tools, "doc_intro")).toBe("tenant");
    await tools.delete(T, "_tenant", "doc_intro");
    expect(await layerOf(tools, "doc_intro")).toBe("bundled");
  });

  it("falls back to the built-in layer when no document names the tool", async () => {
    const { tools } = toolServices();
    const found = await (await tools.snapshot(T, P)).lookup("whoami");
    expect(found.status === "found" && found.tool.layer).toBe("builtin");
    expect(await layerOf(tools, "nothing_here")).toBe("not_found");
  });

  it("a disabled project document hides the tenant tool from lookup and listAll; deleting it brings the tenant tool back", async () => {
    const { tools } = toolServices();
    await tools.put(T, "_tenant", "jira", docTool("tenant jira"));
    await tools.put(T, P, "jira", docTool("off here", "enabled: false\n"));

    expect(await (await tools.snapshot(T, P)).lookup("jira")).toEqual({
      status: "disabled",
      layer: "project",
    });
    expect((await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name)).not.toContain("jira");
    expect((await (await tools.snapshot(T, "other")).tools()).map((tool) => tool.name)).toContain("jira");

    await tools.delete(T, P, "jira");
    expect(await layerOf(tools, "jira")).toBe("tenant");
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "jira")?.config.description,
    ).toBe("tenant jira");
  });

  it("built-ins are the cascade's last layer: bundled, tenant and project documents override or disable them (spec §4, §7)", async () => {
    const raw = new MemoryObjectStore();
    const { tools } = toolServices({
      store: raw,
      bundled: { "server-tools/whoami.yaml": docTool("bundled whoami") },
    });
    expect(await layerOf(tools, "whoami")).toBe("bundled");
    expect(await layerOf(tools, "web_search")).toBe("builtin");
    await tools.put(T, "_tenant", "web_search", docTool("tenant search", "labels: [web]\n"));
    expect(await layerOf(tools, "web_search")).toBe("tenant");
    await tools.put(T, P, "whoami", docTool("off here", "enabled: false\n"));
    expect(await (await tools.snapshot(T, P)).lookup("whoami")).toEqual({
      status: "disabled",
      layer: "project",
    });
    expect((await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name)).not.toContain("whoami");
    await tools.delete(T, P, "whoami");
    expect(await layerOf(tools, "whoami")).toBe("bundled");
  });

  it("the capability floor is reserved: no document replaces or disables it, and one written behind the service's back is ignored and listed invalid", async () => {
    const raw = new MemoryObjectStore();
    const { tools } = toolServices({ store: raw, builtIns: [...BUILT_IN_TOOLS] });
    for (const name of ["tool_list", "tool_description"]) {
      await expect(tools.put(T, P, name, docTool("mine", "enabled: false\n"))).rejects.toMatchObject({
        code: "reserved_name",
        status: 422,
      });
    }
    await raw.put(`${T}/${P}/server-tools/tool_list.yaml`, docTool("sneaked in", "enabled: false\n"));
    expect(await layerOf(tools, "tool_list")).toBe("builtin");
    const listing = await (await tools.snapshot(T, P)).listing();
    expect(listing.tools.find((tool) => tool.name === "tool_list")?.layer).toBe("builtin");
    expect(listing.invalid.map(({ path, layer, error }) => ({ path, layer, code: error.code }))).toEqual([
      { path: "server-tools/tool_list.yaml", layer: "project", code: "invalid_document" },
    ]);
  });

  it("the listing names what it hides: a disabled winner and an invalid one, with the layer and the reason a lookup gives", async () => {
    const raw = new MemoryObjectStore();
    const { tools } = toolServices({ store: raw });
    await tools.put(T, "_tenant", "jira", docTool("tenant jira"));
    await tools.put(T, P, "jira", docTool("off here", "enabled: false\n"));
    await raw.put(
      `${T}/_tenant/server-tools/broken.yaml`,
      "type: scripted\ndescription: x\nparameters:\n  timeoutMs: 99999\n",
    );
    const listing = await (await tools.snapshot(T, P)).listing();
    expect(listing.tools.map((tool) => tool.name)).not.toContain("jira");
    const hidden = listing.hidden.map((entry) => ({
      ...entry,
      ...(entry.status === "invalid" ? { error: entry.error.code } : {}),
    }));
    expect(hidden).toEqual([
      { name: "broken", layer: "tenant", status: "invalid", error: "invalid_document" },
      { name: "jira", layer: "project", status: "disabled" },
    ]);
    for (const entry of listing.hidden) {
      const found = await (await tools.snapshot(T, P)).lookup(entry.name);
      expect(found.status === entry.status && "layer" in found && found.layer).toBe(entry.layer);
    }
    expect((await (await tools.snapshot(T, "other")).listing()).hidden.map((entry) => entry.name)).toEqual([
      "broken",
    ]);
  });

  it("an override is a complete replace: primary and labels are not inherited", async () => {
    const { tools } = toolServices();
    await tools.put(T, "_tenant", "search", docTool("tenant", "primary: true\nlabels: [web, external]\n"));
    await tools.put(T, P, "search", docTool("project"));
    const found = await (await tools.snapshot(T, P)).lookup("search");
    expect(found.status === "found" && found.tool.config).toMatchObject({
      primary: false,
      labels: [],
      description: "project",
    });
    expect((await (await tools.snapshot(T, P)).withLabel("web")).map((tool) => tool.name)).not.toContain(
      "search",
    );
    expect((await (await tools.snapshot(T, "other")).withLabel("web")).map((tool) => tool.name)).toContain(
      "search",
    );
  });

  it("the type may change in an override", async () => {
    const { tools } = toolServices();
    await tools.put(T, "_tenant", "calc", docTool("a document"));
    await tools.put(
      T,
      P,
      "calc",
      "type: scripted\ndescription: now a script\nparameters:\n  inputs: [{ name: a, type: number }]\n  source: a * 2\n",
    );
    const found = await (await tools.snapshot(T, P)).lookup("calc");
    expect(found.status === "found" && found.tool.config.type).toBe("scripted");
    expect(found.status === "found" && found.tool.inputSchema).toMatchObject({ required: ["a"] });
  });

  it("finds labels across layers, built-in tools included", async () => {
    const { tools } = toolServices({
      bundled: { "server-tools/doc_web_guide.yaml": docTool("bundled", "labels: [web]\n") },
    });
    await tools.put(T, "_tenant", "fetch_page", docTool("tenant", "labels: [web]\n"));
    await tools.put(T, P, "crawl", docTool("project", "labels: [web, slow]\n"));
    await tools.put(T, P, "offline", docTool("project", "labels: [local]\n"));
    const names = (await (await tools.snapshot(T, P)).withLabel("web")).map((tool) => tool.name);
    expect(names).toEqual(["crawl", "doc_web_guide", "fetch_page", "web_search"]);
  });

  it("listAll merges every layer, sorted by name, each with its layer", async () => {
    const { tools } = toolServices({ bundled: { "server-tools/doc_intro.yaml": docTool("bundled") } });
    await tools.put(T, "_tenant", "b_tool", docTool("tenant"));
    await tools.put(T, P, "a_tool", docTool("project"));
    const listed = (await (await tools.snapshot(T, P)).tools()).map((tool) => [tool.name, tool.layer]);
    expect(listed).toEqual([
      ["a_tool", "project"],
      ["b_tool", "tenant"],
      ["doc_intro", "bundled"],
      ["web_search", "builtin"],
      ["whoami", "builtin"],
    ]);
  });

  it("an invalid document written behind the service's back is a hit that reports its errors", async () => {
    const raw = new MemoryObjectStore();
    const { tools } = toolServices({ store: raw });
    await tools.put(T, "_tenant", "broken", docTool("tenant ok"));
    await raw.put(
      `${T}/${P}/server-tools/broken.yaml`,
      "type: scripted\ndescription: x\nparameters:\n  timeoutMs: 99999\n",
    );
    const found = await (await tools.snapshot(T, P)).lookup("broken");
    expect(found.status).toBe("invalid");
    if (found.status !== "invalid") return;
    expect(found.error.code).toBe("invalid_document");
    expect(found.error.errors.some((e) => e.path === "parameters.timeoutMs" && e.line === 4)).toBe(true);
    expect((await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name)).not.toContain("broken");
  });
});

describe("ServerToolService storage requests", () => {
  it("a lookup of a project tool costs one parallel round of at most 2 GETs", async () => {
    const { tools, store } = toolServices();
    await tools.put(T, P, "mine", docTool("p"));
    store.reset();
    const found = await (await tools.snapshot(T, P)).lookup("mine");
    expect(found.status).toBe("found");
    expect(store.counts).toEqual({ get: 2, put: 0, delete: 0, list: 0 });
    expect(store.maxInFlight).toBe(2);
  });

  it("`_tenant` as the project collapses the lookup to one read", async () => {
    const { tools, store } = toolServices();
    await tools.put(T, "_tenant", "shared", docTool("t"));
    store.reset();
    const found = await (await tools.snapshot(T, "_tenant")).lookup("shared");
    expect(found.status === "found" && found.tool.layer).toBe("tenant");
    expect(store.counts.get).toBe(1);
  });

  it("a cold listAll costs the LIST pages plus one GET per document; a warm one only the LIST pages", async () => {
    const N = 60;
    const raw = new MemoryObjectStore({ pageSize: 25 });
    for (let i = 0; i < N; i++) {
      await raw.put(`${T}/${P}/server-tools/tool_${String(i).padStart(3, "0")}.yaml`, docTool(`tool ${i}`));
    }
    const { tools, store } = toolServices({ store: raw });
    const cold = await (await tools.snapshot(T, P)).tools();
    expect(cold.filter((tool) => tool.layer === "project")).toHaveLength(N);
    // project: 3 pages of 25; tenant: 1 empty page
    expect(store.counts).toEqual({ get: N, put: 0, delete: 0, list: 4 });
    expect(store.maxInFlight).toBeLessThanOrEqual(16);

    store.reset();
    const warm = await (await tools.snapshot(T, P)).tools();
    expect(warm).toEqual(cold);
    expect(store.counts).toEqual({ get: 0, put: 0, delete: 0, list: 4 });
  });

  it("only the winning layer's document is fetched when a name exists in both", async () => {
    const { tools, store } = toolServices();
    await tools.put(T, "_tenant", "dup", docTool("tenant"));
    await tools.put(T, P, "dup", docTool("project"));
    const fresh = toolServices({ store: store });
    fresh.store.reset();
    await (await fresh.tools.snapshot(T, P)).tools();
    expect(fresh.store.counts.get).toBe(1);
  });

  it("a write through the service is visible to the very next read and list", async () => {
    const { tools } = toolServices();
    await tools.put(T, P, "live", docTool("v1"));
    await (await tools.snapshot(T, P)).tools();
    await tools.put(T, P, "live", docTool("v2"));
    const found = await (await tools.snapshot(T, P)).lookup("live");
    expect(found.status === "found" && found.tool.config.description).toBe("v2");
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "live")?.config.description,
    ).toBe("v2");
  });

  it("a document changed behind the service's back is picked up by the next LIST and lookup", async () => {
    const raw = new MemoryObjectStore();
    const { tools } = toolServices({ store: raw });
    await tools.put(T, P, "drift", docTool("v1"));
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "drift")?.config.description,
    ).toBe("v1");
    await raw.put(`${T}/${P}/server-tools/drift.yaml`, docTool("changed elsewhere"));
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "drift")?.config.description,
    ).toBe("changed elsewhere");
    const found = await (await tools.snapshot(T, P)).lookup("drift");
    expect(found.status === "found" && found.tool.config.description).toBe("changed elsewhere");
    await raw.delete(`${T}/${P}/server-tools/drift.yaml`);
    expect((await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name)).not.toContain("drift");
    expect((await (await tools.snapshot(T, P)).lookup("drift")).status).toBe("not_found");
  });
});
