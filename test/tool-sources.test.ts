import { SqliteStateStore } from "@vance/adapters/sqlite";
import { MemoryObjectStore } from "@vance/adapters/testing";
import {
  builtInToolTypes,
  DocumentCascade,
  defineToolType,
  Generations,
  type JsonSchema,
  RecipeResolver,
  ServerToolService,
  type SourceList,
  type SourceTool,
  subToolOp,
  ToolDispatcher,
  ToolSources,
  ToolTypeRegistry,
  VanceError,
  whoami,
} from "@vance/core";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { snapshotting } from "./support/fixtures";

const T = "acme";
const P = "shop";

/** A remote the tests steer: what `load` answers, how often it was asked, and whether it hangs. */
class FakeRemote {
  tools: SourceTool[] = [];
  loads = 0;
  fail: string | null = null;
  hang = false;
  changed = false;
  invoked: { sourceName: string; input: unknown }[] = [];

  async load(): Promise<SourceList> {
    this.loads++;
    if (this.hang) return new Promise<SourceList>(() => {});
    if (this.fail) throw new Error(this.fail);
    this.changed = false;
    return { tools: [...this.tools], current: () => !this.changed };
  }
}

function sourceTool(sourceName: string, description = `${sourceName} does things.`): SourceTool {
  const inputSchema: JsonSchema = {
    type: "object",
    properties: { q: { type: "string" } },
    required: ["q"],
    additionalProperties: false,
  };
  return { sourceName, description, inputSchema };
}

