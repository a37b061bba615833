import { readFileSync } from "node:fs";
import { compileErrors, validate } from "@readme/openapi-parser";
import { parseYaml } from "@vance/core";
import fc from "fast-check";
import type { OpenAPIV3_1 } from "openapi-types";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../functions/api/openapi";
import { RULES } from "../functions/api/openapi/json-schema";
import { UI_CSP } from "../functions/api/ui/routes";
import { testApp } from "./support/app";
import {
  answerOf,
  apiDocument,
  OPENAPI_TYPES_FILE,
  openApiTypesSource,
  operationOf,
  requestSchemaOf,
  schemaFor,
  violations,
} from "./support/openapi";
import { ADD_NUMBERS } from "./support/spec-examples";

const T = "/v1/tenants/{tenant}/projects/{project}";
const METHODS = ["get", "put", "post", "delete"] as const;

async function document(): Promise<OpenApiDocument> {
  const { app } = await testApp();
  return apiDocument(app);
}

function operations(doc: OpenApiDocument) {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ path, method, operation }] : [];
    }),
  );
}

/** Request bodies the test files send, by route; `accepted: false` for those they expect 422 for. */
const EXAMPLES: { route: string; mediaType: string; body: unknown; accepted: boolean; from: string }[] = [
  {
    route: `PUT ${T}/tools/{name}`,
    mediaType: "application/yaml",
    body: ADD_NUMBERS,
    accepted: true,
    from: "spec-examples",
  },
  {
    route: `PUT ${T}/tools/{name}`,
    mediaType: "application/yaml",
    body: "type: doc_lookup\ndescription: A skill tool.\nparameters: {path: documents/x.md}\n",
    accepted: true,
    from: "budget-triage",
  },
  {
    route: `PUT ${T}/tools/{name}`,
    mediaType: "application/json",
    body: { type: "doc_lookup", description: "A", parameters: { path: "documents/a.md" } },
    accepted: true,
    from: "http-api",
  },
  {
    route: `PUT ${T}/tools/{name}`,
    mediaType: "application/yaml",
    body: "description: d\n",
    accepted: false,
    from: "http-api",
  },
  {
    route: `POST ${T}/tools/{name}/invoke`,
    mediaType: "application/json",
    body: { params: {} },
    accepted: true,
    from: "call-budget",
  },
  {
    route: `POST ${T}/tools/{name}/invoke`,
    mediaType: "application/json",
    body: { params: { a: 2, b: 3 }, allowedTools: ["add_numbers"] },
    accepted: true,
    from: "invoke",
  },
  {
    route: `POST ${T}/tools/{name}/invoke`,
    mediaType: "application/json",
    body: { allowedTools: ["whoami", `a${"b".repeat(64)}`] },
    accepted: false,
    from: "processes",
  },
  {
    route: `PUT ${T}/documents/{path}`,
    mediaType: "text/markdown",
    body: "# Notes\n",
    accepted: true,
    from: "document-paths",
  },
  {
    route: `POST ${T}/recipes/resolve`,
    mediaType: "application/json",
    body: { allowedToolsAdd: ["@docs"], allowedToolsRemove: ["doc_tools_overview"] },
    accepted: true,
    from: "processes",
  },
  {
    route: `POST ${T}/recipes/resolve`,
    mediaType: "application/json",
    body: { allowedToolsAdd: ["Bad Name"] },
    accepted: false,
    from: "processes",
  },
  {
    route: `POST ${T}/processes`,
    mediaType: "application/json",
    body: { models: ["openai/gpt-4.1", "acme-gw/Llama-3.1_8B"] },
    accepted: true,
    from: "processes",
  },
  {
    route: `POST ${T}/processes`,
    mediaType: "application/json",
    body: {
      models: ["openai/gpt-4.1"],
      recipe: "writer",
      engineDefault: ["doc_a", "invoke_tool"],
      allowedToolsAdd: ["@notes", "helper_main"],
      allowedToolsDefer: ["gmail__*"],
      allowedToolsDropFirst: ["doc_*"],
      clientTools: [
        { name: "gmail__op03", description: "The gmail__op03 tool.", inputSchema: { type: "object" } },
      ],
    },
    accepted: true,
    from: "budget-triage",
  },
  {
    route: `POST ${T}/processes`,
    mediaType: "application/json",
    body: { models: ["not a model"] },
    accepted: false,
    from: "processes",
  },
  {
    route: `POST ${T}/processes`,
    mediaType: "application/json",
    body: { models: ["openai/gpt:4o"] },
    accepted: false,
    from: "processes",
  },
  {
    route: `POST ${T}/processes/{id}/invoke`,
    mediaType: "application/json",
    body: { name: "invoke_tool", params: { name: "doc_a", params: {} } },
    accepted: true,
    from: "processes",
  },
  {
    route: `POST ${T}/processes/{id}/mcp`,
    mediaType: "application/json",
    body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
    accepted: true,
    from: "mcp-served",
  },
  {
    route: `POST ${T}/mcp`,
    mediaType: "application/json",
    body: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    accepted: true,
    from: "mcp-served",
  },
  {
    route: "PUT /v1/tenants/{tenant}/secrets/{name}",
    mediaType: "application/json",
    body: { value: "second-value" },
    accepted: true,
    from: "secrets",
  },
  {
    route: "PUT /v1/tenants/{tenant}/secrets/{name}",
    mediaType: "application/json",
    body: { value: 12345 },
    accepted: false,
    from: "secrets",
  },
  {
    route: "PUT /v1/tenants/{tenant}/secrets/{name}",
    mediaType: "application/json",
    body: { value: "v", extra: "v" },
    accepted: false,
    from: "secrets",
  },
  {
    route: "POST /v1/models/observed-limits",
    mediaType: "application/json",
    body: { model: "cortecs/some-model", error: "Invalid 'tools': array too long." },
    accepted: true,
    from: "budget-triage",
  },
  {
    route: "POST /v1/models/observed-limits",
    mediaType: "application/json",
    body: { model: "cortecs/some-model" },
    accepted: false,
    from: "model-budget",
  },
  {
    route: "PUT /v1/models/{instance}/{file}",
    mediaType: "application/yaml",
    body: "# measured 2025-01\nmaxTools: 64\nsize: small\n",
    accepted: true,
    from: "model-catalog-api",
  },
  {
    route: "PUT /v1/models/{instance}/{file}",
    mediaType: "application/yaml",
    body: "wireType: openai\nbaseUrl: http://127.0.0.1:1/v1\napiKey: ${secret:FAKEAI_KEY}\n",
    accepted: true,
    from: "prompt-template",
  },
  {
    route: "PUT /v1/models/{instance}/{file}",
    mediaType: "application/yaml",
    body: "displayName: Small\nmaxTools: -1\nsize: tiny\n",
    accepted: false,
    from: "model-catalog-api",
  },
  {
    route: "POST /v1/tenants/{tenant}/projects/{project}/diagnostics/empty-response",
    mediaType: "application/json",
    body: {
      requestId: "req-user",
      messages: [
        { role: "system", content: "You help with documents." },
        { role: "user", content: "Use file_read on notes.md please." },
      ],
      offeredTools: ["doc_read", "tool_list", "tool_description"],
    },
    accepted: true,
    from: "empty-response",
  },
  {
    route: "POST /v1/tenants/{tenant}/projects/{project}/diagnostics/empty-response",
    mediaType: "application/json",
    body: { requestId: "", messages: [] },
    accepted: false,
    from: "empty-response",
  },
];

