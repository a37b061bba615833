import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolFamily, toolTokens } from "@vance/core";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { type ApiError, type OpenAiManifest, projectClient } from "./support/client";

const OPENAI_REJECTION =
  "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead.";

/** 161 client tools + the mandatory pair = 163 primary candidates, in packs and plain families. */
function clientTools() {
  const names: string[] = [];
  const add = (prefix: string, count: number) => {
    for (let i = 0; i < count; i++) names.push(`${prefix}${String(i).padStart(2, "0")}`);
  };
  add("gmail__op", 20);
  add("jira__op", 15);
  add("slack__op", 10);
  add("file_op", 30);
  add("exec_op", 10);
  add("doc_op", 39);
  names.push("doc_note_add");
  add("web_op", 20);
  add("misc", 16);
  return names.map((name) => ({
    name,
    description: `The ${name} tool. Details follow.`,
    inputSchema: { type: "object" },
  }));
}

/** A tool's estimate as the surface counts it (`toolTokens`), from a client tool or a wire tool. */
function estimated(tool: {
  name?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  function?: { name: string; description?: string; parameters?: unknown };
}): number {
  const wire = tool.function;
  const { name, description, inputSchema } = wire
    ? {
        name: wire.name,
        description: wire.description ?? "",
        inputSchema: (wire.parameters ?? {}) as Record<string, unknown>,
      }
    : { name: tool.name!, description: tool.description!, inputSchema: tool.inputSchema! };
  return toolTokens({
    name,
    description,
    inputSchema,
    origin: "client",
    primary: true,
    defaultDeferred: false,
  });
}

function clientTool(name: string) {
  const found = clientTools().find((tool) => tool.name === name);
  if (!found) throw new Error(`no client tool ${name}`);
  return found;
}

function writeCatalog(dataDir: string, path: string, yaml: string) {
  const full = join(dataDir, "catalog", path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, yaml);
}

async function setup(
  options: {
    dataDir?: string;
    logger?: Parameters<typeof testApp>[0] extends infer O
      ? O extends { logger?: infer L }
        ? L
        : never
      : never;
  } = {},
) {
  const made = await testApp({ ...options });
  writeCatalog(made.dataDir, "model/openai/gpt-unlimited.yaml", "maxTools: 0\n");
  writeCatalog(made.dataDir, "model/openai/gpt-small.yaml", "maxTools: 64\n");
  writeCatalog(made.dataDir, "model/tiny/_provider.yaml", "maxTools: 2\n");
  writeCatalog(made.dataDir, "model/openai/gpt-tokens.yaml", "maxToolTokens: 1500\n");
  const client = await projectClient(made.app);
  return { ...made, client };
}

function packsAllOrNothing(manifest: OpenAiManifest) {
  const primary = new Set(manifest.primary);
  const byPack = new Map<string, boolean[]>();
  for (const name of [...manifest.primary, ...manifest.deferred].filter((n) => n.includes("__"))) {
    const pack = toolFamily(name);
    byPack.set(pack, [...(byPack.get(pack) ?? []), primary.has(name)]);
  }
  for (const [pack, flags] of byPack) expect(new Set(flags).size, `pack ${pack} half visible`).toBe(1);
}

