import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { writeBehind } from "./support/stores";

// The name rules hold for documents that reach a layer without the API too (a bucket write, a
// sync job, a person with console access): such a document is never offered, and says why.

const doc = (description: string, extra = "") =>
  `type: doc_lookup\ndescription: ${description}\n${extra}parameters:\n  path: documents/getting_started.md\n`;

describe("documents written behind the service's back", () => {
  it("one that breaks the name rules or does not parse is listed invalid, offered nowhere, and named once in a WARN line", async () => {
    const warnings: { event: string; fields?: Readonly<Record<string, unknown>> }[] = [];
    const logger = {
      info() {},
      warn: (event: string, fields?: Readonly<Record<string, unknown>>) =>
        warnings.push({ event, ...(fields ? { fields } : {}) }),
    };
    const { app, dataDir } = await testApp({ logger });
    writeBehind(dataDir, "acme/shop/server-tools/Upper_Case.yaml", doc("Shouts.", "labels: [loud]\n"));
    writeBehind(
      dataDir,
      "acme/_tenant/server-tools/two__parts.yaml",
      doc("Looks like a sub-tool.", "labels: [loud]\n"),
    );
    writeBehind(dataDir, "acme/shop/server-tools/broken.yaml", "type: doc_lookup\ndescription: [unclosed\n");
    writeBehind(dataDir, "acme/shop/server-tools/nested/deep.yaml", doc("Too deep.", "labels: [loud]\n"));
    const client = await projectClient(app);

    const listed = await client.call("GET", "/tools");
    const names = (listed.body.tools as { name: string }[]).map((tool) => tool.name);
    for (const name of ["Upper_Case", "two__parts", "broken", "deep"]) expect(names).not.toContain(name);
    const invalid = listed.body.invalid as { path: string; layer: string; message: string }[];
    expect(invalid.map(({ path, layer }) => [path, layer])).toEqual([
      ["server-tools/Upper_Case.yaml", "project"],
      ["server-tools/broken.yaml", "project"],
      ["server-tools/nested/deep.yaml", "project"],
      ["server-tools/two__parts.yaml", "tenant"],
    ]);
    expect(invalid[0]?.message).toContain("lowercase snake_case");
    expect(invalid[1]?.message).toContain("not valid YAML");
    expect(invalid[3]?.message).toContain("reserved for pack sub-tools");

    // Selectors, manifests and the meta-tools never offer them.
    const resolved = await client.call("POST", "/recipes/resolve", { allowedToolsAdd: ["@loud"] });
    expect(resolved.body).toMatchObject({
      allowedTools: [],
      warnings: [{ code: "unknown_label", entry: "@loud" }],
    });
    const spawned = await client.spawn({ allowedToolsAdd: ["@loud", "broken"] });
    expect(spawned.allowedTools).toEqual(["broken"]);
    expect(spawned.warnings).toEqual([
      expect.objectContaining({ code: "unknown_label", entry: "@loud" }),
      expect.objectContaining({
        code: "invalid_tool",
        entry: "broken",
        message: expect.stringContaining("not valid YAML"),
      }),
    ]);
    const manifest = await client.manifest(spawned.processId);
    expect([...manifest.primary, ...manifest.deferred]).toEqual(["tool_description", "tool_list"]);
    const described = await client.invoke(spawned.processId, "tool_description", {
      names: ["Upper_Case", "broken", "tool_list"],
    });
    expect(described.body.value).toMatchObject({ unknown: ["Upper_Case", "broken"] });
    const called = await client.invoke(spawned.processId, "broken");
    expect(called.body).toMatchObject({ code: "invalid_document" });

    // Read again (a second listing, another manifest): each document is still named once.
    await client.call("GET", "/tools");
    await client.manifest(spawned.processId);
    const lines = warnings.filter((line) => line.event === "tool.invalid_document");
    expect(lines.map((line) => line.fields?.path).sort()).toEqual([
      "server-tools/Upper_Case.yaml",
      "server-tools/broken.yaml",
      "server-tools/nested/deep.yaml",
      "server-tools/two__parts.yaml",
    ]);
    for (const line of lines) expect(line.fields).toMatchObject({ tenant: "acme", project: "shop" });
  });
});
