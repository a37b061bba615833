import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { writeBehind } from "./support/stores";

// Spec §4 and §7: built-ins are the cascade's last layer. A project or tenant document of the
// same name overrides or disables one; only the capability floor (§13.1) is not configurable.

const scripted = (description: string, source: string, extra = "") =>
  `type: scripted\ndescription: ${description}\n${extra}parameters:\n  inputs: []\n  source: ${JSON.stringify(source)}\n`;

describe("built-ins in the cascade (spec §4, §7)", () => {
  it("a project document disables whoami: 404 tool_disabled with its layer, gone from listings, selectors and manifests", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const written = await client.call(
      "PUT",
      "/tools/whoami",
      scripted("off", "null", "enabled: false\n"),
      "application/yaml",
    );
    expect(written.status).toBe(201);

    const read = await client.call("GET", "/tools/whoami");
    expect(read).toMatchObject({ status: 404, body: { code: "tool_disabled", layer: "project" } });
    const listed = await client.call("GET", "/tools");
    expect((listed.body.tools as { name: string }[]).map((tool) => tool.name)).not.toContain("whoami");
    const direct = await client.call("POST", "/tools/whoami/invoke", { params: {} });
    expect(direct).toMatchObject({ status: 404, body: { code: "tool_disabled" } });

    const spawned = await client.spawn({ allowedToolsAdd: ["@identity", "whoami"] });
    expect(spawned.warnings.map((warning) => [warning.code, warning.entry])).toEqual([
      ["unknown_label", "@identity"],
      ["unknown_tool", "whoami"],
    ]);
    expect((await client.manifest(spawned.processId)).primary).not.toContain("whoami");
    expect((await client.invoke(spawned.processId, "whoami")).body).toMatchObject({ code: "tool_disabled" });

    // Another project of the tenant still has the built-in.
    const other = await projectClient(app, "acme", "other");
    expect((await other.call("GET", "/tools/whoami")).body).toMatchObject({ layer: "builtin" });
    // Deleting the document lets the built-in through again.
    expect((await client.call("DELETE", "/tools/whoami")).status).toBe(204);
    expect((await client.call("GET", "/tools/whoami")).body).toMatchObject({ layer: "builtin" });
  });

  it("a tenant document replaces whoami: invoke, labels, recipes, triage and the MCP surface follow it", async () => {
    const { app } = await testApp();
    const tenant = await projectClient(app, "acme", "_tenant");
    await tenant.putTool(
      "whoami",
      scripted(
        "Says who we are, the tenant's way.",
        "'acme, as configured'",
        "primary: true\nlabels: [team]\n",
      ),
    );
    const client = await projectClient(app);
    expect((await client.call("GET", "/tools/whoami")).body).toMatchObject({
      layer: "tenant",
      config: { type: "scripted", labels: ["team"] },
    });
    const direct = await client.call("POST", "/tools/whoami/invoke", { params: {} });
    expect(direct.body).toMatchObject({ value: "acme, as configured" });

    // The built-in's label is the built-in's: the override's labels are its own (spec §5).
    const byOld = await client.call("POST", "/recipes/resolve", { allowedToolsAdd: ["@identity"] });
    expect(byOld.body).toMatchObject({ allowedTools: [], warnings: [{ code: "unknown_label" }] });
    const { processId, allowedTools } = await client.spawn({ allowedToolsAdd: ["@team"] });
    expect(allowedTools).toEqual(["whoami"]);
    const manifest = await client.manifest(processId);
    // primary: true in the document puts it in the tools array, with the document's description.
    expect(manifest.primary).toContain("whoami");
    expect(manifest.tools.find((tool) => tool.function.name === "whoami")?.function.description).toBe(
      "Says who we are, the tenant's way.",
    );
    expect((await client.invoke(processId, "whoami")).body).toMatchObject({ value: "acme, as configured" });

    const mcp = new Client({ name: "override-test", version: "1.0.0" });
    await mcp.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:8787${client.base}/processes/${processId}/mcp`),
        {
          fetch: async (url, init) => app.fetch(new Request(url, init)),
          requestInit: { headers: client.headers },
        },
      ),
    );
    const { tools } = await mcp.listTools();
    expect(tools.find((tool) => tool.name === "whoami")?.description).toBe(
      "Says who we are, the tenant's way.",
    );
    const called = await mcp.callTool({ name: "whoami", arguments: {} });
    expect(called.content).toEqual([{ type: "text", text: "acme, as configured" }]);
    await mcp.close();
  });

  it("disabling invoke_tool takes it out of the tools array and tool_list; the floor stays", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("invoke_tool", scripted("off", "null", "enabled: false\n"));
    const { processId } = await client.spawn({ engineDefault: ["invoke_tool"] });
    const manifest = await client.manifest(processId);
    expect(manifest.primary).toEqual(["tool_description", "tool_list"]);
    const listed = (await client.invoke(processId, "tool_list")).body.value as { inContext: string[] };
    expect(listed.inContext).toEqual(["tool_description", "tool_list"]);
  });

  it("a whoami.yaml written straight into the store is honoured; a tool_list.yaml is ignored and listed invalid", async () => {
    const { app, dataDir } = await testApp();
    writeBehind(dataDir, "acme/shop/server-tools/whoami.yaml", scripted("Stored by hand.", "'by hand'"));
    writeBehind(dataDir, "acme/shop/server-tools/tool_list.yaml", scripted("Hijack.", "'hijacked'"));
    const client = await projectClient(app);
    expect((await client.call("POST", "/tools/whoami/invoke", { params: {} })).body).toMatchObject({
      value: "by hand",
    });
    const listed = await client.call("GET", "/tools");
    const tools = listed.body.tools as { name: string; layer: string }[];
    expect(tools.find((tool) => tool.name === "whoami")?.layer).toBe("project");
    expect(tools.find((tool) => tool.name === "tool_list")?.layer).toBe("builtin");
    expect(listed.body.invalid).toEqual([
      expect.objectContaining({
        path: "server-tools/tool_list.yaml",
        layer: "project",
        message: expect.stringContaining("capability floor"),
      }),
    ]);
    const { processId } = await client.spawn({});
    expect((await client.invoke(processId, "tool_list")).body.value).toMatchObject({
      inContext: expect.any(Array),
    });
  });
});
