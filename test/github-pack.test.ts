import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@vance/cli";
import type { OpenApiCompiler } from "@vance/core";
import { packSubFamily } from "@vance/core";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../functions/api/config";
import { workerOpenApiCompiler } from "../functions/api/services";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { listen, token } from "./support/ui-project";

// Issue 23: GitHub's whole official OpenAPI document (npm @octokit/openapi, 13 MB, 1,223
// operations) as one pack. The document is parsed once, on the task worker, for the whole file:
// every test below reads the same listing.

const GITHUB_SPEC = join(process.cwd(), "node_modules/@octokit/openapi/generated/api.github.com.json");
const OPERATIONS = 1_223;

interface Received {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

let fake: Server;
let fakeBase: string;
const received: Received[] = [];
let setup: Awaited<ReturnType<typeof testApp>>;
let client: Awaited<ReturnType<typeof projectClient>>;
const now = { t: 1_000_000_000 };
let compiles = 0;
/** The pack's sub-tools as the listing gave them. */
let subTools: { name: string; pack?: string; family?: string }[] = [];

beforeAll(async () => {
  fake = createServer((request: IncomingMessage, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        contentType: request.headers["content-type"],
        body,
      });
      response.writeHead(201, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: 1, body: "stored" }));
    });
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  fakeBase = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

  const env = { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" };
  const worker = workerOpenApiCompiler(loadConfig({ VANCE_DATA_DIR: tmpdir(), ...env }));
  const counted: OpenApiCompiler = (request) => {
    compiles++;
    return worker(request);
  };
  setup = await testApp({ env, now: () => now.t, openApi: counted });
  client = await projectClient(setup.app);
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => fake?.close(() => resolve()));
});

