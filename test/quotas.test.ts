import { SqliteStateStore } from "@vance/adapters/sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { mintToken, type Role } from "../functions/api/auth";
import { SECRET, testApp } from "./support/app";
import { initializeMessage } from "./support/mcp-messages";

/** Issue 35 item 4: what one tenant may make the service store, and what a caller sees past it. */

const HOUR = 60 * 60 * 1000;
/**
 * A minute into the current hour. The app and the state store share the test's clock: with the
 * store on the real one, a run crossing the hour (two fresh-clone runs at 10:59) saw the window end.
 */
const START = Math.floor(Date.now() / HOUR) * HOUR + 60_000;
let clock = START;
const stores: SqliteStateStore[] = [];
afterEach(() => {
  clock = START;
  for (const store of stores.splice(0)) store.close();
});

async function bearer(tenant: string, roles: Role[]): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await mintToken(SECRET, { tenant, roles }, 3600)}` };
}

async function quotaApp(env: Record<string, string>) {
  const state = new SqliteStateStore(":memory:", { now: () => clock });
  stores.push(state);
  return { ...(await testApp({ env, now: () => clock, state })), state };
}

/** acme's MCP client headers (a read token), and an `initialize` of a new session of T/mcp. */
async function mcpSessions(app: Awaited<ReturnType<typeof quotaApp>>["app"]) {
  const headers = {
    ...(await bearer("acme", ["read"])),
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const initialize = () =>
    app.request("/v1/tenants/acme/projects/shop/mcp", {
      method: "POST",
      headers,
      body: JSON.stringify(initializeMessage("t")),
    });
  return { headers, initialize };
}

describe("process quota per tenant and hour", () => {
  it("a read token spawns 5 processes of its hour's 5, the 6th answers 429 quota_exceeded naming the quota, and the next hour opens again", async () => {
    const { app, state } = await quotaApp({ VANCE_QUOTA_PROCESSES_PER_HOUR: "5" });
    const reader = { ...(await bearer("acme", ["read"])), "content-type": "application/json" };
    const spawn = (tenant = "acme", headers = reader) =>
      app.request(`/v1/tenants/${tenant}/projects/shop/processes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ models: [] }),
      });
    for (let i = 0; i < 5; i++) expect((await spawn()).status).toBe(201);
    const refused = await spawn();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(refused.headers.get("retry-after"))).toBe(3600 - 60);
    const problem = await refused.json();
    expect(problem).toMatchObject({
      code: "quota_exceeded",
      quota: "processesPerHour",
      limit: 5,
      setting: "VANCE_QUOTA_PROCESSES_PER_HOUR",
    });
    expect(problem.detail).toMatch(/5 processes/);
    // Another tenant is not charged for acme's.
    const other = { ...(await bearer("other", ["read"])), "content-type": "application/json" };
    expect((await spawn("other", other)).status).toBe(201);
    // Exactly five of acme's are stored: the refused spawn left no record behind.
    expect(await state.getQuotaUsage(`processes/acme/${Math.floor(clock / HOUR) * HOUR}`)).toBe(5);
    clock += HOUR;
    expect((await spawn()).status).toBe(201);
  });

  it("an MCP session is a process: initialize past the quota answers 429 quota_exceeded", async () => {
    const { app } = await quotaApp({ VANCE_QUOTA_PROCESSES_PER_HOUR: "2" });
    const { initialize } = await mcpSessions(app);
    expect((await initialize()).status).toBe(200);
    expect((await initialize()).status).toBe(200);
    const refused = await initialize();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "quota_exceeded", quota: "processesPerHour" });
  });
});

