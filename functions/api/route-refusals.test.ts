import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, closeTestApps, testApp } from "../../test/support/app";
import type { Claims } from "./auth";

/**
 * One role matrix over every operation `/openapi.json` declares (unkey's `runSharedRoleTests`):
 * no token → 401; a token of another tenant, of another project, or one limited to what an
 * engine needs (`--processes`) on a route that is not an engine's → 403. A new route is walked
 * without anyone adding it here; only whether an engine may call it is this table's to say, and
 * a route missing from it fails the test.
 */

/** The operations an engine's token (reach `processes`) may call: spawn, manifest, invoke, MCP. */
const ENGINE_OPERATIONS = new Set([
  "GET /v1/types",
  "GET /v1/types/{typeId}",
  "GET /v1/models/budget",
  "POST /v1/models/observed-limits",
  "POST /v1/tenants/{tenant}/projects/{project}/recipes/resolve",
  "POST /v1/tenants/{tenant}/projects/{project}/processes",
  "GET /v1/tenants/{tenant}/projects/{project}/processes/{id}",
  "DELETE /v1/tenants/{tenant}/projects/{project}/processes/{id}",
  "GET /v1/tenants/{tenant}/projects/{project}/processes/{id}/manifest",
  "POST /v1/tenants/{tenant}/projects/{project}/processes/{id}/invoke",
  "POST /v1/tenants/{tenant}/projects/{project}/diagnostics/empty-response",
  "POST /v1/tenants/{tenant}/projects/{project}/processes/{id}/mcp",
  "POST /v1/tenants/{tenant}/projects/{project}/mcp",
  "DELETE /v1/tenants/{tenant}/projects/{project}/mcp",
]);

/** A value for each path parameter: any well-formed one, since refusals come before look-ups. */
const PARAMETER_VALUES: Record<string, string> = {
  tenant: "acme",
  project: "hello",
  name: "add_numbers",
  id: "p-0123456789abcdef",
  path: "documents/notes.md",
  typeId: "scripted",
  instance: "openai",
  file: "gpt-4.1.yaml",
  scope: "acme",
};

interface Operation {
  readonly method: string;
  readonly template: string;
  readonly key: string;
  readonly secured: boolean;
}

const ALL_ROLES: Claims["roles"] = ["read", "write", "admin"];

let app: Awaited<ReturnType<typeof testApp>>["app"];
let operations: Operation[];

beforeAll(async () => {
  ({ app } = await testApp());
  const document = (await (await app.request("/openapi.json")).json()) as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
    security?: unknown[];
  };
  operations = Object.entries(document.paths).flatMap(([template, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      key: `${method.toUpperCase()} ${template}`,
      // An operation's own `security: []` makes it public; else the document's applies.
      secured: (operation.security ?? document.security ?? []).length > 0,
    })),
  );
});

afterAll(closeTestApps);

function urlOf(template: string, values: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name] ?? PARAMETER_VALUES[name];
    if (value === undefined) throw new Error(`no value for the path parameter {${name}} of ${template}`);
    return value;
  });
}

async function call(operation: Operation, headers: Record<string, string>, values?: Record<string, string>) {
  const withBody = operation.method === "POST" || operation.method === "PUT";
  const response = await app.request(urlOf(operation.template, values), {
    method: operation.method,
    headers: {
      ...headers,
      // MCP endpoints answer only clients that accept both of their answer forms.
      accept: "application/json, text/event-stream",
      ...(withBody ? { "content-type": "application/json" } : {}),
    },
    ...(withBody ? { body: "{}" } : {}),
  });
  return { status: response.status, body: await response.text() };
}

describe("every operation of /openapi.json refuses whom it must", () => {
  it("walks a document with the routes of every area", () => {
    const secured = operations.filter((operation) => operation.secured);
    expect(secured.length).toBeGreaterThanOrEqual(30);
    for (const key of ENGINE_OPERATIONS)
      expect(
        operations.map((operation) => operation.key),
        `${key} is no operation any more`,
      ).toContain(key);
  });

  it("no token: 401 with a bearer challenge", async () => {
    for (const operation of operations.filter((candidate) => candidate.secured)) {
      const { status, body } = await call(operation, {});
      expect(status, `${operation.key}: ${body}`).toBe(401);
    }
  });

  it("a token of another tenant: 403 on every route under a tenant", async () => {
    const other = await bearer({ tenant: "globex", roles: ALL_ROLES });
    for (const operation of operations.filter(
      (candidate) => candidate.secured && candidate.template.includes("{tenant}"),
    )) {
      const { status, body } = await call(operation, other);
      expect(status, `${operation.key}: ${body}`).toBe(403);
      expect(body, operation.key).toContain("tenant 'globex'");
    }
  });

  it("a token limited to another project: 403 on every route under a tenant", async () => {
    const elsewhere = await bearer({ tenant: "acme", project: "elsewhere", roles: ALL_ROLES });
    for (const operation of operations.filter(
      (candidate) => candidate.secured && candidate.template.includes("{tenant}"),
    )) {
      const { status, body } = await call(operation, elsewhere);
      expect(status, `${operation.key}: ${body}`).toBe(403);
      expect(body, operation.key).toContain("limited to project 'elsewhere'");
    }
  });

  it("an engine's token (--processes): 403 on every route that is not an engine's, and let through on those that are", async () => {
    const engine = await bearer({ tenant: "acme", project: "hello", roles: ALL_ROLES, reach: "processes" });
    for (const operation of operations.filter((candidate) => candidate.secured)) {
      const { status, body } = await call(operation, engine);
      if (ENGINE_OPERATIONS.has(operation.key)) {
        expect(body, operation.key).not.toContain("limited to processes");
      } else {
        expect(status, `${operation.key}: ${body}`).toBe(403);
        // A platform route, or a route of the whole tenant, refuses the token before its reach is looked at.
        expect(body, operation.key).toMatch(/limited to processes|needs a platform token|limited to project/);
      }
    }
  });
});
