import { loadBundledDocuments } from "@vance/adapters";
import { MemoryObjectStore } from "@vance/adapters/testing";
import {
  assertDocumentPath,
  assertProjectId,
  assertTenantId,
  assertToolName,
  builtInToolTypes,
  createNetworkPolicy,
  DocumentCascade,
  META_TOOLS,
  parseToolDocument,
  ServerToolService,
  ToolTypeRegistry,
  UNBINDABLE_INPUT_NAMES,
  VanceError,
  whoami,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { bearer, testApp } from "./support/app";

// Property-based suites (issue 9): no input crashes the parser, the id rules or the cascade, and
// what the service sends to models always has the providers' tool shape. Run counts are fixed so
// the suite stays well under a minute; a failure prints its seed and the shrunk counterexample.

const RUNS = { numRuns: 300 } as const;
const HTTP_RUNS = { numRuns: 60 } as const;

const registry = new ToolTypeRegistry(builtInToolTypes(), { networkPolicy: createNetworkPolicy([]) });
const NAME = /^[a-z][a-z0-9_]{0,40}$/;
const toolName = fc.stringMatching(NAME).filter((name) => !name.includes("__"));
const TYPE_IDS = builtInToolTypes().map((type) => type.typeId);

/** Anything a client may send as a document: text, JSON, and YAML of random values near the schema. */
const documentText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 400 }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc
    .record(
      {
        type: fc.oneof(fc.constantFrom(...TYPE_IDS), fc.string()),
        description: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        enabled: fc.oneof(fc.boolean(), fc.string()),
        primary: fc.oneof(fc.boolean(), fc.integer()),
        labels: fc.oneof(fc.array(fc.string()), fc.string()),
        name: fc.oneof(toolName, fc.string()),
        parameters: fc.jsonValue({ maxDepth: 4 }),
      },
      { requiredKeys: [] },
    )
    .map((record) => toYaml(record)),
);

function expectDomainRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(VanceError);
  const status = (error as VanceError).status;
  expect(status).toBeGreaterThanOrEqual(400);
  expect(status).toBeLessThan(500);
}

describe("the configuration parser", () => {
  it("answers every document with a configuration or a 4xx domain error, never a crash", () => {
    fc.assert(
      fc.property(documentText, toolName, (text, name) => {
        const result = parseToolDocument(text, name, registry);
        if (result.ok) {
          expect(result.config.name).toBe(name);
        } else {
          expectDomainRefusal(result.error);
          for (const field of result.error.errors) expect(typeof field.path).toBe("string");
        }
      }),
      RUNS,
    );
  });

  it("accepts every well-formed scripted tool and keeps what it says", () => {
    const inputs = fc.uniqueArray(
      fc.record({
        name: fc
          .stringMatching(/^[a-z_][a-z0-9_]{0,20}$/)
          // Identifiers in form that no script can bind (`if`, `new`, …) are refused by design.
          .filter((name) => name !== "vance" && !UNBINDABLE_INPUT_NAMES.has(name)),
        type: fc.constantFrom("string", "number", "integer", "boolean", "object", "array"),
        description: fc.string({ maxLength: 50 }),
      }),
      { selector: (input) => input.name, maxLength: 6 },
    );
    fc.assert(
      fc.property(
        toolName,
        fc.string({ minLength: 1, maxLength: 80 }).filter((text) => text.trim() === text && text !== ""),
        inputs,
        (name, description, declared) => {
          const text = toYaml({
            type: "scripted",
            description,
            parameters: { inputs: declared, source: "1" },
          });
          const result = parseToolDocument(text, name, registry);
          expect(result.ok).toBe(true);
          if (result.ok) {
            expect(result.config.description).toBe(description);
            expect(result.config.parameters.inputs).toHaveLength(declared.length);
          }
        },
      ),
      RUNS,
    );
  });
});

