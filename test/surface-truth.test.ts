import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";

/**
 * Issue 14: the surface tells the model the truth — only tools the model could not see are
 * activated by use (spec §14.2 `activatedDeferredTools`), the meta-tools list what the tools
 * array holds, and learned limits belong to the endpoint and to whoever reported them.
 */

type Client = Awaited<ReturnType<typeof projectClient>>;

/** The project client, with the document its doc_lookup tools (`docTool`) read. */
async function clientOf(app: Awaited<ReturnType<typeof testApp>>["app"]): Promise<Client> {
  const client = await projectClient(app);
  const put = await client.call("PUT", "/documents/documents/x.md", "# x\n", "text/markdown");
  if (put.status >= 300) throw new Error(`PUT documents/x.md: ${put.status}`);
  return client;
}

async function platformAdmin() {
  return { ...(await bearer({ tenant: "*", roles: ["admin"] })), "content-type": "application/yaml" };
}

/** `tool_list`'s value. */
async function listed(client: Client, processId: string, query = "") {
  const res = await client.call("POST", `/processes/${processId}/invoke${query}`, {
    name: "tool_list",
    params: {},
  });
  return res.body.value as { inContext: string[]; available: string[] };
}

describe("activation: only tools outside the tools array (spec §14.2 activatedDeferredTools)", () => {
  it("limit 4: two calls of a primary tool stamp nothing, so an activation later demotes it, not the recipe's keep tool", async () => {
    const now = { t: 1_000_000 };
    const { app } = await testApp({ now: () => now.t });
    const put = await app.request("/v1/models/tight/_provider", {
      method: "PUT",
      headers: await platformAdmin(),
      body: "wireType: openai\nmaxTools: 5\n",
    });
    expect(put.status).toBe(201);
    const client = await clientOf(app);
    await client.putTool("keep_notes", docTool("Notes the recipe keeps."));
    await client.putTool("plain_clock", docTool("A plain primary tool.", "primary: true\n"));
    await client.putTool("extra_zeta", docTool("A deferred tool."));
    const { processId } = await client.spawn({
      engineDefault: ["keep_notes", "plain_clock", "extra_zeta"],
      allowedToolsKeep: ["keep_notes"],
      models: ["tight/m"],
    });
    const first = await client.manifest(processId);
    expect(first.budget).toEqual({ maxTools: 5, reserve: 1, limit: 4 });
    expect(first.primary).toEqual(["keep_notes", "plain_clock", "tool_description", "tool_list"]);
    expect(first.deferred).toEqual(["extra_zeta"]);

    for (let call = 0; call < 2; call++) {
      now.t += 1000;
      expect((await client.invoke(processId, "plain_clock")).body).toMatchObject({ value: "# x\n" });
    }
    expect((await client.process(processId)).activatedTools).toEqual({});

    now.t += 1000;
    await client.invoke(processId, "tool_description", { names: ["extra_zeta"] });
    const second = await client.manifest(processId);
    expect(second.primary).toEqual(["extra_zeta", "keep_notes", "tool_description", "tool_list"]);
    expect(second.demoted).toEqual(["plain_clock"]);

    // A demoted tool is outside the array: its first call activates it.
    now.t += 1000;
    await client.invoke(processId, "plain_clock");
    expect(Object.keys((await client.process(processId)).activatedTools).sort()).toEqual([
      "extra_zeta",
      "plain_clock",
    ]);
  });

  it("the 15 activations hold only tools activated through tool_description, however many primary tools are called after", async () => {
    const now = { t: 5_000_000 };
    const { app } = await testApp({ now: () => now.t });
    const client = await clientOf(app);
    const deferred = Array.from({ length: 15 }, (_, i) => `lore_op${String(i).padStart(2, "0")}`);
    const primary = Array.from({ length: 12 }, (_, i) => `main_op${String(i).padStart(2, "0")}`);
    for (const name of deferred) await client.putTool(name, docTool(`Lore ${name}.`));
    for (const name of primary) await client.putTool(name, docTool(`Main ${name}.`, "primary: true\n"));
    const { processId } = await client.spawn({ engineDefault: [...deferred, ...primary] });

    await client.invoke(processId, "tool_description", { names: deferred.slice(0, 10) });
    now.t += 1000;
    await client.invoke(processId, "tool_description", { names: deferred.slice(10) });
    for (const name of primary) {
      now.t += 1000;
      expect((await client.invoke(processId, name)).body).toMatchObject({ value: "# x\n" });
    }
    expect(Object.keys((await client.process(processId)).activatedTools).sort()).toEqual(deferred);
    const manifest = await client.manifest(processId);
    expect(manifest.deferred).toEqual([]);
    expect(manifest.primary).toEqual(expect.arrayContaining([...deferred, ...primary]));
  });
});

