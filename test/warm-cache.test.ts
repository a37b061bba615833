import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { createDynamoClient, DynamoStateStore, ensureStateTable } from "@vance/adapters/aws";
import { CountingObjectStore } from "@vance/adapters/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../functions/api/config";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";

/**
 * Issue 11: a warm manifest and a warm tool lookup cost no object-store request, and a write
 * through the API is seen by the very next read on any instance. Every instance here runs over
 * the same directory stores and the same DynamoDB Local table, each through its own counters.
 */

const dynamo = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
let tableName: string;
beforeAll(async () => {
  tableName = `warm-${randomUUID()}`;
  await ensureStateTable(dynamo, tableName);
});
afterAll(() => dynamo.destroy());

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sharedStores() {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-warm-"));
  dirs.push(dataDir);
  return { dataDir };
}

/** One function instance over the shared stores, with its own request counters. */
async function instance(dataDir: string, options: { env?: Record<string, string>; now?: () => number } = {}) {
  const documents = new CountingObjectStore(new FsObjectStore(join(dataDir, "documents")));
  const catalog = new CountingObjectStore(new FsObjectStore(join(dataDir, "catalog")));
  const state = new DynamoStateStore({ client: dynamo, tableName });
  const { app, services } = await testApp({ dataDir, documents, catalog, state, ...options });
  const client = await projectClient(app);
  const reset = () => {
    documents.reset();
    catalog.reset();
    state.resetRequestCount();
  };
  return { app, services, client, documents, catalog, state, reset };
}

const NO_REQUESTS = { get: 0, put: 0, delete: 0, list: 0 };

/** The tools a project starts with: three in the project, one in the tenant layer. */
async function seed(client: Awaited<ReturnType<typeof projectClient>>) {
  for (const name of ["alpha", "beta", "gamma"]) await client.putTool(name, docTool(`${name} v1`));
  await client.putTool("shared", docTool("shared v1"), "_tenant");
  await client.call("PUT", "/documents/documents/x.md", "# x\n", "text/markdown");
  return client.spawn({
    allowedToolsAdd: ["alpha", "beta", "gamma", "shared", "delta"],
    models: ["openai/gpt-4.1"],
  });
}

const names = (manifest: { primary: string[]; deferred: string[] }) =>
  [...manifest.primary, ...manifest.deferred].sort();

describe("warm manifest and lookup: request counts", () => {
  it("a warm manifest of an unchanged project costs 0 LIST and 0 GET on the object stores and one state-store request", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    await a.services.syncCatalog();
    const { processId } = await seed(a.client);
    const cold = await a.client.manifest(processId);
    expect(names(cold)).toEqual(expect.arrayContaining(["alpha", "beta", "gamma", "shared"]));

    a.reset();
    const warm = await a.client.manifest(processId);
    expect(warm).toEqual(cold);
    expect(a.documents.counts).toEqual(NO_REQUESTS);
    expect(a.catalog.counts).toEqual(NO_REQUESTS);
    // One BatchGetItem: the process record with the layers', the observed limits' and the catalog's generations.
    expect(a.state.requestCount).toBe(1);
  });

  it("a warm manifest that demotes reads the usage counters once per VANCE_DEMAND_CACHE_SECONDS, and again at once after a call counted here", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    await a.services.syncCatalog();
    await a.client.call("PUT", "/documents/documents/x.md", "# x\n", "text/markdown");
    // 140 primary tools against openai's 128: the triage must cut, so demand matters.
    for (let index = 0; index < 140; index++) {
      await a.services.tools.put(
        "acme",
        "shop",
        `f${Math.floor(index / 10)}_t${index}`,
        docTool(`tool ${index}`, "primary: true\nlabels: [many]\n"),
      );
    }
    const { processId } = await a.client.spawn({ allowedToolsAdd: ["@many"], models: ["openai/gpt-4.1"] });
    const cold = await a.client.manifest(processId);
    expect(cold.demoted.length).toBeGreaterThan(0);

    a.reset();
    expect(await a.client.manifest(processId)).toEqual(cold);
    // One BatchGetItem; the demand read by the first manifest still serves.
    expect(a.state.requestCount).toBe(1);

    const called = cold.primary.find((name: string) => name.startsWith("f"))!;
    const invoked = await a.client.call("POST", `/processes/${processId}/invoke`, {
      name: called,
      params: {},
    });
    expect(invoked.status).toBe(200);
    // The count is written behind the answer; wait for it as the end of a Lambda invocation does.
    await a.services.usage.flush();
    a.reset();
    await a.client.manifest(processId);
    // The call counted on this instance: the usage counters are read again (one Query more).
    expect(a.state.requestCount).toBe(2);
    a.reset();
    await a.client.manifest(processId);
    expect(a.state.requestCount).toBe(1);
  });

  it("a warm lookup (GET T/tools/{name}) and a warm invoke in a process cost no object-store request", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    const { processId } = await seed(a.client);
    expect((await a.client.call("GET", "/tools/alpha")).status).toBe(200);
    expect((await a.client.invoke(processId, "beta")).status).toBe(200);
    // The invoke's use is written behind its answer: land it before counting, as an invocation's end does.
    await a.services.usage.flush();

    a.reset();
    const found = await a.client.call("GET", "/tools/alpha");
    expect(found.body.config).toMatchObject({ description: "alpha v1" });
    expect(a.documents.counts).toEqual(NO_REQUESTS);
    // The generations of the project: one BatchGetItem.
    expect(a.state.requestCount).toBe(1);

    a.reset();
    const invoked = await a.client.invoke(processId, "beta");
    expect(invoked.body.value).toBe("# x\n");
    expect(a.documents.counts).toEqual(NO_REQUESTS);

    a.reset();
    const document = await a.app.request(`${a.client.base}/documents/documents/x.md`, {
      headers: a.client.headers,
    });
    expect(await document.text()).toBe("# x\n");
    expect(a.documents.counts).toEqual(NO_REQUESTS);
  });
});