describe("live process quota per tenant", () => {
  it("a tenant holds at most 3 processes that have not ended: the 4th spawn answers 429 quota_exceeded naming the setting; ending one (DELETE) makes room, and a second DELETE answers 404", async () => {
    const { app, state } = await quotaApp({ VANCE_QUOTA_LIVE_PROCESSES: "3" });
    const reader = { ...(await bearer("acme", ["read"])), "content-type": "application/json" };
    const base = "/v1/tenants/acme/projects/shop/processes";
    const spawn = async (tenant = "acme", headers = reader) =>
      app.request(`/v1/tenants/${tenant}/projects/shop/processes`, {
        method: "POST",
        headers,
        body: JSON.stringify({ models: [] }),
      });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const spawned = await spawn();
      expect(spawned.status).toBe(201);
      ids.push((await spawned.json()).processId);
    }
    const refused = await spawn();
    expect(refused.status).toBe(429);
    const problem = await refused.json();
    expect(problem).toMatchObject({
      code: "quota_exceeded",
      quota: "liveProcesses",
      limit: 3,
      setting: "VANCE_QUOTA_LIVE_PROCESSES",
    });
    expect(problem.detail).toMatch(
      /3 processes .* that have not ended; end some \(DELETE T\/processes\/\{id\}/,
    );
    // The refused spawn took no hour's place and stored nothing.
    expect(await state.getQuotaUsage(`processes/acme/${Math.floor(clock / HOUR) * HOUR}`)).toBe(3);
    expect(await state.getQuotaUsage("live-processes/acme")).toBe(3);
    // Another tenant has its own.
    const other = { ...(await bearer("other", ["read"])), "content-type": "application/json" };
    expect((await spawn("other", other)).status).toBe(201);

    const end = (id: string) => app.request(`${base}/${id}`, { method: "DELETE", headers: reader });
    expect((await end(ids[0]!)).status).toBe(204);
    expect((await app.request(`${base}/${ids[0]}`, { headers: reader })).status).toBe(404);
    const again = await end(ids[0]!);
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: "process_not_found" });
    expect(await state.getQuotaUsage("live-processes/acme")).toBe(2);
    expect((await spawn()).status).toBe(201);
    expect((await spawn()).status).toBe(429);
    // The other processes live on.
    expect((await app.request(`${base}/${ids[1]}`, { headers: reader })).status).toBe(200);
  });

  it("an MCP session is a live process: initialize past the quota answers 429; ending the session keeps its process counted until DELETE T/processes/{session id}", async () => {
    const { app, state } = await quotaApp({ VANCE_QUOTA_LIVE_PROCESSES: "1" });
    const { headers, initialize } = await mcpSessions(app);
    const first = await initialize();
    expect(first.status).toBe(200);
    const session = first.headers.get("mcp-session-id")!;
    const refused = await initialize();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "quota_exceeded", quota: "liveProcesses" });
    const ended = await app.request("/v1/tenants/acme/projects/shop/mcp", {
      method: "DELETE",
      headers: { ...headers, "mcp-session-id": session },
    });
    expect(ended.status).toBe(204);
    expect(await state.getQuotaUsage("live-processes/acme")).toBe(1);
    expect((await initialize()).status).toBe(429);
    const process = `/v1/tenants/acme/projects/shop/processes/${session}`;
    expect((await app.request(process, { method: "DELETE", headers })).status).toBe(204);
    expect(await state.getQuotaUsage("live-processes/acme")).toBe(0);
    expect((await app.request(process, { headers })).status).toBe(404);
    expect((await initialize()).status).toBe(200);
  });
});

describe("document byte quota per tenant", () => {
  it("writes count their UTF-8 bytes across layers; the write past the quota answers 429 and stores nothing; a delete or a smaller replacement frees room", async () => {
    const { app, state } = await quotaApp({ VANCE_QUOTA_DOCUMENT_MB: "1" });
    const writer = await bearer("acme", ["read", "write"]);
    const put = (path: string, body: string, project = "shop") =>
      app.request(`/v1/tenants/acme/projects/${project}/documents/${path}`, {
        method: "PUT",
        headers: { ...writer, "content-type": "text/markdown" },
        body,
      });
    const kib200 = "é".repeat(100 * 1024); // 200 KiB in UTF-8, 100 Ki characters
    for (const [i, project] of ["shop", "_tenant", "shop", "docs", "docs"].entries()) {
      expect((await put(`documents/part-${i}.md`, kib200, project)).status).toBe(201);
    }
    expect(await state.getQuotaUsage("document-bytes/acme")).toBe(5 * 200 * 1024);
    const refused = await put("documents/part-5.md", kib200);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      code: "quota_exceeded",
      quota: "documentBytes",
      limit: 1024 * 1024,
      setting: "VANCE_QUOTA_DOCUMENT_MB",
    });
    expect(
      (await app.request("/v1/tenants/acme/projects/shop/documents/documents/part-5.md", { headers: writer }))
        .status,
    ).toBe(404);
    // A replacement is charged only what it adds: the same size again fits.
    expect((await put("documents/part-0.md", kib200)).status).toBe(200);
    expect((await put("documents/part-0.md", "small")).status).toBe(200);
    expect(await state.getQuotaUsage("document-bytes/acme")).toBe(4 * 200 * 1024 + 5);
    const deleted = await app.request("/v1/tenants/acme/projects/shop/documents/documents/part-2.md", {
      method: "DELETE",
      headers: writer,
    });
    expect(deleted.status).toBe(204);
    expect(await state.getQuotaUsage("document-bytes/acme")).toBe(3 * 200 * 1024 + 5);
    expect((await put("documents/part-5.md", kib200)).status).toBe(201);
    // Tool documents count too.
    const tool = await app.request("/v1/tenants/acme/projects/shop/tools/notes", {
      method: "PUT",
      headers: { ...writer, "content-type": "application/yaml" },
      body: `type: doc_lookup\ndescription: Notes\nparameters:\n  path: documents/part-0.md\n`,
    });
    expect(tool.status).toBe(201);
    expect(await state.getQuotaUsage("document-bytes/acme")).toBeGreaterThan(4 * 200 * 1024 + 5);
  });

  it("a refused conditional write gives its charge back", async () => {
    const { app, state } = await quotaApp({});
    const writer = await bearer("acme", ["read", "write"]);
    const res = await app.request("/v1/tenants/acme/projects/shop/documents/documents/a.md", {
      method: "PUT",
      headers: { ...writer, "content-type": "text/markdown", "if-match": '"nope"' },
      body: "x".repeat(1000),
    });
    expect(res.status).toBe(412);
    expect(await state.getQuotaUsage("document-bytes/acme")).toBe(0);
  });
});