describe("the tool surface budget (spec §14)", () => {
  it("163 candidates under openai (128): at most 127 on the wire, whole families in class order, no needless demotion", async () => {
    const { client } = await setup();
    const { processId } = await client.spawn({ clientTools: clientTools(), models: ["openai/gpt-4.1"] });
    const manifest = await client.manifest(processId);
    expect(manifest.budget).toEqual({ maxTools: 128, reserve: 1, limit: 127 });
    expect(manifest.tools.length).toBeLessThanOrEqual(127);
    expect(manifest.tools.length).toBe(manifest.primary.length);
    expect(manifest.primary).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
    // Packs go before plain tools, lowest demand first, ties by name: gmail (20), jira (15), slack (10).
    expect(manifest.demoted.map(toolFamily).filter((f, i, all) => all.indexOf(f) === i)).toEqual([
      "gmail",
      "jira",
      "slack",
    ]);
    expect(manifest.primary.some((name) => name.startsWith("file_"))).toBe(true);
    // Restoring the last demoted family would break the limit again.
    const last = toolFamily(manifest.demoted.at(-1)!);
    const lastSize = manifest.demoted.filter((name) => toolFamily(name) === last).length;
    expect(manifest.primary.length + lastSize).toBeGreaterThan(127);
    packsAllOrNothing(manifest);
    // The array stays alphabetical.
    const names = manifest.tools.map((t) => t.function.name);
    expect(names).toEqual([...names].sort());
    expect(manifest.demotedDiscoveryBlock).toContain("- gmail__* (20 tools: op00, op01,");
    expect(manifest.demotedDiscoveryBlock).toContain("still work");
  });

  it("no limit under a cortecs instance (its provider sets none) and for a model with maxTools: 0 under openai", async () => {
    const { client } = await setup();
    for (const model of ["cortecs/some-model", "openai/gpt-unlimited"]) {
      const { processId } = await client.spawn({ clientTools: clientTools(), models: [model] });
      const manifest = await client.manifest(processId);
      expect(manifest.tools, model).toHaveLength(163);
      expect(manifest.budget).toEqual({ maxTools: null, reserve: 1, limit: null });
      expect(manifest.demoted).toEqual([]);
    }
  });

  it("a chain of openai and a model with 64 gives 63 tools at most", async () => {
    const { client } = await setup();
    const { processId } = await client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1", "openai/gpt-small"],
    });
    const manifest = await client.manifest(processId);
    expect(manifest.budget).toEqual({ maxTools: 64, reserve: 1, limit: 63 });
    expect(manifest.tools.length).toBeLessThanOrEqual(63);
    packsAllOrNothing(manifest);
  });

  it("maxToolTokens (a model's in the catalog) triages by the schema tokens of the tools array like maxTools: within 1,500 (o200k too), whole families, the rest demoted", async () => {
    const { client } = await setup();
    const { processId } = await client.spawn({ clientTools: clientTools(), models: ["openai/gpt-tokens"] });
    const manifest = await client.manifest(processId);
    expect(manifest.budget).toEqual({ maxTools: 128, reserve: 1, limit: 127, maxToolTokens: 1_500 });
    // 163 tools would take ~5,000 tokens: families go until what is left fits.
    expect(manifest.tools.length).toBeGreaterThan(2);
    expect(manifest.tools.length).toBeLessThan(80);
    expect(manifest.demoted.length + manifest.tools.length).toBe(163);
    expect(encode(JSON.stringify(manifest.tools)).length).toBeLessThanOrEqual(1_500);
    packsAllOrNothing(manifest);
    expect(manifest.primary).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
    // No room left that the smallest demoted family could fill.
    const spare = 1_500 - manifest.tools.reduce((sum, tool) => sum + estimated(tool), 0);
    const smallest = Math.min(
      ...[...new Set(manifest.demoted.map((name) => toolFamily(name)))].map((family) =>
        manifest.demoted
          .filter((name) => toolFamily(name) === family)
          .reduce((sum, name) => sum + estimated(clientTool(name)), 0),
      ),
    );
    expect(smallest).toBeGreaterThan(spare);
  });

  it("doc_note_add in allowedToolsDropFirst is demoted alone; doc_* as a pattern ranks the whole family", async () => {
    const { client } = await setup();
    const named = await client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1"],
      allowedToolsDropFirst: ["doc_note_add"],
    });
    const one = await client.manifest(named.processId);
    expect(one.demoted[0]).toBe("doc_note_add");
    expect(one.primary.filter((name) => name.startsWith("doc_"))).toHaveLength(39);

    const pattern = await client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1"],
      allowedToolsDropFirst: ["doc_*"],
    });
    const all = await client.manifest(pattern.processId);
    expect(all.demoted.filter((name) => name.startsWith("doc_"))).toHaveLength(40);
    // 163 − 40 = 123 fits: nothing else had to go.
    expect(all.demoted).toHaveLength(40);
    expect(all.primary).toHaveLength(123);
  });

  it("demoted tools stay callable, and calling one activates it", async () => {
    const { client } = await setup();
    const { processId } = await client.spawn({ clientTools: clientTools(), models: ["openai/gpt-4.1"] });
    const before = await client.manifest(processId);
    expect(before.demoted).toContain("gmail__op03");
    const routed = await client.invoke(processId, "gmail__op03", { q: 1 });
    expect(routed.body).toMatchObject({ route: "client", name: "gmail__op03" });
    const record = await client.process(processId);
    expect(Object.keys(record.activatedTools)).toContain("gmail__op03");
  });

  it("skill tools added after classification re-run triage and rank as keep", async () => {
    const { client } = await setup();
    await client.putTool(
      "skill_lint",
      "type: doc_lookup\ndescription: A skill tool.\nparameters: {path: documents/x.md}\n",
    );
    const { processId } = await client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1"],
      engineDefault: ["skill_lint"],
    });
    const plain = await client.manifest(processId);
    expect(plain.primary).not.toContain("skill_lint");
    const withSkill = await client.manifest(processId, { with: "skill_lint" });
    expect(withSkill.primary).toContain("skill_lint");
    expect(withSkill.tools.length).toBeLessThanOrEqual(127);
    await expect(client.manifest(processId, { with: "whoami" })).rejects.toMatchObject({
      status: 403,
      problem: { code: "tool_not_allowed" },
    });
  });

  it("a floor larger than the limit is refused at spawn with 422 and the numbers", async () => {
    const { client } = await setup();
    const refused = await client.call("POST", "/processes", { models: ["tiny/one"] });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      code: "budget_floor_exceeded",
      errors: [{ path: "models", message: "the chain's limit 1 is below the floor of 2" }],
    });
    expect(refused.body.detail).toContain("allows 2 tools");
    expect(refused.body.detail).toContain("tool_description, tool_list");
    expect((await client.call("POST", "/processes", { models: ["tiny/two"] })).status).toBe(422);
    expect((await client.call("POST", "/processes", { models: ["openai/gpt-small"] })).status).toBe(201);
  });

  it("a limit that cannot hold the floor is never learned (422); set in the catalog after the spawn, it makes the manifest a 409 that says why", async () => {
    const { client, app } = await setup();
    const { processId } = await client.spawn({ models: ["cortecs/one"] });
    const admin = await bearer({ tenant: "*", roles: ["admin"] });
    // A rejection naming 2 (below the floor of 2 plus the reserve of 1) is refused: nothing stored.
    const learned = await app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ model: "cortecs/one", error: OPENAI_REJECTION.replace("128", "2") }),
    });
    expect(learned.status).toBe(422);
    expect(await learned.json()).toMatchObject({ code: "budget_floor_exceeded", maxTools: 2, floor: 3 });
    expect((await client.manifest(processId)).budget).toEqual({ maxTools: null, reserve: 1, limit: null });
    // A catalog change after the spawn still can lower the limit under the floor: the manifest says why.
    const lowered = await app.request("/v1/models/cortecs/one", {
      method: "PUT",
      headers: { ...admin, "content-type": "application/yaml" },
      body: "maxTools: 2\n",
    });
    expect(lowered.status).toBe(201);
    const { status, problem } = await client.manifest(processId).then(
      () => expect.unreachable("the manifest was answered"),
      (error: ApiError) => error,
    );
    expect(status).toBe(409);
    expect(problem.code).toBe("budget_floor_exceeded");
    expect(problem.detail).toContain("allows 1 tools");
    expect(problem.detail).toContain("tool_list");
  });

  it("logs every demotion with families and counts", async () => {
    const lines: { event: string; fields?: Record<string, unknown> }[] = [];
    const logger = {
      info: (event: string, fields?: Record<string, unknown>) =>
        lines.push({ event, ...(fields ? { fields } : {}) }),
      warn: (event: string, fields?: Record<string, unknown>) =>
        lines.push({ event, ...(fields ? { fields } : {}) }),
    };
    const { client } = await setup({ logger });
    const { processId } = await client.spawn({ clientTools: clientTools(), models: ["openai/gpt-4.1"] });
    await client.manifest(processId);
    const line = lines.find((l) => l.event === "budget.demoted");
    expect(line?.fields).toMatchObject({
      demoted: 45,
      limit: 127,
      families: [
        { family: "gmail", triageClass: "pack", tools: 20 },
        { family: "jira", triageClass: "pack", tools: 15 },
        { family: "slack", triageClass: "pack", tools: 10 },
      ],
    });
  });
});