describe("the meta-tools and the discovery block say what the tools array holds", () => {
  async function setup() {
    const now = { t: 2_000_000 };
    const { app } = await testApp({ now: () => now.t });
    const client = await clientOf(app);
    await client.putTool("doc_alpha", docTool("Alpha documents."));
    await client.putTool("doc_beta", docTool("Beta documents, a skill's tool."));
    const { processId } = await client.spawn({ engineDefault: ["doc_alpha", "doc_beta", "invoke_tool"] });
    return { client, processId, now };
  }

  it("invoke_tool is primary like the floor pair, and tool_list lists all three in context", async () => {
    const { client, processId } = await setup();
    const manifest = await client.manifest(processId);
    expect(manifest.primary).toEqual(["invoke_tool", "tool_description", "tool_list"]);
    expect(await listed(client, processId)).toMatchObject({
      inContext: ["invoke_tool", "tool_description", "tool_list"],
      available: ["doc_alpha", "doc_beta"],
    });
  });

  it("with the turn's skill tools (?with=), tool_list lists them in context and their call activates nothing", async () => {
    const { client, processId } = await setup();
    const manifest = await client.manifest(processId, { with: "doc_beta" });
    expect(manifest.primary).toContain("doc_beta");
    expect(await listed(client, processId, "?with=doc_beta")).toMatchObject({
      inContext: ["doc_beta", "invoke_tool", "tool_description", "tool_list"],
      available: ["doc_alpha"],
    });
    const called = await client.call("POST", `/processes/${processId}/invoke?with=doc_beta`, {
      name: "doc_beta",
      params: {},
    });
    expect(called.body).toMatchObject({ value: "# x\n" });
    expect((await client.process(processId)).activatedTools).toEqual({});
    // Without the skill, the same call reached a tool outside the array: it activates it.
    await client.invoke(processId, "doc_beta");
    expect(Object.keys((await client.process(processId)).activatedTools)).toEqual(["doc_beta"]);

    const refused = await client.call("POST", `/processes/${processId}/invoke?with=whoami`, {
      name: "tool_list",
      params: {},
    });
    expect(refused.status).toBe(403);
  });

  it("invoke_tool's refusals use the ToolNotAllowed style of script sibling calls, and activate the deferred target", async () => {
    const { client, processId } = await setup();
    const refused = await client.invoke(processId, "invoke_tool", { name: "whoami", params: {} });
    expect(refused.body).toMatchObject({ error: "ToolNotAllowed" });
    const missing = await client.invoke(processId, "invoke_tool", { name: "doc_alpha", params: { x: 1 } });
    expect(missing.body).toMatchObject({ error: "InvalidParams" });
    await client.invoke(processId, "invoke_tool", { name: "doc_alpha", params: {} });
    expect(Object.keys((await client.process(processId)).activatedTools)).toEqual(["doc_alpha"]);
  });

  it("the static block holds deferred minus demoted (spec §14.3): an activated tool leaves it, the rest stays byte for byte", async () => {
    const { client, processId, now } = await setup();
    const before = await client.manifest(processId);
    expect(before.discoveryBlock).toContain("- doc_alpha — Alpha documents.");
    await client.invoke(processId, "tool_description", { names: ["doc_alpha"] });
    now.t += 1000;
    const after = await client.manifest(processId);
    expect(after.primary).toContain("doc_alpha");
    expect(after.discoveryBlock).not.toContain("doc_alpha");
    expect(after.discoveryBlock).toBe(before.discoveryBlock.replace("- doc_alpha — Alpha documents.\n", ""));
    expect(after.discoveryBlock).toContain("These tools are not in your tools array");
  });

  it("the bundled doc_processes_overview (spec §9) explains processes and activate-first", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const res = await client.call("POST", "/tools/doc_processes_overview/invoke", { params: {} });
    expect(String(res.body.value)).toContain("# Processes and their tools");
    expect(String(res.body.value)).toContain("Activate first");
  });
});

describe("observed limits belong to the endpoint and to whoever reported them", () => {
  const REJECTION = "Invalid 'tools': array too long. Expected an array with maximum length 4, but got 9.";

  async function report(app: Awaited<ReturnType<typeof testApp>>["app"], tenant: string, roles: string[]) {
    return app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: {
        ...(await bearer({ tenant, roles: roles as ("read" | "admin")[] })),
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "cortecs/model-a", error: REJECTION }),
    });
  }

  it("a tenant's report (read token) cuts its own processes on cortecs/model-b, never another tenant's; a platform report cuts both — on another instance too", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-limits-"));
    const first = await testApp({ dataDir });
    const second = await testApp({ dataDir });
    const acme = await projectClient(first.app, "acme", "shop");
    const globex = await projectClient(second.app, "globex", "web");
    const acmeProcess = (await acme.spawn({ models: ["cortecs/model-b"] })).processId;
    const globexProcess = (await globex.spawn({ models: ["cortecs/model-b"] })).processId;
    expect((await acme.manifest(acmeProcess)).budget.maxTools).toBeNull();

    const reported = await report(first.app, "acme", ["read"]);
    expect(reported.status).toBe(200);
    expect(await reported.json()).toEqual({ model: "cortecs/model-a", maxTools: 4 });
    expect((await acme.manifest(acmeProcess)).budget.maxTools).toBe(4);
    expect((await globex.manifest(globexProcess)).budget.maxTools).toBeNull();

    const acmeBudget = await first.app.request("/v1/models/budget?chain=cortecs/model-b", {
      headers: acme.headers,
    });
    expect(await acmeBudget.json()).toMatchObject({ maxTools: 4 });
    const platformBudget = await first.app.request("/v1/models/budget?chain=cortecs/model-b", {
      headers: await bearer({ tenant: "*", roles: ["read"] }),
    });
    expect(await platformBudget.json()).toMatchObject({ maxTools: null });

    expect((await report(second.app, "*", ["admin"])).status).toBe(200);
    expect((await globex.manifest(globexProcess)).budget.maxTools).toBe(4);
    expect((await report(second.app, "*", ["read"])).status).toBe(403);
  });
});