describe("ids and paths", () => {
  const text = fc.oneof(
    fc.string({ unit: "binary", maxLength: 80 }),
    fc.stringMatching(/^[a-zA-Z0-9_./-]{0,60}$/),
    fc
      .array(fc.constantFrom("a", "..", ".", "", "b.md", "x y", "%2e", "\\"), { maxLength: 6 })
      .map((parts) => parts.join("/")),
  );

  it("either accept a value or refuse it with invalid_id", () => {
    for (const assert of [assertTenantId, assertProjectId, assertToolName, assertDocumentPath]) {
      fc.assert(
        fc.property(text, (value) => {
          try {
            assert(value);
          } catch (error) {
            expectDomainRefusal(error);
            expect((error as VanceError).code).toBe("invalid_id");
          }
        }),
        RUNS,
      );
    }
  });

  it("build object keys that stay inside their tenant and project prefix", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/), text, (tenant, path) => {
        let key: string;
        try {
          key = DocumentCascade.key(tenant, "p", path);
        } catch (error) {
          expectDomainRefusal(error);
          return;
        }
        expect(key.startsWith(`${tenant}/p/`)).toBe(true);
        const segments = key.split("/");
        expect(segments.every((segment) => segment !== "" && segment !== "." && segment !== "..")).toBe(true);
      }),
      RUNS,
    );
  });

  it("never answer 500 over HTTP, whatever the path", async () => {
    const { app } = await testApp();
    const headers = await bearer({ tenant: "*", roles: ["read", "write"] });
    const segment = fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }).map((value) => encodeURIComponent(value)),
      fc.constantFrom(
        "..",
        ".",
        "%2e%2e",
        "server-tools",
        "SERVER-TOOLS",
        "_tenant",
        "a.yaml",
        "",
        "x.vance-tmp",
        "a",
        "b.md",
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), async (segments) => {
        const path = `/v1/tenants/${segments[0]}/projects/p/documents/${segments.slice(1).join("/")}`;
        for (const method of ["GET", "PUT", "DELETE"]) {
          const res = await app.request(path, {
            method,
            headers: { ...headers, "content-type": "text/plain" },
            ...(method === "PUT" ? { body: "hello" } : {}),
          });
          expect(res.status, `${method} ${path}`).toBeLessThan(500);
        }
      }),
      HTTP_RUNS,
    );
  });
});

/** The shapes OpenAI's and Anthropic's APIs accept for one tool. */
const PROVIDER_TOOL_NAME = "^[a-zA-Z0-9_-]{1,64}$";
const OBJECT_SCHEMA = {
  type: "object",
  required: ["type"],
  properties: { type: { const: "object" }, properties: { type: "object" }, required: { type: "array" } },
};
const OpenAiTool = registry.environment.jsonSchemas.compile({
  type: "object",
  required: ["type", "function"],
  additionalProperties: false,
  properties: {
    type: { const: "function" },
    function: {
      type: "object",
      required: ["name", "parameters"],
      additionalProperties: false,
      properties: {
        name: { type: "string", pattern: PROVIDER_TOOL_NAME },
        description: { type: "string" },
        parameters: OBJECT_SCHEMA,
      },
    },
  },
});
const AnthropicTool = registry.environment.jsonSchemas.compile({
  type: "object",
  required: ["name", "input_schema"],
  additionalProperties: false,
  properties: {
    name: { type: "string", pattern: PROVIDER_TOOL_NAME },
    description: { type: "string" },
    input_schema: OBJECT_SCHEMA,
  },
});