function setup(
  options: { ttlMs?: number; waitMs?: number; retryMs?: number; generations?: Generations } = {},
) {
  const remote = new FakeRemote();
  let clock = 1_000_000;
  const FakePack = defineToolType({
    typeId: "fake_pack",
    description: "A pack over the fake remote.",
    parametersSchema: v.strictObject({ hint: v.optional(v.string()) }),
    inputSchema: () => ({ type: "object" }),
    sourcing: {
      kind: "pack",
      promptHint: (parameters) => parameters.hint,
      open: async () => ({ key: "remote", load: () => remote.load() }),
      invokeSubTool: async (_config, _parameters, tool, input) => {
        remote.invoked.push({ sourceName: tool.sourceName, input });
        return { value: `ran ${tool.sourceName}` };
      },
    },
  });
  const FakeSingle = defineToolType({
    typeId: "fake_single",
    description: "One tool whose schema is the remote's.",
    parametersSchema: v.strictObject({ toolName: v.string() }),
    inputSchema: () => ({ type: "object" }),
    sourcing: {
      kind: "schema",
      schemaTool: (parameters) => parameters.toolName,
      open: async () => ({ key: "remote", load: () => remote.load() }),
    },
    invoke: async (_config, parameters, input) => {
      remote.invoked.push({ sourceName: parameters.toolName, input });
      return { value: "single" };
    },
  });
  const types = new ToolTypeRegistry([...builtInToolTypes(), FakePack, FakeSingle]);
  const cascade = new DocumentCascade(
    new MemoryObjectStore(),
    new Map(),
    options.generations ? { generations: options.generations } : {},
  );
  const sources = new ToolSources({
    types,
    now: () => clock,
    ttlMs: options.ttlMs ?? 60_000,
    waitMs: options.waitMs ?? 500,
    retryMs: options.retryMs ?? 5_000,
    // The fake types open without reading anything.
    context: (tenant, project) => ({
      tenant,
      project,
      runtime: undefined as never,
      networkPolicy: { addressProblem: () => null },
      readHit: async () => null,
      secretsFor: () => async () => undefined,
    }),
  });
  const tools = new ServerToolService(cascade, types, [whoami], undefined, { sources });
  const dispatcher = new ToolDispatcher({
    cascade,
    runtime: {
      fetch: () => Promise.reject(new Error("no network")),
      resolveHost: async () => [],
      scripts: { run: async () => ({ ok: false, error: "NoScripts", message: "none" }) },
      now: () => clock,
    },
    secrets: { lookupFor: () => async () => undefined },
    environment: types.environment,
  });
  const names = async () => (await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name);
  return {
    remote,
    tools,
    dispatcher: snapshotting(dispatcher, tools),
    names,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const PACK = "type: fake_pack\ndescription: The fake pack.\nlabels: [fake]\nprimary: true\n";

describe("packs: a remote's tools become sub-tools {doc}__{op} everywhere", () => {
  it("lists sub-tools with their pack, made-valid names, the pack's flags and labels; the pack document itself is no tool", async () => {
    const { remote, tools } = setup();
    remote.tools = [sourceTool("Create-Issue"), sourceTool("search"), sourceTool("delete.all")];
    await tools.put(
      T,
      P,
      "gh",
      `${PACK}defaultDeferred: true\ndisabledSubTools: [delete.all]\nparameters: { hint: "GitHub issues." }\n`,
    );
    const listed = await (await tools.snapshot(T, P)).tools();
    const subTools = listed.filter((tool) => tool.pack);
    expect(subTools.map((tool) => tool.name)).toEqual(["gh__create_issue", "gh__search"]);
    expect(listed.map((tool) => tool.name)).not.toContain("gh");
    const create = subTools[0]!;
    expect(create).toMatchObject({
      layer: "project",
      pack: { name: "gh", hint: "GitHub issues.", tool: { sourceName: "Create-Issue" } },
      config: { name: "gh__create_issue", primary: true, defaultDeferred: true, labels: ["fake"] },
      inputSchema: { required: ["q"] },
    });
    expect(create.config.description).toBe("Create-Issue does things.");
    expect(create.stale).toBeUndefined();
  });

  it("disabledSubTools takes made-valid names too", async () => {
    const { remote, tools, names } = setup();
    remote.tools = [sourceTool("Create-Issue"), sourceTool("search")];
    await tools.put(T, P, "gh", `${PACK}disabledSubTools: [create_issue]\n`);
    expect((await names()).filter((name) => name.startsWith("gh__"))).toEqual(["gh__search"]);
  });

  it("cuts a long operation so that pack__op has at most 64 characters", () => {
    const op = subToolOp("a_rather_long_pack_name", "x".repeat(100));
    expect(`a_rather_long_pack_name__${op}`).toHaveLength(64);
    expect(subToolOp("p", "Ümlaut Tool/v2")).toBe("_mlaut_tool_v2");
  });

  it("two server tools that collide once made valid make the pack invalid, naming both; the listing still answers", async () => {
    const { remote, tools, names } = setup();
    remote.tools = [sourceTool("get-item"), sourceTool("get_item"), sourceTool("other")];
    await tools.put(T, P, "gh", PACK);
    expect((await names()).filter((name) => name.startsWith("gh"))).toEqual([]);
    const found = await (await tools.snapshot(T, P)).lookup("gh__other");
    expect(found.status).toBe("invalid");
    const error = found.status === "invalid" ? found.error : null;
    expect(error?.message).toContain("'get-item' and 'get_item'");
  });

  it("looks up a sub-tool by name; an unknown operation is not found; a disabled pack disables its sub-tools", async () => {
    const { remote, tools } = setup();
    remote.tools = [sourceTool("search")];
    await tools.put(T, P, "gh", PACK);
    const found = await (await tools.snapshot(T, P)).lookup("gh__search");
    expect(found.status === "found" && found.tool.pack?.tool.sourceName).toBe("search");
    expect((await (await tools.snapshot(T, P)).lookup("gh__nope")).status).toBe("not_found");
    expect((await (await tools.snapshot(T, P)).lookup("nothing__nope")).status).toBe("not_found");
    await tools.put(T, P, "gh", `${PACK}enabled: false\n`);
    expect(await (await tools.snapshot(T, P)).lookup("gh__search")).toEqual({
      status: "disabled",
      layer: "project",
    });
  });

  it("serves a loaded list for its time-to-live, loads again after it or when the remote says its list changed", async () => {
    const { remote, tools, names, advance } = setup({ ttlMs: 60_000 });
    remote.tools = [sourceTool("search")];
    await tools.put(T, P, "gh", PACK);
    await names();
    await names();
    await (await tools.snapshot(T, P)).lookup("gh__search");
    expect(remote.loads).toBe(1);

    remote.tools = [sourceTool("search"), sourceTool("create")];
    advance(59_000);
    expect(await names()).not.toContain("gh__create");
    advance(2_000);
    expect(await names()).toContain("gh__create");
    expect(remote.loads).toBe(2);

    remote.tools = [sourceTool("create")];
    remote.changed = true;
    expect(await names()).not.toContain("gh__search");
    expect(remote.loads).toBe(3);
  });

  it("keeps the same sub-tool objects while the list is unchanged (the surface's caches stay warm)", async () => {
    const { remote, tools } = setup();
    remote.tools = [sourceTool("search")];
    await tools.put(T, P, "gh", PACK);
    const first = (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "gh__search");
    const second = (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "gh__search");
    expect(second).toBe(first);
  });

  it("a reload after the TTL answering equal tools in fresh objects keeps the project's listing version; a changed list makes a new one", async () => {
    // With generation markers, as deployed: an unchanged layer keeps its listing's version.
    const state = new SqliteStateStore(":memory:");
    const { remote, tools, advance } = setup({ ttlMs: 60_000, generations: new Generations({ state }) });
    remote.tools = [sourceTool("search")];
    await tools.put(T, P, "gh", PACK);
    const version = async () => (await (await tools.snapshot(T, P)).version()).version;
    const first = await version();
    remote.tools = [sourceTool("search")];
    advance(61_000);
    expect(await version()).toBe(first);
    expect(remote.loads).toBe(2);
    remote.tools = [sourceTool("search", "Searches better.")];
    advance(61_000);
    expect(await version()).toBeGreaterThan(first);
    expect(remote.loads).toBe(3);
    state.close();
  });

  it("a remote that fails after a success shows its last known tools flagged stale, and is not asked again until the retry delay passed", async () => {
    const { remote, tools, advance } = setup({ ttlMs: 1_000, retryMs: 5_000 });
    remote.tools = [sourceTool("search")];
    await tools.put(T, P, "gh", PACK);
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "gh__search")?.stale,
    ).toBeUndefined();

    remote.fail = "connection refused";
    advance(2_000);
    const stale = (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "gh__search");
    expect(stale?.stale).toBe(true);
    expect(remote.loads).toBe(2);
    await (await tools.snapshot(T, P)).tools();
    expect(remote.loads).toBe(2);

    remote.fail = null;
    advance(5_000);
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "gh__search")?.stale,
    ).toBeUndefined();
    expect(remote.loads).toBe(3);
  });

  it("before a first success a pack lists nothing; a hanging remote holds a listing no longer than the wait", async () => {
    const { remote, tools, names } = setup({ waitMs: 100 });
    remote.hang = true;
    await tools.put(T, P, "gh", PACK);
    await tools.put(T, P, "plain", "type: doc_lookup\ndescription: Plain.\nparameters: { path: a.md }\n");
    // The remote never answers: a listing that waited for it would never answer either.
    const listed = await names();
    expect(listed).toContain("plain");
    expect(listed.filter((name) => name.startsWith("gh"))).toEqual([]);
  });

  it("a pack name in a recipe adds all its sub-tools, and so does a label on the pack document", async () => {
    const { remote, tools } = setup();
    remote.tools = [sourceTool("search"), sourceTool("create")];
    await tools.put(T, P, "gh", PACK);
    const recipes = new RecipeResolver();
    const snapshot = () => tools.snapshot(T, P);
    expect(await recipes.resolve(await snapshot(), { engineDefault: ["gh"] })).toMatchObject({
      allowedTools: ["gh__create", "gh__search"],
      allowedPacks: ["gh"],
      excludedTools: [],
    });
    expect(
      await recipes.resolve(await snapshot(), {
        engineDefault: ["@fake"],
        allowedToolsRemove: ["gh__create"],
      }),
    ).toMatchObject({ allowedTools: ["gh__search"], allowedPacks: ["gh"], excludedTools: ["gh__create"] });
  });

  it("invokes a sub-tool through its pack's type after checking the params against the source's schema; the pack document is not callable", async () => {
    const { remote, tools, dispatcher } = setup();
    remote.tools = [sourceTool("Create-Issue")];
    await tools.put(T, P, "gh", PACK);
    const caller = { tenant: T, project: P };
    const result = await dispatcher.invoke({
      caller,
      name: "gh__create_issue",
      params: { q: "x" },
      allowedTools: null,
    });
    expect(result).toMatchObject({ value: "ran Create-Issue" });
    expect(remote.invoked).toEqual([{ sourceName: "Create-Issue", input: { q: "x" } }]);
    await expect(
      dispatcher.invoke({ caller, name: "gh__create_issue", params: { q: 1 }, allowedTools: null }),
    ).rejects.toMatchObject({ code: "invalid_params" });
    await expect(
      dispatcher.invoke({ caller, name: "gh", params: {}, allowedTools: null }),
    ).rejects.toMatchObject({
      code: "tool_not_found",
      message: expect.stringContaining("is a pack"),
    });
  });

  it("a schema tool takes its input schema from the remote's tool; one the remote lacks is invalid", async () => {
    const { remote, tools, dispatcher } = setup();
    remote.tools = [sourceTool("get-weather")];
    await tools.put(
      T,
      P,
      "weather",
      "type: fake_single\ndescription: Weather.\nparameters: { toolName: get-weather }\n",
    );
    const found = await (await tools.snapshot(T, P)).require("weather");
    expect(found.inputSchema).toMatchObject({ required: ["q"] });
    await expect(
      dispatcher.invoke({
        caller: { tenant: T, project: P },
        name: "weather",
        params: {},
        allowedTools: null,
      }),
    ).rejects.toMatchObject({ code: "invalid_params" });

    await tools.put(
      T,
      P,
      "broken",
      "type: fake_single\ndescription: Broken.\nparameters: { toolName: missing }\n",
    );
    await expect((await tools.snapshot(T, P)).require("broken")).rejects.toBeInstanceOf(VanceError);
    expect((await (await tools.snapshot(T, P)).tools()).map((tool) => tool.name)).not.toContain("broken");
  });
});
