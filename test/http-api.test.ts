import { MemoryObjectStore } from "@vance/adapters/testing";
import { sign } from "hono/jwt";
import { beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../functions/api/auth";
import type { OpenApiDocument } from "../functions/api/openapi";
import { bearer, SECRET, testApp } from "./support/app";

const T = "/v1/tenants/acme/projects/shop";
const ADD = `# a comment that must survive
type: scripted
description: Add two numbers.
parameters:
  inputs:
    - { name: a, type: number }
    - { name: b, type: number }
  source: a + b
`;

let writer: Record<string, string>;
let reader: Record<string, string>;
let other: Record<string, string>;

beforeAll(async () => {
  writer = await bearer({ tenant: "acme", roles: ["read", "write"] });
  reader = await bearer({ tenant: "acme", roles: ["read"] });
  other = await bearer({ tenant: "globex", roles: ["read", "write"] });
});

function putYaml(
  app: Awaited<ReturnType<typeof testApp>>["app"],
  path: string,
  body: string,
  headers: Record<string, string> = {},
) {
  return app.request(path, {
    method: "PUT",
    body,
    headers: { "content-type": "application/yaml", ...writer, ...headers },
  });
}

describe("HTTP API: happy paths", () => {
  it("health answers without a token", async () => {
    const { app } = await testApp();
    const res = await app.request("/v1/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok" });
  });

  it("lists the seven tool types with JSON Schemas", async () => {
    const { app } = await testApp();
    const res = await app.request("/v1/types", { headers: reader });
    const body = (await res.json()) as { types: { typeId: string; parametersSchema: { type?: string } }[] };
    expect(body.types.map((t) => t.typeId).sort()).toEqual([
      "doc_lookup",
      "mcp",
      "mcp_server",
      "openapi",
      "prompt_template",
      "rest",
      "scripted",
    ]);
    const scripted = body.types.find((t) => t.typeId === "scripted");
    expect(scripted?.parametersSchema).toMatchObject({
      type: "object",
      properties: { timeoutMs: { maximum: 30000 } },
    });
  });

  it("answers one tool type by its id (the same as in the list), and 404 type_not_found naming the known ones", async () => {
    const { app } = await testApp();
    const all = (await (await app.request("/v1/types", { headers: reader })).json()) as {
      types: { typeId: string }[];
    };
    const one = await app.request("/v1/types/scripted", { headers: reader });
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(all.types.find((type) => type.typeId === "scripted"));
    const missing = await app.request("/v1/types/scriptd", { headers: reader });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      code: "type_not_found",
      detail: expect.stringContaining("known types: doc_lookup"),
    });
    expect((await app.request("/v1/types/scripted")).status).toBe(401);
  });

  it("creates (201), replaces (200), reads and deletes a tool; the YAML is stored as sent", async () => {
    const { app } = await testApp();
    const created = await putYaml(app, `${T}/tools/add_numbers`, ADD);
    expect(created.status).toBe(201);
    const etag = created.headers.get("etag");
    expect(etag).toBeTruthy();
    const body = (await created.json()) as { layer: string; etag: string; inputSchema: unknown };
    expect(body).toMatchObject({ name: "add_numbers", layer: "project", etag });
    expect(body.inputSchema).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    });

    const raw = await app.request(`${T}/documents/server-tools/add_numbers.yaml`, { headers: reader });
    expect(await raw.text()).toBe(ADD);

    const replaced = await putYaml(app, `${T}/tools/add_numbers`, ADD.replace("Add two", "Sum two"), {
      "if-match": etag!,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.headers.get("etag")).not.toBe(etag);

    const got = await app.request(`${T}/tools/add_numbers`, { headers: reader });
    expect(((await got.json()) as { config: { description: string } }).config.description).toBe(
      "Sum two numbers.",
    );

    const listed = (await (await app.request(`${T}/tools`, { headers: reader })).json()) as {
      tools: { name: string; layer: string }[];
    };
    expect(listed.tools.find((t) => t.name === "add_numbers")).toMatchObject({
      layer: "project",
      type: "scripted",
    });

    expect((await app.request(`${T}/tools/add_numbers`, { method: "DELETE", headers: writer })).status).toBe(
      204,
    );
    const gone = await app.request(`${T}/tools/add_numbers`, { headers: reader });
    expect(gone.status).toBe(404);
    expect(gone.headers.get("content-type")).toContain("application/problem+json");
    expect(await gone.json()).toMatchObject({ code: "tool_not_found", status: 404 });
  });

  it("accepts JSON documents", async () => {
    const { app } = await testApp();
    const res = await app.request(`${T}/tools/doc_a`, {
      method: "PUT",
      headers: { ...writer, "content-type": "application/json" },
      body: JSON.stringify({ type: "doc_lookup", description: "A", parameters: { path: "documents/a.md" } }),
    });
    expect(res.status).toBe(201);
  });

  it("filters the list by label", async () => {
    const { app } = await testApp();
    await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: a\nlabels: [x]\nparameters: {path: a.md}\n",
    );
    await putYaml(app, `${T}/tools/doc_b`, "type: doc_lookup\ndescription: b\nparameters: {path: b.md}\n");
    const res = await app.request(`${T}/tools?label=x`, { headers: reader });
    expect(((await res.json()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(["doc_a"]);
  });

  it("a disabled document answers 404 tool_disabled with its layer", async () => {
    const { app } = await testApp();
    await putYaml(
      app,
      "/v1/tenants/acme/projects/_tenant/tools/doc_a",
      "type: doc_lookup\ndescription: a\nparameters: {path: a.md}\n",
    );
    await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: a\nenabled: false\nparameters: {path: a.md}\n",
    );
    const res = await app.request(`${T}/tools/doc_a`, { headers: reader });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "tool_disabled", layer: "project" });
  });

  it("serves bundled documents and any text document per layer", async () => {
    const { app } = await testApp();
    const bundled = await app.request(`${T}/documents/documents/getting_started.md`, { headers: reader });
    expect(bundled.status).toBe(200);
    expect(bundled.headers.get("x-vance-layer")).toBe("bundled");
    expect(await bundled.text()).toContain("# Getting started");

    const put = await app.request(`${T}/documents/scripts/sum.js`, {
      method: "PUT",
      headers: { ...writer, "content-type": "application/javascript" },
      body: "a + b\n",
    });
    expect(put.status).toBe(201);
    const got = await app.request(`${T}/documents/scripts/sum.js`, { headers: reader });
    expect(got.headers.get("content-type")).toContain("javascript");
    expect(await got.text()).toBe("a + b\n");
    expect(
      (await app.request(`${T}/documents/scripts/sum.js`, { method: "DELETE", headers: writer })).status,
    ).toBe(204);
    const gone = await app.request(`${T}/documents/scripts/sum.js`, { headers: reader });
    expect(await gone.json()).toMatchObject({ code: "document_not_found" });
  });

  it("validates server-tools/ paths written as documents exactly like tools", async () => {
    const { app } = await testApp();
    const res = await app.request(`${T}/documents/server-tools/bad_one.yaml`, {
      method: "PUT",
      headers: { ...writer, "content-type": "application/yaml" },
      body: "type: teleport\ndescription: x\n",
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: "unknown_type" });
    expect((await app.request(`${T}/tools/bad_one`, { headers: reader })).status).toBe(404);
  });

  it("describes every registered route in /openapi.json", async () => {
    const { app } = await testApp();
    const doc = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
    const described = new Set(
      Object.entries(doc.paths ?? {}).flatMap(([path, methods]) =>
        Object.keys(methods ?? {}).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    // The web listing's pages (API.md "Web listing") are HTML for people, not operations of the API;
    // the development issuer's OAuth endpoints only ever refuse, in OAuth's terms (README "Identity").
    const registered = app.routes
      .filter(
        (route) =>
          route.method !== "ALL" && !route.path.startsWith("/ui") && !route.path.startsWith("/oauth/"),
      )
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{path}")}`);
    expect(registered.length).toBeGreaterThan(8);
    for (const route of registered) expect(described, route).toContain(route);
  });
});