describe("observed tool limits", () => {
  it("after a rejection is reported, the next manifest fits — also on a second instance sharing the state store; the static block does not move", async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: (event: string) => lines.push(event) };
    const first = await setup({ logger });
    const { processId } = await first.client.spawn({
      clientTools: clientTools(),
      models: ["cortecs/some-model"],
    });
    const unlimited = await first.client.manifest(processId);
    expect(unlimited.tools).toHaveLength(163);

    const admin = await bearer({ tenant: "*", roles: ["admin"] });
    const notPlatform = await bearer({ tenant: "acme", roles: ["admin"] });
    const body = JSON.stringify({ model: "cortecs/some-model", error: OPENAI_REJECTION });
    const refused = await first.app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { ...notPlatform, "content-type": "application/json" },
      body,
    });
    expect(refused.status).toBe(403);
    const learned = await first.app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { ...admin, "content-type": "application/json" },
      body,
    });
    expect(await learned.json()).toEqual({ model: "cortecs/some-model", maxTools: 128 });
    expect(lines).toEqual(["budget.observed_tool_limit"]);

    const cut = await first.client.manifest(processId);
    expect(cut.tools.length).toBeLessThanOrEqual(127);
    expect(cut.demoted.length).toBeGreaterThan(0);
    expect(cut.discoveryBlock).toBe(unlimited.discoveryBlock);

    const second = await testApp({ dataDir: first.dataDir });
    const secondClient = await projectClient(second.app);
    const again = await secondClient.manifest(processId);
    expect(again.tools.length).toBeLessThanOrEqual(127);
    expect(again.demoted).toEqual(cut.demoted);

    const budget = await second.app.request("/v1/models/budget?chain=cortecs/some-model,openai/gpt-small", {
      headers: await bearer({ tenant: "acme", roles: ["read"] }),
    });
    expect(await budget.json()).toMatchObject({ maxTools: 64 });
  });

  it("a rejection text without a number is refused with 422 no_limit_in_error", async () => {
    const { app } = await setup();
    const res = await app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { ...(await bearer({ tenant: "*", roles: ["admin"] })), "content-type": "application/json" },
      body: JSON.stringify({ model: "cortecs/some-model", error: "Internal server error" }),
    });
    expect(res.status).toBe(422);
    expect((await res.json()).code).toBe("no_limit_in_error");
  });
});