describe("the static discovery block is deferred minus demoted (spec §14.3), byte-stable against demotions", () => {
  /** A chain of limit 3 (maxTools 4, reserve 1): the floor pair and one more fit. */
  async function setup() {
    const now = { t: 3_000_000 };
    const { app } = await testApp({ now: () => now.t });
    const put = await app.request("/v1/models/narrow/_provider", {
      method: "PUT",
      headers: await platformAdmin(),
      body: "wireType: openai\nmaxTools: 4\n",
    });
    expect(put.status).toBe(201);
    const client = await clientOf(app);
    await client.putTool("aa_main", docTool("The primary tool.", "primary: true\n"));
    await client.putTool("dd_one", docTool("First deferred."));
    await client.putTool("dd_two", docTool("Second deferred."));
    await client.putTool("ee_side", docTool("Third deferred."));
    const { processId } = await client.spawn({
      engineDefault: ["aa_main", "dd_one", "dd_two", "ee_side"],
      models: ["narrow/m"],
    });
    return { app, client, processId, now };
  }

  const lineOf = (name: string, hint: string) => `- ${name} — ${hint}`;

  it("a demotion alone never changes it; the demoted tool is in the dynamic block only", async () => {
    const { client, processId, now } = await setup();
    const first = await client.manifest(processId);
    expect(first.demoted).toEqual([]);
    // Activating ee_side pushes the plain aa_main out of the array (class order, spec §14.2).
    await client.invoke(processId, "tool_description", { names: ["ee_side"] });
    now.t += 1000;
    const second = await client.manifest(processId);
    expect(second.demoted).toEqual(["aa_main"]);
    expect(second.discoveryBlock).not.toContain("aa_main");
    expect(second.demotedDiscoveryBlock).toContain(lineOf("aa_main", "The primary tool."));
    expect(second.discoveryBlock).toBe(
      first.discoveryBlock.replace(`${lineOf("ee_side", "Third deferred.")}\n`, ""),
    );
    // A turn that changes only the demotion (aa_main is activated by its call, so the ranking moves)
    // keeps the static block byte for byte.
    now.t += 1000;
    await client.invoke(processId, "aa_main");
    now.t += 1000;
    const third = await client.manifest(processId);
    expect(third.demoted).not.toEqual(second.demoted);
    expect(third.discoveryBlock).toBe(second.discoveryBlock);
  });

  it("an activated tool that is then demoted is in the demoted block only, never in both", async () => {
    const { client, processId, now } = await setup();
    for (const name of ["dd_one", "dd_two", "ee_side"]) {
      now.t += 1000;
      await client.invoke(processId, "tool_description", { names: [name] });
    }
    now.t += 1000;
    const manifest = await client.manifest(processId);
    // aa_main goes first (plain), then the activated families, oldest first: dd (dd_one, dd_two).
    expect(manifest.demoted).toEqual(["aa_main", "dd_one", "dd_two"]);
    expect(manifest.primary).toEqual(["ee_side", "tool_description", "tool_list"]);
    for (const name of manifest.demoted) {
      expect(manifest.discoveryBlock).not.toContain(name);
      expect(manifest.demotedDiscoveryBlock).toContain(`- ${name} — `);
    }
    expect(manifest.discoveryBlock).toBe("");
    now.t += 1000;
    const again = await client.manifest(processId);
    expect([again.discoveryBlock, again.demotedDiscoveryBlock]).toEqual([
      manifest.discoveryBlock,
      manifest.demotedDiscoveryBlock,
    ]);
  });
});

describe("tool_description's error keeps what it skipped", () => {
  it("25 unknown names then a valid one: the error names the skipped valid name and carries unknown and skipped", async () => {
    const { app } = await testApp();
    const client = await clientOf(app);
    await client.putTool("doc_alpha", docTool("Alpha documents."));
    const { processId } = await client.spawn({ engineDefault: ["doc_alpha"] });
    const unknown = Array.from({ length: 25 }, (_, i) => `nope_${i}`);
    const res = await client.invoke(processId, "tool_description", { names: [...unknown, "doc_alpha"] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: "UnknownTools", unknown, skipped: ["doc_alpha"] });
    expect(res.body.message).toContain("doc_alpha");
    expect(res.body.message).toContain("another call");
  });
});