/** An OpenAPI 3 document of `paths` operations with long descriptions: ~1.1 KB each. */
function longSpec(paths: number): string {
  const doc = {
    openapi: "3.0.3",
    info: { title: "Long", version: "1" },
    servers: [{ url: "https://api.example.com" }],
    paths: Object.fromEntries(
      Array.from({ length: paths }, (_, i) => [
        `/items/${i}`,
        {
          get: {
            operationId: `getItem${i}`,
            description: `Reads item ${i}. ${"Lorem ipsum dolor sit amet. ".repeat(36)}`,
            responses: { "200": { description: "ok" } },
          },
        },
      ]),
    ),
  };
  return JSON.stringify(doc);
}

describe("document sizes: only an OpenAPI spec may be longer than an ordinary document", () => {
  it("300 KiB of markdown is refused 413 outside specs/ and 422 inside it; an OpenAPI document of the same size is stored; doc_lookup answers its first 256 Ki characters and says so", async () => {
    const { app } = await quotaApp({});
    const writer = await bearer("acme", ["read", "write"]);
    const put = (path: string, body: string, contentType: string) =>
      app.request(`/v1/tenants/acme/projects/shop/documents/${path}`, {
        method: "PUT",
        headers: { ...writer, "content-type": contentType },
        body,
      });
    const markdown = `# Notes\n${"a line of notes\n".repeat(20 * 1024)}`;
    expect(markdown.length).toBeGreaterThan(256 * 1024);
    const outside = await put("documents/big.md", markdown, "text/markdown");
    expect(outside.status).toBe(413);
    expect(await outside.json()).toMatchObject({ code: "payload_too_large" });
    const inside = await put("specs/big.md", markdown, "text/markdown");
    expect(inside.status).toBe(422);
    const problem = await inside.json();
    expect(problem).toMatchObject({ code: "validation_failed" });
    expect(problem.detail).toMatch(/only an OpenAPI 3 document may be/);
    expect(
      (await app.request("/v1/tenants/acme/projects/shop/documents/specs/big.md", { headers: writer }))
        .status,
    ).toBe(404);

    const spec = longSpec(300);
    expect(spec.length).toBeGreaterThan(300 * 1024);
    expect((await put("specs/long.json", spec, "application/json")).status).toBe(201);

    const tool = await app.request("/v1/tenants/acme/projects/shop/tools/long_spec", {
      method: "PUT",
      headers: { ...writer, "content-type": "application/yaml" },
      body: "type: doc_lookup\ndescription: The long spec\nparameters:\n  path: specs/long.json\n",
    });
    expect(tool.status).toBe(201);
    const invoked = await app.request("/v1/tenants/acme/projects/shop/tools/long_spec/invoke", {
      method: "POST",
      headers: { ...writer, "content-type": "application/json" },
      body: JSON.stringify({ params: {} }),
    });
    expect(invoked.status).toBe(200);
    const { value } = await invoked.json();
    expect(value.startsWith(spec.slice(0, 1000))).toBe(true);
    expect(value).toHaveLength(
      256 * 1024 + `\n\n[doc_lookup: cut at 262144 of ${spec.length} characters]`.length,
    );
    expect(value.endsWith(`[doc_lookup: cut at 262144 of ${spec.length} characters]`)).toBe(true);
  });
});
