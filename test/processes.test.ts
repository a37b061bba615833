import { createDynamoClient, DynamoStateStore, ensureStateTable } from "@vance/adapters/aws";
import { CAPABILITY_FLOOR, RecipeResolver } from "@vance/core";
import { describe, expect, inject, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool, toolServices } from "./support/fixtures";

const doc = (description: string, extra = "") =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting_started.md\n${extra}`;

describe("RecipeResolver (spec §6)", () => {
  it("@web picks up built-in and configured tools, across layers", async () => {
    const { tools } = toolServices();
    await tools.put("acme", "_tenant", "fetch_page", docTool("tenant", "labels: [web]\n"));
    await tools.put("acme", "shop", "crawl", docTool("project", "labels: [web]\n"));
    const resolver = new RecipeResolver();
    const snapshot = await tools.snapshot("acme", "shop");
    const resolved = await resolver.resolve(snapshot, { allowedToolsAdd: ["@web", "whoami"] });
    expect(resolved.allowedTools).toEqual(["crawl", "fetch_page", "web_search", "whoami"]);
    expect(resolved.warnings).toEqual([]);
  });

  it("allowedToolsRemove wins over add, by label too", async () => {
    const { tools } = toolServices();
    await tools.put("acme", "shop", "drop_table", docTool("x", "labels: [web, destructive]\n"));
    const resolver = new RecipeResolver();
    const allowed = await resolver.resolve(await tools.snapshot("acme", "shop"), {
      engineDefault: ["whoami", "drop_table"],
      allowedToolsAdd: ["@web"],
      allowedToolsRemove: ["@destructive"],
    });
    expect(allowed.allowedTools).toEqual(["web_search", "whoami"]);
  });

  it("answers over HTTP, and refuses malformed entries", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("doc_a", doc("a", "labels: [docs]\n"));
    const ok = await client.call("POST", "/recipes/resolve", {
      allowedToolsAdd: ["@docs"],
      allowedToolsRemove: ["doc_tools_overview", "doc_processes_overview"],
    });
    expect(ok.body).toEqual({
      allowedTools: ["doc_a", "doc_getting_started"],
      allowedPacks: [],
      excludedTools: [],
      stalePacks: [],
      warnings: [],
    });
    const bad = await client.call("POST", "/recipes/resolve", { allowedToolsAdd: ["Bad Name"] });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_failed");
  });
});

describe("processes: frozen allow sets", () => {
  it("a tool labelled after spawn is absent from that process and present in a new one", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("doc_a", doc("a", "labels: [docs]\n"));
    const first = await client.spawn({ allowedToolsAdd: ["@docs"] });
    await client.putTool("doc_late", doc("late", "labels: [docs]\n"));
    const second = await client.spawn({ allowedToolsAdd: ["@docs"] });
    expect(first.allowedTools).not.toContain("doc_late");
    expect(second.allowedTools).toContain("doc_late");

    const record = await client.process(first.processId);
    expect(record.allowedTools).not.toContain("doc_late");
    const listed = await client.invoke(first.processId, "tool_list");
    expect((listed.body.value as { available: string[] }).available).not.toContain("doc_late");
    const refused = await client.invoke(first.processId, "doc_late");
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("tool_not_allowed");
    expect((await client.invoke(second.processId, "doc_late")).status).toBe(200);
  });

  it("answers 404 for an unknown process and 422 for a malformed spawn", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await expect(client.process("00000000-0000-0000-0000-000000000000")).rejects.toMatchObject({
      status: 404,
      problem: { code: "process_not_found" },
    });
    const bad = await client.call("POST", "/processes", { models: ["not a model"] });
    expect(bad.status).toBe(422);
  });

  it("a model id the catalog could never resolve is refused at spawn; every accepted one serves manifests", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const refused = await client.call("POST", "/processes", { models: ["openai/gpt:4o"] });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("validation_failed");
    expect(JSON.stringify(refused.body.errors)).toContain("models");

    const { processId } = await client.spawn({ models: ["openai/gpt-4.1", "acme-gw/Llama-3.1_8B"] });
    await expect(client.manifest(processId)).resolves.toBeDefined();
  });
});

describe("names longer than 64 characters are refused with 422 everywhere", () => {
  const name64 = `n${"x".repeat(63)}`;
  const name65 = `n${"x".repeat(64)}`;
  const clientTool = (name: string) => ({ name, description: "d", inputSchema: { type: "object" } });

  it.each([
    ["recipe resolution", "/recipes/resolve", (name: string) => ({ allowedToolsAdd: [name] })],
    ["a spawn's allowedToolsAdd", "/processes", (name: string) => ({ models: [], allowedToolsAdd: [name] })],
    ["a spawn's hints", "/processes", (name: string) => ({ models: [], allowedToolsKeep: [name] })],
    [
      "a spawn's client tools",
      "/processes",
      (name: string) => ({ models: [], clientTools: [clientTool(name)] }),
    ],
    [
      "a client pack sub-tool",
      "/processes",
      (name: string) => ({ models: [], clientTools: [clientTool(`gm__${name.slice(4)}`)] }),
    ],
    [
      "an invocation's allowedTools",
      "/tools/whoami/invoke",
      (name: string) => ({ allowedTools: ["whoami", name] }),
    ],
  ])("%s", async (_where, path, body) => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const refused = await client.call("POST", path, body(name65));
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("validation_failed");
    expect((await client.call("POST", path, body(name64))).status).toBeLessThan(300);
  });

  it("a process invocation of a 65-character name", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const { processId } = await client.spawn({ clientTools: [clientTool(name64)] });
    expect((await client.invoke(processId, name64)).body).toMatchObject({ route: "client", name: name64 });
    const refused = await client.invoke(processId, name65);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("validation_failed");
  });
});

describe("the capability floor (spec §13.1)", () => {
  it("a cage {doc_write} sees exactly doc_write; outside names are unknown; the floor stays describable and in the manifest", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("doc_write", doc("Writes a document."));
    await client.putTool("doc_secret", doc("Not for this phase."));
    const { processId, allowedTools } = await client.spawn({ engineDefault: ["doc_write"] });
    expect(allowedTools).toEqual(["doc_write"]);

    const listed = (await client.invoke(processId, "tool_list")).body.value as {
      inContext: string[];
      available: string[];
    };
    // The floor pair is in the tools array, so it is listed in context too.
    expect(listed).toMatchObject({ inContext: ["tool_description", "tool_list"], available: ["doc_write"] });

    const described = await client.invoke(processId, "tool_description", {
      names: ["doc_secret", "tool_list", "tool_description", "doc_write"],
    });
    const value = described.body.value as { tools: { name: string }[]; unknown: string[] };
    expect(value.tools.map((t) => t.name)).toEqual(["tool_list", "tool_description", "doc_write"]);
    expect(value.unknown).toEqual(["doc_secret"]);

    const none = await client.invoke(processId, "tool_description", { names: ["doc_secret"] });
    expect(none.body.error).toBe("UnknownTools");

    const manifest = await client.manifest(processId);
    expect(manifest.primary).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
    expect(manifest.tools.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["tool_description", "tool_list"]),
    );
  });

  it("no document can disable or replace the floor", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const res = await client.call(
      "PUT",
      "/tools/tool_list",
      doc("mine", "enabled: false\n"),
      "application/yaml",
    );
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("reserved_name");
  });

  it.each(CAPABILITY_FLOOR)(
    "%s is reserved: PUT tools and PUT documents/server-tools answer 422 reserved_name, in either layer",
    async (name) => {
      const { app } = await testApp();
      const client = await projectClient(app);
      for (const path of [`/tools/${name}`, `/documents/server-tools/${name}.yaml`]) {
        const res = await client.call("PUT", path, doc("shadow", "enabled: false\n"), "application/yaml");
        expect(res.status, path).toBe(422);
        expect(res.body.code, path).toBe("reserved_name");
      }
      const tenant = await projectClient(app, "acme", "_tenant");
      const tenantLayer = await tenant.call("PUT", `/tools/${name}`, doc("shadow"), "application/yaml");
      expect(tenantLayer.status).toBe(422);
      expect((await client.call("GET", `/tools/${name}`)).body).toMatchObject({ layer: "builtin" });
    },
  );

  it("without a document, invoke_tool and whoami answer as built-ins", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const { processId } = await client.spawn({ engineDefault: ["invoke_tool", "whoami"] });
    const answered = await client.invoke(processId, "invoke_tool", { name: "whoami", params: {} });
    expect(answered.body.value).toMatchObject({ tenant: "acme", project: "shop", processId });
  });
});

describe("activation and discovery (spec §13)", () => {
  async function thirtyDeferred(now: { t: number }) {
    const { app } = await testApp({ now: () => now.t, env: { VANCE_ACTIVATION_TTL_SECONDS: "600" } });
    const client = await projectClient(app);
    const names = Array.from({ length: 30 }, (_, i) => `notes_op${String(i).padStart(2, "0")}`);
    for (const name of names)
      await client.putTool(name, doc(`Operation ${name}. More text here.`, "labels: [notes]\n"));
    await client.putTool("helper_main", doc("Always there.", "primary: true\n"));
    const { processId } = await client.spawn({ allowedToolsAdd: ["@notes", "helper_main"] });
    return { client, names, processId };
  }

  it("tool_description of 30 names describes 25, skips 5; the first 15 (the activation cap) are primary next turn and decay after the TTL", async () => {
    const now = { t: 1_000_000 };
    const { client, names, processId } = await thirtyDeferred(now);
    const before = await client.manifest(processId);
    expect(before.primary).toEqual(["helper_main", "tool_description", "tool_list"]);
    expect(before.deferred).toEqual(names);

    const described = await client.invoke(processId, "tool_description", { names });
    const value = described.body.value as {
      tools: { name: string; paramsSchema: unknown }[];
      skipped: string[];
      activated: string[];
      note: string;
    };
    expect(value.tools).toHaveLength(25);
    expect(value.skipped).toEqual(names.slice(25));
    expect(value.activated).toEqual(names.slice(0, 15));
    expect(value.note).toContain(`describe ${names.slice(15, 25).join(", ")} again when you need them`);
    expect(value.tools[0]?.paramsSchema).toEqual({
      type: "object",
      properties: {},
      additionalProperties: false,
    });

    now.t += 60_000;
    const after = await client.manifest(processId);
    expect(after.primary).toEqual(
      [...names.slice(0, 15), "helper_main", "tool_description", "tool_list"].sort(),
    );
    expect(after.deferred).toEqual(names.slice(15));
    expect(after.tools.map((t) => t.function.name)).toEqual(after.primary);
    const record = await client.process(processId);
    expect(Object.keys(record.activatedTools)).toHaveLength(15);

    // One of them is used again later, so it outlives the others.
    now.t += 500_000;
    expect((await client.invoke(processId, names[0]!)).status).toBe(200);
    now.t += 200_000;
    const decayed = await client.manifest(processId);
    expect(decayed.primary).toEqual(["helper_main", names[0], "tool_description", "tool_list"]);
    expect(Object.keys((await client.process(processId)).activatedTools)).toEqual([names[0]]);
  });

  it("calling a deferred tool directly activates it", async () => {
    const now = { t: 5_000_000 };
    const { client, names, processId } = await thirtyDeferred(now);
    const result = await client.invoke(processId, names[3]!);
    expect(String(result.body.value)).toContain("Getting started");
    const manifest = await client.manifest(processId);
    expect(manifest.primary).toContain(names[3]);
  });

  it("keeps at most 15 activations, least recently used first out", async () => {
    const now = { t: 9_000_000 };
    const { app } = await testApp({ now: () => now.t });
    const client = await projectClient(app);
    const names = Array.from({ length: 20 }, (_, i) => `bulk_op${String(i).padStart(2, "0")}`);
    for (const name of names) await client.putTool(name, doc(`Op ${name}.`, "labels: [bulk]\n"));
    const { processId } = await client.spawn({ allowedToolsAdd: ["@bulk"] });
    for (const name of names) {
      now.t += 1000;
      await client.invoke(processId, name);
    }
    const manifest = await client.manifest(processId);
    expect(manifest.primary.filter((n) => n.startsWith("bulk_"))).toEqual(names.slice(5));
  });

  it("an activation takes exactly the activated tools' lines out of the discovery block, which teaches activate-first", async () => {
    const now = { t: 2_000_000 };
    const { client, names, processId } = await thirtyDeferred(now);
    const first = await client.manifest(processId);
    expect(first.discoveryBlock).toContain("tool_description");
    expect(first.discoveryBlock).toContain(`- ${names[0]} — Operation ${names[0]}.`);
    expect(first.discoveryBlock).not.toContain("More text here");
    expect(first.demotedDiscoveryBlock).toBe("");
    const activated = names.slice(0, 7);
    await client.invoke(processId, "tool_description", { names: activated });
    now.t += 1000;
    const second = await client.manifest(processId);
    expect(second.primary).toEqual(expect.arrayContaining(activated));
    const withoutActivated = first.discoveryBlock
      .split("\n")
      .filter((line) => !activated.some((name) => line.startsWith(`- ${name} `)))
      .join("\n");
    expect(second.discoveryBlock).toBe(withoutActivated);
    // A later turn with the same activations answers the very same block.
    now.t += 1000;
    expect((await client.manifest(processId)).discoveryBlock).toBe(second.discoveryBlock);
  });

  it("groups pack sub-tools under one line, and serves the anthropic wire format", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const clientTools = ["send", "list", "modify"].map((op) => ({
      name: `gmail__${op}`,
      description: `Gmail ${op}.`,
      inputSchema: { type: "object" },
      ...(op === "list" ? { packHint: "The user's Gmail account: modify marks mail read or unread." } : {}),
    }));
    const { processId } = await client.spawn({ clientTools, allowedToolsDefer: ["gmail__*"] });
    const manifest = await client.manifest(processId, { format: "anthropic" });
    expect(manifest.discoveryBlock).toContain(
      "- gmail__* (3 tools: list, modify, send) — The user's Gmail account: modify marks mail read or unread.",
    );
    const listed = await client.invoke(processId, "tool_list", { prefix: "GMAIL" });
    expect(listed.body.value).toEqual({
      inContext: [],
      available: ["gmail__list", "gmail__modify", "gmail__send"],
      packHints: { gmail: "The user's Gmail account: modify marks mail read or unread." },
      stalePacks: [],
    });
    expect(manifest.tools.map((t) => t.name)).toEqual(["tool_description", "tool_list"]);
    expect(manifest.tools[0]).toHaveProperty("input_schema");
    const routed = await client.invoke(processId, "gmail__send", { to: "x" });
    expect(routed.body).toMatchObject({ route: "client", name: "gmail__send", params: { to: "x" } });
  });

  it("counts usage per role — a wrapper call once, description look-ups apart — and shows it as insights", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("doc_a", doc("a"));
    const { processId } = await client.spawn({ recipe: "writer", engineDefault: ["doc_a", "invoke_tool"] });
    await client.invoke(processId, "doc_a");
    await client.invoke(processId, "invoke_tool", { name: "doc_a", params: {} });
    await client.invoke(processId, "tool_description", { names: ["doc_a"] });
    const other = await client.spawn({ engine: "chat", engineDefault: ["doc_a"] });
    await client.invoke(other.processId, "doc_a");
    const insights = await client.call("GET", "/insights/tool-usage");
    expect(insights.body).toEqual({
      roles: [
        {
          role: "chat",
          tools: [{ name: "doc_a", calls: 1, discoveryHits: 0, lastUsedAt: expect.any(String) }],
        },
        {
          role: "writer",
          tools: [{ name: "doc_a", calls: 2, discoveryHits: 1, lastUsedAt: expect.any(String) }],
        },
      ],
    });
  });

  it("invoke_tool calls through the same allow-set check", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    await client.putTool("doc_a", doc("a"));
    const { processId } = await client.spawn({ engineDefault: ["doc_a", "invoke_tool"] });
    const ok = await client.invoke(processId, "invoke_tool", { name: "doc_a", params: {} });
    expect(String(ok.body.value)).toContain("Getting started");
    const refused = await client.invoke(processId, "invoke_tool", { name: "whoami", params: {} });
    // The style of every tool failure, as a script's sibling call sees it.
    expect(refused.body).toMatchObject({ error: "ToolNotAllowed" });
  });
});

describe("processes on DynamoDB Local (the cloud's state store)", () => {
  it("spawn, describe-to-activate, decay and usage all work on DynamoDB", async () => {
    const client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
    const tableName = `proc-${Date.now().toString(36)}`;
    await ensureStateTable(client, tableName);
    const state = new DynamoStateStore({ client, tableName });
    const now = { t: 3_000_000 };
    const { app, services } = await testApp({
      state,
      now: () => now.t,
      env: { VANCE_ACTIVATION_TTL_SECONDS: "600" },
    });
    const api = await projectClient(app);
    await api.putTool("notes_a", doc("Note A."));
    await api.putTool("notes_b", doc("Note B."));
    const { processId } = await api.spawn({ engineDefault: ["notes_a", "notes_b"] });

    expect((await api.manifest(processId)).deferred).toEqual(["notes_a", "notes_b"]);
    await api.invoke(processId, "tool_description", { names: ["notes_b"] });
    now.t += 1000;
    expect((await api.manifest(processId)).primary).toContain("notes_b");
    now.t += 700_000;
    expect((await api.manifest(processId)).primary).not.toContain("notes_b");

    await api.invoke(processId, "notes_a");
    // Usage is written behind the answer (issue 24): the call's count lands once the flush settles.
    await services.usage.flush();
    const rows = await state.listToolUsage("acme", "shop", "default");
    expect(rows.map((row) => [row.tool, row.calls, row.discoveryHits])).toEqual([
      ["notes_a", 1, 0],
      ["notes_b", 0, 1],
    ]);
  });
});