describe("a write through the API on one instance is seen by the very next read on another", () => {
  it("puts and deletes in the project and the tenant layer reach the other instance's next manifest (one LIST of the moved layer)", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    const b = await instance(dataDir);
    const { processId } = await seed(a.client);
    await a.client.manifest(processId);
    await a.client.manifest(processId);

    await b.client.putTool("delta", docTool("delta v1"));
    a.reset();
    expect(names(await a.client.manifest(processId))).toContain("delta");
    // Only the project layer moved: one LIST page, one GET for the new document.
    expect(a.documents.counts).toEqual({ get: 1, put: 0, delete: 0, list: 1 });

    const removed = await b.app.request("/v1/tenants/acme/projects/_tenant/tools/shared", {
      method: "DELETE",
      headers: b.client.headers,
    });
    expect(removed.status).toBe(204);
    a.reset();
    expect(names(await a.client.manifest(processId))).not.toContain("shared");
    // Only the tenant layer moved.
    expect(a.documents.counts).toEqual({ get: 0, put: 0, delete: 0, list: 1 });

    a.reset();
    await a.client.manifest(processId);
    expect(a.documents.counts).toEqual(NO_REQUESTS);

    await b.client.putTool("alpha", docTool("alpha v2"));
    expect((await a.client.call("GET", "/tools/alpha")).body.config).toMatchObject({
      description: "alpha v2",
    });
    const invoked = await a.client.invoke(processId, "alpha");
    expect(invoked.status).toBe(200);
  });

  it("a limit learned and a catalog synced on one instance cut the other instance's next manifest", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    const b = await instance(dataDir);
    await a.services.syncCatalog();
    const { processId } = await seed(a.client);
    expect((await a.client.manifest(processId)).budget.maxTools).toBe(128);

    const learned = await b.app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { ...(await bearer({ tenant: "*", roles: ["admin"] })), "content-type": "application/json" },
      body: JSON.stringify({
        model: "openai/gpt-4.1",
        error: "Invalid 'tools': array too long. Expected an array with maximum length 100, but got 130.",
      }),
    });
    expect(learned.status).toBe(200);
    expect((await a.client.manifest(processId)).budget.maxTools).toBe(100);

    await new FsObjectStore(join(dataDir, "catalog")).put("model/openai/gpt-4.1.yaml", "maxTools: 50\n");
    expect((await b.services.syncCatalog()).changed).toBe(true);
    a.reset();
    expect((await a.client.manifest(processId)).budget.maxTools).toBe(50);
    expect(a.catalog.counts.get).toBe(1);
  });

  it("the writing instance carries its own listing over: its next manifest needs no LIST", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    const { processId } = await seed(a.client);
    await a.client.manifest(processId);
    await a.client.putTool("delta", docTool("delta v1"));
    a.reset();
    expect(names(await a.client.manifest(processId))).toContain("delta");
    expect(a.documents.counts).toEqual(NO_REQUESTS);
  });
});

describe("writes behind the service's back", () => {
  it("the local store scan bumps the layer a direct write changed; the next manifest sees it", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir);
    const { processId } = await seed(a.client);
    expect(await a.services.scanStores()).toEqual([]);
    await a.client.manifest(processId);

    const raw = new FsObjectStore(join(dataDir, "documents"));
    await raw.put("acme/shop/server-tools/delta.yaml", docTool("written on disk"));
    // Trusted until something says the layer moved.
    expect(names(await a.client.manifest(processId))).not.toContain("delta");
    expect(await a.services.scanStores()).toEqual(["documents/acme/shop"]);
    expect(names(await a.client.manifest(processId))).toContain("delta");
    expect(await a.services.scanStores()).toEqual([]);
  });

  it("the safety net reads the store again once VANCE_CACHE_REVALIDATE_SECONDS have passed, bump or not", async () => {
    const { dataDir } = sharedStores();
    let now = Date.UTC(2025, 0, 1);
    const a = await instance(dataDir, { env: { VANCE_CACHE_REVALIDATE_SECONDS: "60" }, now: () => now });
    const { processId } = await seed(a.client);
    await a.client.manifest(processId);
    await new FsObjectStore(join(dataDir, "documents")).put(
      "acme/shop/server-tools/delta.yaml",
      docTool("written on disk"),
    );
    now += 59_000;
    expect(names(await a.client.manifest(processId))).not.toContain("delta");
    now += 2_000;
    expect(names(await a.client.manifest(processId))).toContain("delta");
  });
});