describe("wire formats", () => {
  it("every tool of every manifest has OpenAI's and Anthropic's tool shape", async () => {
    if (!OpenAiTool.ok || !AnthropicTool.ok) throw new Error("the provider schemas must compile");
    const { app } = await testApp();
    const headers = {
      ...(await bearer({ tenant: "acme", roles: ["read", "write"] })),
      "content-type": "application/json",
    };
    const base = "/v1/tenants/acme/projects/wire";
    const inputs = fc.uniqueArray(
      fc.record({
        name: fc.stringMatching(/^[A-Za-z_$][A-Za-z0-9_$]{0,20}$/).filter((name) => name !== "vance"),
        type: fc.constantFrom("string", "number", "integer", "boolean", "object", "array"),
        description: fc.string({ maxLength: 40 }),
        required: fc.boolean(),
      }),
      { selector: (input) => input.name, maxLength: 5 },
    );
    const configured = fc.uniqueArray(
      fc.record({
        name: toolName,
        description: fc.string({ minLength: 1, maxLength: 60 }).filter((text) => text.trim() !== ""),
        inputs,
      }),
      {
        selector: (tool) => tool.name,
        maxLength: 4,
      },
    );
    const client = fc.uniqueArray(
      fc.record({
        name: toolName.map((name) => `client_${name}`.slice(0, 60)),
        description: fc.string({ minLength: 1, maxLength: 60 }),
        inputSchema: fc.constantFrom<Record<string, unknown>>(
          { type: "object" },
          { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
          { type: "object", properties: { n: { type: "integer", minimum: 0 } } },
          { type: "string" },
          { properties: { q: { type: "string" } } },
          { type: ["object", "null"] },
        ),
      }),
      { selector: (tool) => tool.name, maxLength: 3 },
    );
    await fc.assert(
      fc.asyncProperty(configured, client, async (tools, clientTools) => {
        for (const tool of tools) {
          const yaml = toYaml({
            type: "scripted",
            description: tool.description,
            parameters: { inputs: tool.inputs, source: "1" },
          });
          const put = await app.request(`${base}/tools/${tool.name}`, {
            method: "PUT",
            headers: { ...headers, "content-type": "application/yaml" },
            body: yaml,
          });
          expect(put.status, await put.clone().text()).toBeLessThan(300);
        }
        const spawned = await app.request(`${base}/processes`, {
          method: "POST",
          headers,
          body: JSON.stringify({
            allowedToolsAdd: ["@docs", ...tools.map((tool) => tool.name)],
            models: ["anthropic/claude-sonnet-4"],
            clientTools,
          }),
        });
        // A client tool whose schema is no object schema could never be sent: refused at spawn.
        if (clientTools.some((tool) => tool.inputSchema.type !== "object")) {
          expect(spawned.status, await spawned.clone().text()).toBe(422);
          return;
        }
        expect(spawned.status, await spawned.clone().text()).toBe(201);
        const { processId } = (await spawned.json()) as { processId: string };
        for (const [format, shape] of [
          ["openai", OpenAiTool],
          ["anthropic", AnthropicTool],
        ] as const) {
          const res = await app.request(`${base}/processes/${processId}/manifest?format=${format}`, {
            headers,
          });
          expect(res.status).toBe(200);
          const manifest = (await res.json()) as { tools: unknown[] };
          expect(manifest.tools.length).toBeGreaterThan(0);
          for (const wire of manifest.tools) expect(shape.validate(wire), JSON.stringify(wire)).toEqual([]);
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe("the cascade", () => {
  type Doc = { enabled: boolean; label: string };
  const BUNDLED = ["doc_getting_started", "doc_tools_overview"];
  const BUILT_IN = ["whoami", "invoke_tool"];
  const FLOOR = ["tool_list"];
  const names = fc.constantFrom("alpha", "beta", "gamma", ...BUNDLED, ...BUILT_IN, ...FLOOR);
  const layer = fc.dictionary(names, fc.record({ enabled: fc.boolean(), label: fc.constantFrom("x", "y") }), {
    maxKeys: 6,
  });

  it("lookup and listAll agree with a reference model of the layers", async () => {
    const bundled = loadBundledDocuments(DEFAULTS_DIR);
    await fc.assert(
      fc.asyncProperty(layer, layer, async (projectDocs, tenantDocs) => {
        const store = new MemoryObjectStore();
        const write = (prefix: string, docs: Record<string, Doc>) =>
          Promise.all(
            Object.entries(docs).map(([name, doc]) =>
              store.put(
                `${prefix}/server-tools/${name}.yaml`,
                toYaml({
                  type: "doc_lookup",
                  description: `${prefix} ${name}`,
                  enabled: doc.enabled,
                  labels: [doc.label],
                  parameters: { path: "documents/x.md" },
                }),
              ),
            ),
          );
        await write("t/p", projectDocs);
        await write("t/_tenant", tenantDocs);
        const tools = new ServerToolService(new DocumentCascade(store, bundled), registry, [
          whoami,
          ...META_TOOLS,
        ]);

        // The reference (spec §4): a floor name is reserved (no document replaces it); otherwise
        // the innermost layer that has a document decides — built-ins last — and disabled hides it.
        const winner = (name: string): { layer: string; enabled: boolean } | null => {
          if (FLOOR.includes(name)) return { layer: "builtin", enabled: true };
          if (projectDocs[name]) return { layer: "project", enabled: projectDocs[name].enabled };
          if (tenantDocs[name]) return { layer: "tenant", enabled: tenantDocs[name].enabled };
          if (BUNDLED.includes(name)) return { layer: "bundled", enabled: true };
          if (BUILT_IN.includes(name)) return { layer: "builtin", enabled: true };
          return null;
        };
        const listed = new Map(
          (await (await tools.snapshot("t", "p")).tools()).map((tool) => [tool.name, tool.layer]),
        );
        for (const name of ["alpha", "beta", "gamma", ...BUNDLED, ...BUILT_IN, ...FLOOR]) {
          const expected = winner(name);
          const found = await (await tools.snapshot("t", "p")).lookup(name);
          if (expected === null) {
            expect(found.status, name).toBe("not_found");
            expect(listed.has(name)).toBe(false);
          } else if (!expected.enabled) {
            expect(found).toEqual({ status: "disabled", layer: expected.layer });
            expect(listed.has(name)).toBe(false);
          } else {
            expect(found.status === "found" && found.tool.layer, name).toBe(expected.layer);
            expect(listed.get(name), name).toBe(expected.layer);
          }
        }
        for (const name of ["tool_list", "tool_description"]) expect(listed.get(name)).toBe("builtin");
      }),
      { numRuns: 150 },
    );
  });
});
