import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { describe, expect, it } from "vitest";
import type { Claims } from "../functions/api/auth";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

/**
 * Issue 14: the model catalog over HTTP (API.md "Models and budget") — `GET /v1/models`, and
 * `PUT / DELETE /v1/models/{instance}/{file}` for platform admins: validated with lines, stored,
 * the compiled catalog rebuilt before the answer, seen by every instance's next request.
 */

type App = Awaited<ReturnType<typeof testApp>>["app"];
const ADMIN: Claims = { tenant: "*", roles: ["admin"] };

async function putDocument(
  app: App,
  path: string,
  body: string,
  claims: Claims = ADMIN,
  type = "application/yaml",
) {
  const res = await app.request(`/v1/models/${path}`, {
    method: "PUT",
    headers: { ...(await bearer(claims)), "content-type": type },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function budget(app: App, chain: string) {
  const res = await app.request(`/v1/models/budget?chain=${chain}`, {
    headers: await bearer({ tenant: "acme", roles: ["read"] }),
  });
  return (await res.json()) as { maxTools: number | null; models: { source: string }[] };
}

async function catalog(app: App) {
  const res = await app.request("/v1/models", { headers: await bearer({ tenant: "acme", roles: ["read"] }) });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    providers: { instance: string; maxTools: number | null; models: { slug: string }[] }[];
  };
}

describe("GET /v1/models", () => {
  it("answers the compiled catalog: the bundled providers sorted by instance, with wireType and maxTools", async () => {
    const { app } = await testApp();
    const { providers } = await catalog(app);
    expect(providers.map((provider) => provider.instance)).toEqual(["anthropic", "cortecs", "openai"]);
    expect(providers.find((provider) => provider.instance === "openai")).toMatchObject({
      wireType: "openai",
      maxTools: 128,
      models: [],
    });
    expect(providers.find((provider) => provider.instance === "cortecs")).toMatchObject({ maxTools: null });
  });

  it("needs the read role: 401 without a token, 403 without read", async () => {
    const { app } = await testApp();
    expect((await app.request("/v1/models")).status).toBe(401);
    const res = await app.request("/v1/models", {
      headers: await bearer({ tenant: "acme", roles: ["write"] }),
    });
    expect(res.status).toBe(403);
  });
});

describe("PUT / DELETE /v1/models/{instance}/{file}", () => {
  it("a bad document is refused with 422 and its line, and nothing is stored", async () => {
    const { app, dataDir } = await testApp();
    const bad = await putDocument(app, "cortecs/small", "maxtools: 5\nmaxTools: -1\nsize: tiny\n");
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: "validation_failed" });
    expect(bad.body.errors).toEqual([
      { path: "maxtools", message: "unknown field; did you mean 'maxTools'?", line: 1 },
      { path: "maxTools", message: "maxTools must be 0 (no limit) or more", line: 2 },
      { path: "size", message: "size must be one of small, medium, large", line: 3 },
    ]);
    const misspelt = await putDocument(app, "cortecs/_provider", "wireType: openai\nmaxtools: 5\n");
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.errors).toEqual([
      { path: "maxtools", message: "unknown field; did you mean 'maxTools'?", line: 2 },
    ]);
    const broken = await putDocument(app, "cortecs/small", "maxTools: [1\n");
    expect(broken.status).toBe(422);
    expect((broken.body.errors as { line?: number }[])[0]?.line).toBeGreaterThan(0);
    const plainKey = await putDocument(app, "cortecs/_provider", "wireType: openai\napiKey: sk-live-123\n");
    expect(plainKey.status).toBe(422);
    expect(JSON.stringify(plainKey.body.errors)).toContain("${secret:NAME}");
    expect(JSON.stringify(plainKey.body)).not.toContain("sk-live-123");
    expect(await new FsObjectStore(join(dataDir, "catalog")).get("model/cortecs/small.yaml")).toBeNull();
    expect((await budget(app, "cortecs/small")).maxTools).toBeNull();
  });

  it("a good document is stored, the catalog rebuilt, and the next budget answer reflects it (201, then 200)", async () => {
    const { app, dataDir } = await testApp();
    expect((await budget(app, "cortecs/small")).maxTools).toBeNull();
    const created = await putDocument(
      app,
      "cortecs/small",
      "# measured 2025-01\nmaxTools: 64\nsize: small\n",
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      path: "model/cortecs/small.yaml",
      provider: {
        instance: "cortecs",
        wireType: "openai",
        maxTools: null,
        models: [{ slug: "small", maxTools: 64, size: "small" }],
      },
    });
    expect(await budget(app, "cortecs/small")).toEqual({
      maxTools: 64,
      models: [{ model: "cortecs/small", maxTools: 64, source: "model" }],
    });
    const stored = await new FsObjectStore(join(dataDir, "catalog")).get("model/cortecs/small.yaml");
    expect(stored).toMatchObject({ body: "# measured 2025-01\nmaxTools: 64\nsize: small\n" });

    const replaced = await putDocument(app, "cortecs/small", "maxTools: 48\n");
    expect(replaced.status).toBe(200);
    expect((await budget(app, "cortecs/small")).maxTools).toBe(48);
    // JSON is YAML too.
    expect(
      (
        await putDocument(
          app,
          "cortecs/_provider",
          '{"wireType": "openai", "maxTools": 40}',
          ADMIN,
          "application/json",
        )
      ).status,
    ).toBe(201);
    expect((await budget(app, "cortecs/other")).maxTools).toBe(40);
  });

  it("a write on one instance is in the other instance's very next budget and manifest over the same stores", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-catalog-api-"));
    const a = await testApp({ dataDir });
    const b = await testApp({ dataDir });
    const client = await projectClient(b.app);
    const { processId } = await client.spawn({ models: ["cortecs/small"] });
    // Both instances warm, with the catalog cached.
    expect((await budget(b.app, "cortecs/small")).maxTools).toBeNull();
    expect((await client.manifest(processId)).budget.maxTools).toBeNull();
    expect((await budget(a.app, "cortecs/small")).maxTools).toBeNull();

    expect((await putDocument(a.app, "cortecs/_provider", "wireType: openai\nmaxTools: 96\n")).status).toBe(
      201,
    );
    expect((await budget(b.app, "cortecs/small")).maxTools).toBe(96);
    expect((await client.manifest(processId)).budget.maxTools).toBe(96);
    expect(
      (await catalog(b.app)).providers.find((provider) => provider.instance === "cortecs")?.maxTools,
    ).toBe(96);

    const removed = await a.app.request("/v1/models/cortecs/_provider", {
      method: "DELETE",
      headers: await bearer(ADMIN),
    });
    expect(removed.status).toBe(204);
    // The bundled cortecs provider (no maxTools) applies again.
    expect((await client.manifest(processId)).budget.maxTools).toBeNull();
  });

  it("DELETE lets the bundled document through again; a document that is not stored is 404", async () => {
    const { app } = await testApp();
    await putDocument(app, "openai/_provider", "wireType: openai\nmaxTools: 100\n");
    expect((await budget(app, "openai/gpt-4.1")).maxTools).toBe(100);
    const headers = await bearer(ADMIN);
    expect((await app.request("/v1/models/openai/_provider", { method: "DELETE", headers })).status).toBe(
      204,
    );
    expect((await budget(app, "openai/gpt-4.1")).maxTools).toBe(128);
    const again = await app.request("/v1/models/openai/_provider", { method: "DELETE", headers });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: "document_not_found" });
  });

  it.each([
    ["a tenant's admin token", 403, { tenant: "acme", roles: ["admin"] }],
    ["a platform token without admin", 403, { tenant: "*", roles: ["read", "write"] }],
  ] as [string, number, Claims][])("%s → %i, nothing stored or deleted", async (_name, status, claims) => {
    const { app } = await testApp();
    const res = await putDocument(app, "cortecs/small", "maxTools: 8\n", claims);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: "forbidden" });
    const deleted = await app.request("/v1/models/openai/_provider", {
      method: "DELETE",
      headers: await bearer(claims),
    });
    expect(deleted.status).toBe(status);
    expect((await budget(app, "cortecs/small")).maxTools).toBeNull();
    expect((await budget(app, "openai/x")).maxTools).toBe(128);
  });

  it("a bad instance or file is 400 invalid_id; a body that is not YAML or JSON is 415", async () => {
    const { app } = await testApp();
    expect((await putDocument(app, "Cortecs/small", "maxTools: 8\n")).body).toMatchObject({
      code: "invalid_id",
    });
    expect((await putDocument(app, "cortecs/_notes", "maxTools: 8\n")).body).toMatchObject({
      code: "invalid_id",
    });
    const text = await putDocument(app, "cortecs/small", "maxTools: 8\n", ADMIN, "text/plain");
    expect(text.status).toBe(415);
  });
});
