import { beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";

const T = "/v1/tenants/acme/projects/shop";
const TENANT_LAYER = "/v1/tenants/acme/projects/_tenant";

type App = Awaited<ReturnType<typeof testApp>>["app"];

const GOOD = [
  "url: https://mcp.example.com/mcp",
  "headers:",
  "  Authorization: Bearer ${secret:MCP_TOKEN}",
  "timeoutMs: 5000",
  "",
].join("\n");

async function put(app: App, path: string, body: string, base = T) {
  const res = await app.request(`${base}/documents/${path}`, {
    method: "PUT",
    headers: {
      ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
      "content-type": "application/yaml",
    },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function get(app: App, path: string) {
  const res = await app.request(`${T}/documents/${path}`, {
    headers: await bearer({ tenant: "acme", roles: ["read"] }),
  });
  return { status: res.status, text: await res.text() };
}

describe("mcp-servers/{name}.yaml is validated on write (PUT T/documents/…)", () => {
  let app: App;
  beforeAll(async () => {
    ({ app } = await testApp());
  });

  it("stores a valid server document (201, then 200) and reads it back as sent", async () => {
    const created = await put(app, "mcp-servers/jira.yaml", GOOD);
    expect(created).toMatchObject({ status: 201, body: { path: "mcp-servers/jira.yaml", layer: "project" } });
    expect((await put(app, "mcp-servers/jira.yaml", GOOD.replace("5000", "6000"))).status).toBe(200);
    expect(await get(app, "mcp-servers/jira.yaml")).toEqual({
      status: 200,
      text: GOOD.replace("5000", "6000"),
    });
    expect((await put(app, "mcp-servers/jira.yaml", GOOD, TENANT_LAYER)).status).toBe(201);
  });

  it.each([
    ["a URL that is not http(s)", "url: ftp://files.example.com/mcp\n", "url", 1],
    ["timeoutMs out of bounds", "url: https://x.example/mcp\ntimeoutMs: 999999\n", "timeoutMs", 2],
    ["an unknown field", "url: https://x.example/mcp\nretries: 3\n", "retries", 2],
    [
      "a header the transport sets",
      "url: https://x.example/mcp\nheaders:\n  mcp-session-id: x\n",
      "headers.mcp-session-id",
      3,
    ],
    ["a literal loopback address", "url: http://127.0.0.1:3001/mcp\n", "url", 1],
    ["the metadata address", "url: http://169.254.169.254/\n", "url", 1],
  ])("refuses %s with 422 and the line, and stores nothing", async (_what, body, path, line) => {
    const refused = await put(app, "mcp-servers/refused.yaml", body);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      code: "validation_failed",
      errors: expect.arrayContaining([expect.objectContaining({ path, line, message: expect.any(String) })]),
    });
    expect((await get(app, "mcp-servers/refused.yaml")).status).toBe(404);
  });

  it("refuses a path that names no server with 400 invalid_id", async () => {
    for (const path of ["mcp-servers/Jira.yaml", "mcp-servers/jira.json", "mcp-servers/team/jira.yaml"]) {
      const refused = await put(app, path, GOOD);
      expect([refused.status, refused.body.code]).toEqual([400, "invalid_id"]);
    }
  });

  it("accepts a loopback server where the network allowlist names it", async () => {
    const { app: allowing } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
    expect((await put(allowing, "mcp-servers/local.yaml", "url: http://127.0.0.1:3001/mcp\n")).status).toBe(
      201,
    );
  });
});