/** A YAML body is described by the schema of the document it parses to. */
function parsed(mediaType: string, body: unknown): unknown {
  if (mediaType !== "application/yaml" || typeof body !== "string") return body;
  const result = parseYaml(body);
  if (!result.ok) throw new Error("an example is not YAML");
  return result.yaml.data;
}

describe("/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document (@readme/openapi-parser, no remote references)", async () => {
    const doc = await document();
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never, { resolve: { external: false } });
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("shows POST …/processes with its request schema (models, clientTools) and its 201 answer (processId, allowedTools)", async () => {
    const doc = await document();
    const spawn = operationOf(doc, "post", `${T}/processes`)!;
    const request = requestSchemaOf(spawn, "application/json") as {
      properties: Record<string, { items?: { properties?: Record<string, unknown> } }>;
      required: string[];
    };
    expect(request.required).toEqual(["models"]);
    expect(request.properties.models?.items).toEqual({ $ref: "#/components/schemas/ModelId" });
    expect(Object.keys(request.properties.clientTools?.items?.properties ?? {})).toEqual([
      "name",
      "description",
      "inputSchema",
      "packHint",
    ]);
    const created = schemaFor(answerOf(spawn, 201)?.content, "application/json");
    expect(created).toMatchObject({
      type: "object",
      properties: {
        processId: { type: "string" },
        allowedTools: { type: "array", items: { type: "string" } },
      },
      required: ["processId", "allowedTools"],
    });
    expect(violations(doc, created, { processId: "p-1", allowedTools: ["doc_a"] })).toEqual([]);
    expect(violations(doc, created, { processId: "p-1" })).not.toEqual([]);
  });

  it("every operation declares a success answer, its failures as problem+json with their codes, and every path parameter with its rule", async () => {
    const doc = await document();
    const all = operations(doc);
    expect(all.length).toBeGreaterThan(20);
    for (const { path, method, operation } of all) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(operation.responses ?? {}).map(Number);
      expect(
        statuses.some((status) => status < 300),
        where,
      ).toBe(true);
      for (const status of statuses.filter((s) => s >= 400)) {
        const schema = schemaFor(answerOf(operation, status)?.content, "application/problem+json") as {
          allOf: unknown[];
        };
        expect(schema?.allOf?.[0], `${where} ${status}`).toEqual({ $ref: "#/components/schemas/Problem" });
        expect(schema.allOf[1], `${where} ${status}`).toMatchObject({
          properties: { code: { enum: expect.arrayContaining([expect.stringMatching(/^[a-z_]+$/)]) } },
        });
      }
      const declared = (operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        const param = declared.find((p) => p.in === "path" && p.name === name);
        expect(param, `${where} {${name}}`).toBeDefined();
        expect(JSON.stringify(param?.schema), `${where} {${name}}`).toMatch(
          /"\$ref"|"pattern"|"description"/,
        );
      }
      if (path.startsWith("/v1/") && path !== "/v1/health") {
        expect(operation.responses?.["401"], where).toBeDefined();
        expect(operation.security, where).toBeUndefined();
      }
    }
  });

  it("each route's declared request schema accepts the suite's example requests and refuses those the tests see refused", async () => {
    const doc = await document();
    const routes = new Set<string>();
    for (const example of EXAMPLES) {
      const [method, path] = example.route.split(" ") as [string, string];
      const operation = operationOf(doc, method, path);
      const schema =
        requestSchemaOf(operation, example.mediaType) ??
        requestSchemaOf(operation, `${example.mediaType.split("/")[0]}/*`);
      expect(schema, `${example.route} ${example.mediaType}`).toBeDefined();
      const wrong = violations(doc, schema, parsed(example.mediaType, example.body));
      expect(wrong.length === 0, `${example.route} (${example.from}): ${JSON.stringify(wrong)}`).toBe(
        example.accepted,
      );
      routes.add(example.route);
    }
    // Every route that takes a body has examples.
    const withBodies = operations(doc)
      .filter(({ operation }) => operation.requestBody)
      .map(({ path, method }) => `${method.toUpperCase()} ${path}`);
    expect([...routes].sort()).toEqual(withBodies.sort());
  });

  it("the JSON Schema of each id rule accepts what its valibot rule accepts (and, but for document paths, only that)", () => {
    const samples = [
      ...["", "a", "acme", "Acme", "-x", "_tenant", "a".repeat(63), "a".repeat(64), "a".repeat(65), "x y"],
      ...["doc_a", "doc__op", "doc__", "__x", "a___", "a__b__c", "a@b", "Bad Name", "9lives"],
      ...["@docs", "@Docs", "@", "doc_*", "*", "doc__*", "doc_a*", "a*b"],
      ...["openai/gpt-4.1", "openai/gpt:4o", "acme-gw/Llama-3.1_8B", "x/_provider", "a/b/c", "/x", "x/"],
      ...["documents/a.md", "a//b", "../x", "a/../b", "x".repeat(513)],
    ];
    const partial = new Set(["DocumentPath"]);
    for (const [name, [rule]] of Object.entries(RULES)) {
      const component = { $ref: `#/components/schemas/${name}` };
      const doc = { components: { schemas: { [name]: { type: "string", ...RULES[name]![1] } } } } as never;
      const agree = (text: string) => {
        const valibot = v.is(rule, text);
        const json = violations(doc, component, text).length === 0;
        return partial.has(name) ? !valibot || json : valibot === json;
      };
      for (const text of samples) expect(agree(text), `${name}: ${JSON.stringify(text)}`).toBe(true);
      fc.assert(fc.property(fc.string({ unit: fc.constantFrom(..."ab_-@*/.:Z1"), maxLength: 70 }), agree), {
        numRuns: 300,
      });
    }
  });

  it("the typed test client's types are generated from the current document", async () => {
    const generated = await openApiTypesSource(await document());
    expect(readFileSync(OPENAPI_TYPES_FILE, "utf8"), "run `npm run openapi:types`").toBe(generated);
  });
});

describe("/docs", () => {
  it("lists every route of the document in the listing's style and under its CSP, links to /ui/; /docs/ui is gone (no CDN)", async () => {
    const { app } = await testApp();
    const doc = await apiDocument(app);
    const res = await app.request("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(UI_CSP);
    const page = await res.text();
    // Its only script and style are the listing's own, from this origin.
    expect([...page.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1])).toEqual(["/ui/assets/ui.js"]);
    expect([...page.matchAll(/<link[^>]*href="([^"]+)"/g)].map((m) => m[1])).toEqual(["/ui/assets/ui.css"]);
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).toContain('<a href="/ui/">');
    for (const { path, method, operation } of operations(doc)) {
      expect(page).toContain(`<code>${method.toUpperCase()} ${path.replace(/&/g, "&amp;")}</code>`);
      expect(page).toContain(
        operation
          .summary!.replace(/&/g, "&amp;")
          .replace(/</g, "&lt;")
          .replace(/>/g, "&gt;")
          .replace(/"/g, "&quot;")
          .replace(/'/g, "&#39;"),
      );
    }
    expect((await app.request("/docs/ui")).status).toBe(404);
  });
});