describe("HTTP API: bad input is refused with its code and nothing is stored", () => {
  const cases: [string, string, number, string][] = [
    ["malformed YAML", "type: doc_lookup\ndescription: [oops\n", 422, "validation_failed"],
    ["missing type", "description: d\n", 422, "validation_failed"],
    ["missing description", "type: doc_lookup\nparameters: {path: a.md}\n", 422, "validation_failed"],
    ["unknown type", "type: teleport\ndescription: d\n", 422, "unknown_type"],
    [
      "name mismatch",
      "name: other_name\ntype: doc_lookup\ndescription: d\nparameters: {path: a.md}\n",
      422,
      "name_mismatch",
    ],
    [
      "bad parameters",
      "type: scripted\ndescription: d\nparameters: {inputs: [], source: x, timeoutMs: 60000}\n",
      422,
      "validation_failed",
    ],
    [
      "a document path no store can hold",
      "type: doc_lookup\ndescription: d\nparameters: {path: a//b}\n",
      422,
      "validation_failed",
    ],
    [
      "a model id the catalog cannot resolve",
      "type: prompt_template\ndescription: d\nparameters: {promptPrefix: p, model: openai/gpt:4o}\n",
      422,
      "validation_failed",
    ],
  ];
  it.each(cases)("%s", async (_label, body, status, code) => {
    const { app } = await testApp();
    const res = await putYaml(app, `${T}/tools/my_tool`, body);
    expect(res.status).toBe(status);
    const problem = (await res.json()) as { code: string; errors?: unknown[]; type: string; title: string };
    expect(problem.code).toBe(code);
    expect(problem.type).toContain(code);
    expect(problem.errors?.length).toBeGreaterThan(0);
    expect((await app.request(`${T}/tools/my_tool`, { headers: reader })).status).toBe(404);
  });

  it("reports YAML line numbers", async () => {
    const { app } = await testApp();
    const res = await putYaml(
      app,
      `${T}/tools/my_tool`,
      "type: scripted\ndescription: d\nparameters:\n  inputs: []\n  source: x\n  timeoutMs: 60000\n",
    );
    expect(await res.json()).toMatchObject({ errors: [{ path: "parameters.timeoutMs", line: 6 }] });
  });

  it.each([["With_Upper"], ["has@at"], ["pack__op"]])(
    "refuses the tool name %s in the path",
    async (name) => {
      const { app } = await testApp();
      const res = await putYaml(
        app,
        `${T}/tools/${name}`,
        "type: doc_lookup\ndescription: d\nparameters: {path: a.md}\n",
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: "invalid_id" });
    },
  );

  it.each([
    ["/v1/tenants/..%2Fother/projects/shop/tools/x"],
    ["/v1/tenants/acme/projects/..%2F..%2Fetc/tools/x"],
    ["/v1/tenants/acme/projects/Shop/tools/x"],
    [`${T}/documents/..%2F..%2Fglobex%2Fshop%2Fsecret.md`],
    [`${T}/documents/scripts/../../x.js`],
    [`${T}/documents/scripts%2F..%2F..%2Fx.js`],
  ])("refuses a smuggled path: %s", async (path) => {
    const { app } = await testApp();
    const admin = await bearer({ tenant: "*", roles: ["read", "write"] });
    const res = await app.request(path, {
      method: "PUT",
      body: "x: 1\n",
      headers: { ...admin, "content-type": "application/yaml" },
    });
    expect([400, 404]).toContain(res.status);
    const problem = (await res.json()) as { code: string };
    expect(["invalid_id", "not_found"]).toContain(problem.code);
  });

  it("refuses bodies over 256 KiB with 413", async () => {
    const { app } = await testApp();
    const body = `type: doc_lookup\ndescription: ${"x".repeat(300 * 1024)}\nparameters: {path: a.md}\n`;
    const res = await putYaml(app, `${T}/tools/big_one`, body);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "payload_too_large" });
    expect((await app.request(`${T}/tools/big_one`, { headers: reader })).status).toBe(404);
  });

  it("refuses other content types with 415", async () => {
    const { app } = await testApp();
    const res = await app.request(`${T}/tools/doc_a`, {
      method: "PUT",
      headers: { ...writer, "content-type": "text/plain" },
      body: "type: doc_lookup\ndescription: d\nparameters: {path: a.md}\n",
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: "unsupported_media_type" });
  });

  it("If-None-Match: * refuses to overwrite; a stale If-Match refuses to replace", async () => {
    const { app } = await testApp();
    const first = await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: one\nparameters: {path: a.md}\n",
    );
    const etag = first.headers.get("etag")!;
    const again = await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: two\nparameters: {path: a.md}\n",
      {
        "if-none-match": "*",
      },
    );
    expect(again.status).toBe(412);
    expect(await again.json()).toMatchObject({ code: "precondition_failed" });
    await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: three\nparameters: {path: a.md}\n",
    );
    const stale = await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: four\nparameters: {path: a.md}\n",
      {
        "if-match": etag,
      },
    );
    expect(stale.status).toBe(412);
    const staleDelete = await app.request(`${T}/tools/doc_a`, {
      method: "DELETE",
      headers: { ...writer, "if-match": etag },
    });
    expect(staleDelete.status).toBe(412);
    const got = (await (await app.request(`${T}/tools/doc_a`, { headers: reader })).json()) as {
      config: { description: string };
    };
    expect(got.config.description).toBe("three");
  });

  it("DELETE of a tool this layer lacks answers 404 even when an outer layer has it", async () => {
    const { app } = await testApp();
    const res = await app.request(`${T}/tools/doc_getting_started`, { method: "DELETE", headers: writer });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "tool_not_found" });
  });
});