describe("GitHub's whole OpenAPI document as one pack", () => {
  it("is stored through the API (13 MB, within the spec body limit) and through vance-tools push; all 1,223 operations listed as sub-tools, parsed once", async () => {
    const text = readFileSync(GITHUB_SPEC, "utf8");
    expect(text.length).toBeGreaterThan(12_000_000);
    const stored = await setup.app.request("/v1/tenants/acme/projects/api/documents/specs/github.json", {
      method: "PUT",
      headers: { ...client.headers, "content-type": "application/json" },
      body: text,
    });
    expect(stored.status, await stored.clone().text()).toBe(201);
    // Any other folder keeps the ordinary limit.
    const elsewhere = await setup.app.request("/v1/tenants/acme/projects/api/documents/big/github.json", {
      method: "PUT",
      headers: { ...client.headers, "content-type": "application/json" },
      body: text,
    });
    expect(elsewhere.status).toBe(413);

    // The CLI pushes the spec and the pack document into acme/shop.
    const dir = join(tmpdir(), `vance-github-${process.pid}`);
    mkdirSync(join(dir, "specs"), { recursive: true });
    mkdirSync(join(dir, "server-tools"), { recursive: true });
    writeFileSync(join(dir, "specs", "github.json"), text);
    writeFileSync(
      join(dir, "server-tools", "github.yaml"),
      `type: openapi\ndescription: GitHub's REST API\nparameters:\n  spec: specs/github.json\n  baseUrl: ${fakeBase}\n  promptHint: GitHub - repositories, issues, pull requests, actions\n`,
    );
    const server = await listen(setup.app);
    try {
      let stderr = "";
      const code = await runCli(
        ["node", "vance-tools", "push", dir],
        { out: { write: () => undefined }, err: { write: (chunk: string) => (stderr += chunk) } },
        {
          NO_COLOR: "1",
          VANCE_URL: server.base,
          VANCE_TOKEN: await token("acme", ["read", "write"]),
          VANCE_TENANT: "acme",
          VANCE_PROJECT: "shop",
        },
      );
      expect(code, stderr).toBe(0);
    } finally {
      await server.close();
    }

    // The first parse takes seconds on the worker: wait for the pack to be current.
    const listed = await client.currentListing();
    subTools = (listed.tools as typeof subTools).filter((tool) => tool.pack === "github");
    expect(subTools).toHaveLength(OPERATIONS);
    expect(subTools.map((tool) => tool.name)).toContain("github__issues_create_comment");
    // Long operationIds shortened by rule, not cut: none numbered (no two are truly the same), all
    // within 64 characters.
    const names = subTools.map((tool) => tool.name);
    expect(names.filter((name) => /_\d+$/.test(name))).toEqual([]);
    expect(names.filter((name) => name.length > 64)).toEqual([]);
    expect(new Set(names).size).toBe(OPERATIONS);
    expect(names).toEqual(
      expect.arrayContaining([
        "github__actions_get_default_workflow_permissions_organization",
        "github__actions_get_default_workflow_permissions_repository",
        "github__packages_list_docker_migration_conflicting_auth_user",
      ]),
    );
    const pack = (listed.packs as Record<string, unknown>[]).find((entry) => entry.pack === "github");
    // Two operations' bodies (markdown text, a release asset's bytes) cannot be sent: said, not dropped.
    expect(pack).toEqual({
      pack: "github",
      layer: "project",
      status: "current",
      subTools: OPERATIONS,
      leftOut: [
        expect.stringContaining("POST /markdown/raw: offered without its optional request body"),
        expect.stringContaining(
          "POST /repos/{owner}/{repo}/releases/{release_id}/assets: offered without its optional request body",
        ),
      ],
    });
    expect(compiles).toBe(1);
  }, 180_000);

  it("is not parsed again while the spec's ETag holds, however often the sources' TTL passes", async () => {
    for (let expiry = 0; expiry < 3; expiry++) {
      now.t += 61_000;
      const listed = await client.call("GET", "/tools");
      const pack = (listed.body.packs as { pack: string; status: string }[]).find((p) => p.pack === "github");
      expect(pack?.status).toBe("current");
    }
    expect(compiles).toBe(1);
  });

  it("a second instance over the same store, caches empty (a cold Lambda), lists all 1,223 sub-tools from the kept compiled list, parsing nothing", async () => {
    let coldCompiles = 0;
    const cold = await testApp({
      env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" },
      dataDir: setup.dataDir,
      now: () => now.t,
      openApi: () => {
        coldCompiles++;
        return Promise.reject(new Error("a cold instance must not compile the kept spec"));
      },
    });
    const coldClient = await projectClient(cold.app);
    // Reading the kept list (2.4 MB) may outlast a listing's wait on a loaded machine: wait for the state.
    const listed = await coldClient.currentListing();
    const names = (listed.tools as typeof subTools).filter((tool) => tool.pack === "github");
    expect(names.map((tool) => tool.name)).toEqual(subTools.map((tool) => tool.name));
    expect(coldCompiles).toBe(0);
  });

  it("under openai/gpt-4.1 (limit 127) a process allowed every sub-tool gets at least 100 on the wire, no family half visible", async () => {
    const spawned = await client.spawn({
      models: ["openai/gpt-4.1"],
      allowedToolsAdd: subTools.map((tool) => tool.name),
    });
    const manifest = await client.manifest(spawned.processId);
    const onWire = manifest.tools.map((tool) => tool.function.name);
    expect(onWire.length).toBeGreaterThanOrEqual(100);
    expect(onWire.length).toBeLessThanOrEqual(127);
    const familyOf = new Map(subTools.map((tool) => [tool.name, packSubFamily(tool.name, tool.family)]));
    const sizes = new Map<string, number>();
    for (const family of familyOf.values()) sizes.set(family, (sizes.get(family) ?? 0) + 1);
    const shown = new Map<string, number>();
    for (const name of onWire) {
      const family = familyOf.get(name);
      if (family) shown.set(family, (shown.get(family) ?? 0) + 1);
    }
    for (const [family, count] of shown) expect(count, family).toBe(sizes.get(family));
    expect(shown.size).toBeGreaterThan(1);
    // The rest is in the demoted block, collapsed by family within its token budget (o200k).
    expect(encode(manifest.demotedDiscoveryBlock).length).toBeLessThanOrEqual(1_000);
    expect(manifest.demotedDiscoveryBlock).toMatch(
      /- github__\w+_\* \(\d+ tools?\)|github__\* \(\d+ tools in/,
    );
    expect(familyOf.get("github__issues_create_comment")).toBe("github__issues");
  });

  it('tool_search("create an issue comment") ranks github__issues_create_comment in the top 3, and activates those 3', async () => {
    const spawned = await client.spawn({
      models: ["openai/gpt-4.1"],
      allowedToolsAdd: ["github"],
    });
    // 1,223 tools are past TOOL_SEARCH_AUTO_SIZE: the spawn adds tool_search by itself.
    expect(spawned.allowedTools).toContain("tool_search");
    expect(spawned.warnings).toContainEqual(
      expect.objectContaining({ code: "tool_search_added", list: "allowedToolsAdd", entry: "tool_search" }),
    );
    const found = await client.invoke(spawned.processId, "tool_search", {
      query: "create an issue comment",
      limit: 5,
    });
    expect(found.status).toBe(200);
    const value = found.body.value as {
      tools: { name: string; paramsSchema: unknown }[];
      activated: string[];
    };
    const names = value.tools.map((tool) => tool.name);
    expect(names.slice(0, 3)).toContain("github__issues_create_comment");
    // Only the first 3 are activated (those the triage had left off the wire); the rest are described.
    expect(names.slice(0, 3)).toEqual(expect.arrayContaining(value.activated));
    const manifest = await client.manifest(spawned.processId);
    expect(manifest.primary).toEqual(expect.arrayContaining([...names.slice(0, 3), "tool_search"]));
    // The static block names 1,200 deferred tools within 2,000 tokens (o200k): one line per
    // family, which tool_list expands by prefix.
    expect(encode(manifest.discoveryBlock).length).toBeLessThanOrEqual(2_000);
    expect(manifest.discoveryBlock).toContain("  - github__issues_* (");
    const listed = await client.invoke(spawned.processId, "tool_list", { prefix: "github__issues_" });
    const available = (listed.body.value as { available: string[] }).available;
    expect(available).toContain("github__issues_list_comments");
    expect(available.every((name) => name.startsWith("github__issues_"))).toBe(true);
  });

  it("20 searches leave at most 15 tools beyond the meta-tools on the wire: each activates its top 3, and past the cap of 15 the least recently used go", async () => {
    const spawned = await client.spawn({
      models: [],
      allowedToolsAdd: ["github"],
      allowedToolsDefer: ["github__*"],
    });
    const meta = new Set(["tool_list", "tool_description", "tool_search", "invoke_tool"]);
    const beyondMeta = async () =>
      (await client.manifest(spawned.processId)).primary.filter((name) => !meta.has(name));
    expect(await beyondMeta()).toEqual([]);
    // The discovery summary in tool_description's description: the deferred pack, collapsed
    // within its 500 tokens (o200k, with the description's own sentence), the same in every turn.
    const describeDescription = async () =>
      (await client.manifest(spawned.processId)).tools.find(
        (tool) => tool.function.name === "tool_description",
      )!.function.description;
    const summary = await describeDescription();
    expect(summary).toContain("github__");
    expect(encode(summary).length).toBeLessThanOrEqual(550);
    const queries = [
      "create an issue comment",
      "merge a pull request",
      "list repositories of an organization",
      "create a release",
      "delete a branch protection rule",
      "star a repository",
      "list workflow runs",
      "add a collaborator to a repository",
      "create a gist",
      "list commits of a repository",
      "get the readme of a repository",
      "create a webhook for a repository",
      "list notifications for the user",
      "add labels to an issue",
      "request reviewers for a pull request",
      "fork a repository",
      "list deployments",
      "create a team in an organization",
      "get a user's public keys",
      "cancel a workflow run",
    ];
    let last: string[] = [];
    for (const query of queries) {
      now.t += 1000;
      const found = await client.invoke(spawned.processId, "tool_search", { query });
      const value = found.body.value as { tools: { name: string }[]; activated: string[] };
      expect(value.tools.length, query).toBeLessThanOrEqual(5);
      expect(value.activated.length, query).toBeLessThanOrEqual(3);
      // Of the first 3, those not active already (an active one is on the wire: nothing to do).
      expect(
        value.tools.slice(0, 3).map((tool) => tool.name),
        query,
      ).toEqual(expect.arrayContaining(value.activated));
      last = value.activated;
    }
    now.t += 1000;
    const onWire = await beyondMeta();
    expect(onWire.length).toBeLessThanOrEqual(15);
    // The cap held activations back: 20 searches found more than 15 tools to activate.
    expect(onWire.length).toBe(15);
    expect(onWire).toEqual(expect.arrayContaining(last));
    expect(await describeDescription()).toBe(summary);
    const record = await client.process(spawned.processId);
    expect(Object.keys(record.activatedTools).length).toBeLessThanOrEqual(15);
  });

  it("tool_list without a prefix stays within the static block's 2,000 tokens (o200k), families collapsed; a collapsed entry's prefix lists its names", async () => {
    const spawned = await client.spawn({ models: [], allowedToolsAdd: ["github"] });
    const listed = await client.invoke(spawned.processId, "tool_list", {});
    expect(listed.status).toBe(200);
    const value = listed.body.value as { inContext: string[]; available: string[]; note?: string };
    expect(encode(JSON.stringify(value)).length).toBeLessThanOrEqual(2_000);
    const entries = [...value.inContext, ...value.available];
    expect(entries).toContain("tool_search");
    const issues = entries.find((entry) => entry.startsWith("github__issues_* ("));
    expect(issues, entries.join("\n")).toMatch(/^github__issues_\* \((\d+) tools\)$/);
    expect(value.note).toContain("tool_list with that prefix");
    const count = Number(/\((\d+) tools\)/.exec(issues!)![1]);
    const expanded = await client.invoke(spawned.processId, "tool_list", { prefix: "github__issues_" });
    const names = expanded.body.value as { inContext: string[]; available: string[] };
    expect([...names.inContext, ...names.available]).toHaveLength(count);
    expect([...names.inContext, ...names.available]).toContain("github__issues_create_comment");
  });

  it("a call of github__issues_create_comment reaches the (fake) GitHub with the right method, path and body", async () => {
    const called = await client.call("POST", "/tools/github__issues_create_comment/invoke", {
      params: { owner: "octo", repo: "hello", issue_number: 42, body: { body: "Looks good" } },
    });
    expect(called.status).toBe(200);
    expect(called.body).toMatchObject({ value: { id: 1, body: "stored" } });
    expect(received).toEqual([
      {
        method: "POST",
        url: "/repos/octo/hello/issues/42/comments",
        contentType: expect.stringContaining("application/json"),
        body: JSON.stringify({ body: "Looks good" }),
      },
    ]);
  });
});
