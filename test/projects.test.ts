import { describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

const doc = "type: doc_lookup\ndescription: d\nparameters: { path: documents/a.md }\n";

describe("GET /v1/tenants/{tenant}/projects (the web listing's picker)", () => {
  it("lists the tenant's projects that hold documents, sorted, and says whether its tenant layer has any", async () => {
    const { app } = await testApp();
    const client = await projectClient(app, "acme", "web");
    for (const project of ["web", "shop", "_tenant", "a-1"]) {
      const writer = await projectClient(app, "acme", project);
      expect((await writer.call("PUT", "/tools/t", doc, "application/yaml")).status).toBe(201);
    }
    const other = await projectClient(app, "globex", "secret_plans");
    expect((await other.call("PUT", "/tools/t", doc, "application/yaml")).status).toBe(201);

    const { data, response } = await client.api.GET("/v1/tenants/{tenant}/projects", {
      params: { path: { tenant: "acme" } },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      tenant: "acme",
      projects: ["a-1", "shop", "web"],
      tenantLayer: true,
      truncated: false,
    });

    const empty = await client.api.GET("/v1/tenants/{tenant}/projects", {
      params: { path: { tenant: "acme" } },
      headers: await bearer({ tenant: "acme", roles: ["read"] }),
    });
    expect(empty.data?.projects).toHaveLength(3);
  });

  it("is tenant-scoped: another tenant's token answers 403, a platform token any tenant", async () => {
    const { app } = await testApp();
    const globex = await app.request("/v1/tenants/acme/projects", {
      headers: await bearer({ tenant: "globex", roles: ["read"] }),
    });
    expect(globex.status).toBe(403);
    const platform = await app.request("/v1/tenants/acme/projects", {
      headers: await bearer({ tenant: "*", roles: ["read"] }),
    });
    expect(await platform.json()).toEqual({
      tenant: "acme",
      projects: [],
      tenantLayer: false,
      truncated: false,
    });
    expect((await app.request("/v1/tenants/acme/projects")).status).toBe(401);
  });
});