describe("HTTP API: security", () => {
  it("requires a token", async () => {
    const { app } = await testApp();
    const res = await app.request(`${T}/tools`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "unauthenticated" });
  });

  it("rejects a token signed with another secret, and an expired one", async () => {
    const { app } = await testApp();
    const forged = await mintToken("another-secret-0123456789", { tenant: "acme", roles: ["read"] }, 3600);
    expect((await app.request(`${T}/tools`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(
      401,
    );
    const expired = await mintToken("test-secret-0123456789abcdef", { tenant: "acme", roles: ["read"] }, -60);
    expect(
      (await app.request(`${T}/tools`, { headers: { authorization: `Bearer ${expired}` } })).status,
    ).toBe(401);
  });

  it("refuses a correctly signed token without exp, every time", async () => {
    const { app } = await testApp();
    const forever = await sign(
      { tenant: "acme", roles: ["read"], iat: Math.floor(Date.now() / 1000) },
      SECRET,
      "HS256",
    );
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await app.request(`${T}/tools`, { headers: { authorization: `Bearer ${forever}` } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({
        code: "unauthenticated",
        detail: expect.stringContaining("exp"),
      });
    }
    const minted = await mintToken(SECRET, { tenant: "acme", roles: ["read"] }, 60);
    expect((await app.request(`${T}/tools`, { headers: { authorization: `Bearer ${minted}` } })).status).toBe(
      200,
    );
  });

  it("refuses a token once it expires, though it was accepted (and its verification remembered) before", async () => {
    // The service's clock, moved by the test: nothing waits for the token to expire.
    const clock = { ms: Date.now() };
    const { app } = await testApp({ now: () => clock.ms });
    const now = Math.floor(clock.ms / 1000);
    const token = await mintToken(
      "test-secret-0123456789abcdef",
      { tenant: "acme", roles: ["read"] },
      60,
      now,
    );
    const headers = { authorization: `Bearer ${token}` };
    expect((await app.request(`${T}/tools`, { headers })).status).toBe(200);
    clock.ms = (now + 59) * 1000;
    expect((await app.request(`${T}/tools`, { headers })).status).toBe(200);
    clock.ms = (now + 60) * 1000;
    expect((await app.request(`${T}/tools`, { headers })).status).toBe(401);
    // The same token with a signature from another secret is still refused after a valid use.
    const forged = `${token.slice(0, token.lastIndexOf(".") + 1)}${"A".repeat(43)}`;
    expect((await app.request(`${T}/tools`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(
      401,
    );
  });

  it("a token for another tenant gets 403 and sees nothing", async () => {
    const { app } = await testApp();
    await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: secret\nparameters: {path: a.md}\n",
    );
    const res = await app.request(`${T}/tools/doc_a`, { headers: other });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "forbidden" });
    const write = await putYaml(
      app,
      `${T}/tools/doc_b`,
      "type: doc_lookup\ndescription: x\nparameters: {path: a.md}\n",
      other,
    );
    expect(write.status).toBe(403);
  });

  it("a read-only token cannot write or delete", async () => {
    const { app } = await testApp();
    const res = await putYaml(
      app,
      `${T}/tools/doc_a`,
      "type: doc_lookup\ndescription: x\nparameters: {path: a.md}\n",
      reader,
    );
    expect(res.status).toBe(403);
    expect((await app.request(`${T}/tools/doc_a`, { headers: reader })).status).toBe(404);
    const del = await app.request(`${T}/documents/documents/x.md`, { method: "DELETE", headers: reader });
    expect(del.status).toBe(403);
  });

  it("a platform token (tenant '*') reaches every tenant", async () => {
    const { app } = await testApp();
    const platform = await bearer({ tenant: "*", roles: ["read"] });
    expect((await app.request(`${T}/tools`, { headers: platform })).status).toBe(200);
  });
});

describe("HTTP API: concurrency", () => {
  it("20 concurrent PUTs with the same If-Match: exactly one wins, the rest get 412, the stored document is the winner's, whole", async () => {
    const { app } = await testApp();
    const first = await putYaml(
      app,
      `${T}/tools/doc_race`,
      "type: doc_lookup\ndescription: start\nparameters: {path: a.md}\n",
    );
    const etag = first.headers.get("etag")!;
    const bodies = Array.from(
      { length: 20 },
      (_, i) =>
        `type: doc_lookup\ndescription: writer ${i} ${"y".repeat(2000 + i)}\nparameters: {path: a.md}\n`,
    );
    const answers = await Promise.all(
      bodies.map((body) => putYaml(app, `${T}/tools/doc_race`, body, { "if-match": etag })),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
    const winner = statuses.indexOf(200);
    const stored = await app.request(`${T}/documents/server-tools/doc_race.yaml`, { headers: reader });
    expect(await stored.text()).toBe(bodies[winner]);
  });
});

describe("HTTP API: documents are served inertly", () => {
  it("serves an uploaded HTML document as plain text, with nosniff (a store that keeps content types, like S3)", async () => {
    const { app } = await testApp({ documents: new MemoryObjectStore() });
    await app.request(`${T}/documents/documents/page.html`, {
      method: "PUT",
      headers: { ...writer, "content-type": "text/html" },
      body: "<script>alert(1)</script>",
    });
    const res = await app.request(`${T}/documents/documents/page.html`, { headers: reader });
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.text()).toBe("<script>alert(1)</script>");
  });
});