describe("GET /v1/metrics", () => {
  it("needs a token, and counts cache hits and misses with the caches' sizes and bounds", async () => {
    const { dataDir } = sharedStores();
    const a = await instance(dataDir, { env: { VANCE_CACHE_DOCUMENTS_MB: "8", VANCE_CACHE_PARSED_MB: "4" } });
    expect((await a.app.request("/v1/metrics")).status).toBe(401);
    const tenantToken = await bearer({ tenant: "other", roles: ["admin"] });
    expect((await a.app.request("/v1/metrics", { headers: tenantToken })).status).toBe(403);
    const { processId } = await seed(a.client);
    await a.client.manifest(processId);
    const read = async () => {
      const res = await a.app.request("/v1/metrics", {
        headers: await bearer({ tenant: "*", roles: [] }),
      });
      expect(res.status).toBe(200);
      type Stats = {
        name: string;
        hits: number;
        misses: number;
        entries?: number;
        bytes?: number;
        maxBytes?: number;
      };
      const body = (await res.json()) as {
        caches: Stats[];
        generations: { reads: number; bumps: number };
        scripts: { runs: number; busy: number; queued: number } | null;
      };
      const byName = new Map(body.caches.map((cache) => [cache.name, cache]));
      const cache = (name: string): Stats => {
        const found = byName.get(name);
        if (!found) throw new Error(`/v1/metrics lists no cache '${name}'`);
        return found;
      };
      return { ...body, cache };
    };
    const before = await read();
    expect(before.caches.map((cache) => cache.name)).toEqual(
      expect.arrayContaining([
        "documents",
        "tools.parsed",
        "tools.snapshots",
        "tools.listedLayers",
        "tools.compiledLayers",
        "secrets.values",
        "sources.lists",
        "usage.demand",
        "identity.verifiedTokens",
        "jsonSchemas",
        "allowSets",
        "processes.parsed",
        "catalog",
        "mcpServer.serverOfSubTool",
        "mcpServer.parsedServers",
      ]),
    );
    expect(before.caches.map((cache) => cache.name)).toEqual(before.caches.map((cache) => cache.name).sort());
    expect(before.cache("documents")).toMatchObject({ maxBytes: 8 * 1024 * 1024 });
    expect(before.cache("tools.parsed")).toMatchObject({ maxBytes: 4 * 1024 * 1024 });
    expect(before.cache("documents").bytes).toBeGreaterThan(0);
    expect(before.cache("jsonSchemas")).toMatchObject({ maxEntries: 1024, maxBytes: 32 * 1024 * 1024 });
    // The layers listed are bounded by entries and by bytes (each tenant at most its share of both).
    expect(before.cache("tools.listedLayers")).toMatchObject({ maxEntries: 10_000, maxBytes: 10_000 * 512 });
    expect(before.cache("tools.listedLayers").bytes).toBeGreaterThan(0);
    await a.client.manifest(processId);
    const after = await read();
    expect(after.cache("documents").hits).toBeGreaterThan(before.cache("documents").hits);
    expect(after.cache("documents").misses).toBe(before.cache("documents").misses);
    expect(after.cache("tools.parsed").hits).toBe(before.cache("tools.parsed").hits + 1);
    // The second manifest of an unchanged turn: the project's snapshot (and the process's memo on
    // it) and the encoded body are reused.
    expect(after.cache("tools.snapshots").hits).toBe(before.cache("tools.snapshots").hits + 1);
    expect(after.cache("tools.snapshots").misses).toBe(before.cache("tools.snapshots").misses);
    expect(after.cache("identity.verifiedTokens").hits).toBeGreaterThan(
      before.cache("identity.verifiedTokens").hits,
    );
    expect(after.generations.reads).toBe(before.generations.reads + 1);
    // The script pool starts at the first script run: none yet, so no pool to report.
    expect(after.scripts).toBeNull();
    await a.client.putTool(
      "adder",
      "type: scripted\ndescription: Add.\nparameters:\n  inputs:\n    - { name: a, type: number }\n  source: a + 1\n",
    );
    expect(await a.client.call("POST", "/tools/adder/invoke", { params: { a: 1 } })).toMatchObject({
      status: 200,
      body: { value: 2 },
    });
    expect((await read()).scripts).toMatchObject({ runs: 1, busy: 0, queued: 0 });
  });
});

describe("cache settings", () => {
  it("default to 64 MiB of documents, 128 MiB parsed, a 300 s safety net and a 30 s local scan", () => {
    expect(loadConfig({})).toMatchObject({
      VANCE_CACHE_DOCUMENTS_MB: 64,
      VANCE_CACHE_PARSED_MB: 128,
      VANCE_CACHE_REVALIDATE_SECONDS: 300,
      VANCE_STORE_SCAN_SECONDS: 30,
    });
    expect(() => loadConfig({ VANCE_CACHE_DOCUMENTS_MB: "0" })).toThrow(/VANCE_CACHE_DOCUMENTS_MB/);
  });
});
