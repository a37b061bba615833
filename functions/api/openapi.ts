/**
 * The OpenAPI 3.1 description of the HTTP API (API.md). Kept by hand next to the routes; a
 * test checks that every registered route is described here.
 */

type Operation = {
  summary: string;
  tags: string[];
  auth?: false;
  body?: string[];
  responses: Record<string, string>;
  query?: Record<string, string>;
};

const P = "/v1/tenants/{tenant}/projects/{project}";
const problem = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };

const OPERATIONS: Record<string, Record<string, Operation>> = {
  "/v1/health": {
    get: { summary: "Liveness and version", tags: ["meta"], auth: false, responses: { 200: "ok" } },
  },
  "/openapi.json": {
    get: { summary: "This document", tags: ["meta"], auth: false, responses: { 200: "OpenAPI" } },
  },
  "/docs": {
    get: { summary: "Human-readable route list", tags: ["meta"], auth: false, responses: { 200: "HTML" } },
  },
  "/v1/types": {
    get: {
      summary: "Tool types with their parameters JSON Schema",
      tags: ["types"],
      responses: { 200: "types" },
    },
  },
  [`${P}/tools`]: {
    get: {
      summary: "The merged cascade (built-in → bundled → tenant → project), disabled removed, sorted by name",
      tags: ["tools"],
      query: { label: "only tools carrying this label" },
      responses: { 200: "{ tools: ToolSummary[] }" },
    },
  },
  [`${P}/tools/{name}`]: {
    get: {
      summary: "First hit of project → tenant → bundled → built-in",
      tags: ["tools"],
      responses: { 200: "Tool", 404: "tool_not_found | tool_disabled" },
    },
    put: {
      summary: "Create or replace the tool document of this layer (stored as sent)",
      tags: ["tools"],
      body: ["application/yaml", "application/json"],
      responses: {
        200: "replaced",
        201: "created",
        412: "precondition_failed",
        413: "payload_too_large",
        415: "unsupported_media_type",
        422: "validation_failed | name_mismatch | unknown_type",
      },
    },
    delete: {
      summary: "Delete the tool document of this layer",
      tags: ["tools"],
      responses: { 204: "deleted", 404: "tool_not_found", 412: "precondition_failed" },
    },
  },
  [`${P}/tools/{name}/invoke`]: {
    post: {
      summary:
        "Invoke a tool: { params, allowedTools? } → { value, durationMs } or { error, message, durationMs }",
      tags: ["invocation"],
      body: ["application/json"],
      responses: {
        200: "the tool's outcome",
        403: "tool_not_allowed",
        404: "tool_not_found | tool_disabled",
        422: "invalid_params",
      },
    },
  },
  [`${P}/recipes/resolve`]: {
    post: {
      summary: "(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove, @labels expanded",
      tags: ["processes"],
      body: ["application/json"],
      responses: { 200: "{ allowedTools }", 422: "validation_failed" },
    },
  },
  [`${P}/processes`]: {
    post: {
      summary: "Spawn a process: resolves the recipe once and freezes the allow set",
      tags: ["processes"],
      body: ["application/json"],
      responses: { 201: "{ processId, allowedTools }", 422: "validation_failed" },
    },
  },
  [`${P}/processes/{id}`]: {
    get: {
      summary: "The process record, activated tools included",
      tags: ["processes"],
      responses: { 200: "ProcessRecord", 404: "process_not_found" },
    },
  },
  [`${P}/processes/{id}/manifest`]: {
    get: {
      summary: "This turn's tools array (sorted), buckets, budget and discovery blocks",
      tags: ["processes"],
      query: {
        format: "openai (default) or anthropic",
        with: "comma-separated skill tools added after classification (ranked keep)",
      },
      responses: { 200: "Manifest", 404: "process_not_found", 409: "budget_floor_exceeded" },
    },
  },
  [`${P}/processes/{id}/invoke`]: {
    post: {
      summary: "Invoke inside a process: { name, params } — allow set, activation, usage; meta-tools too",
      tags: ["processes"],
      body: ["application/json"],
      responses: {
        200: "the tool's outcome",
        403: "tool_not_allowed",
        404: "process_not_found | tool_not_found",
        422: "invalid_params",
      },
    },
  },
  [`${P}/insights/tool-usage`]: {
    get: {
      summary: "Tool usage per role: calls, tool_description look-ups, last use",
      tags: ["insights"],
      responses: { 200: "{ roles: [{ role, tools: [{ name, calls, discoveryHits, lastUsedAt }] }] }" },
    },
  },
  "/v1/tenants/{tenant}/secrets": {
    get: {
      summary: "The tenant's secrets: names and write times, never values (admin)",
      tags: ["secrets"],
      responses: { 200: "{ secrets: [{ name, updatedAt }] }", 403: "forbidden" },
    },
  },
  "/v1/tenants/{tenant}/secrets/{name}": {
    put: {
      summary:
        "Create or replace a secret { value } for ${secret:NAME} in this tenant's documents (admin; NAME ^[A-Z][A-Z0-9_]{0,63}$; value at most 8 KiB)",
      tags: ["secrets"],
      body: ["application/json"],
      responses: {
        204: "stored (encrypted); the value is never returned",
        400: "invalid_id",
        403: "forbidden",
        415: "unsupported_media_type",
        422: "validation_failed",
      },
    },
    delete: {
      summary: "Delete a secret (admin)",
      tags: ["secrets"],
      responses: { 204: "deleted", 400: "invalid_id", 403: "forbidden", 404: "secret_not_found" },
    },
  },
  "/v1/models/budget": {
    get: {
      summary: "maxTools for a model chain (min over the chain, catalog and observed limits)",
      tags: ["models"],
      query: { chain: "comma-separated instance/slug ids" },
      responses: { 200: "{ maxTools, models }", 400: "invalid_model" },
    },
  },
  "/v1/models/observed-limits": {
    post: {
      summary: "Learn a model's tool limit from a provider's rejection text (admin, platform token)",
      tags: ["models"],
      body: ["application/json"],
      responses: { 200: "{ model, maxTools }", 403: "forbidden", 422: "no_limit_in_error" },
    },
  },
  [`${P}/documents/{path}`]: {
    get: {
      summary: "A document resolved through the cascade, as stored",
      tags: ["documents"],
      responses: { 200: "the stored bytes", 404: "document_not_found" },
    },
    put: {
      summary: "Create or replace a document of this layer; server-tools/ paths are validated as tools",
      tags: ["documents"],
      body: ["text/*", "application/yaml", "application/json", "application/javascript"],
      responses: {
        200: "replaced",
        201: "created",
        412: "precondition_failed",
        413: "payload_too_large",
        415: "unsupported_media_type",
      },
    },
    delete: {
      summary: "Delete a document of this layer",
      tags: ["documents"],
      responses: { 204: "deleted", 404: "document_not_found" },
    },
  },
};

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
}

/** The OpenAPI document served at `/openapi.json`. */
export function openApiDocument(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    paths[path] = {};
    for (const [method, op] of Object.entries(methods)) {
      paths[path][method] = {
        summary: op.summary,
        tags: op.tags,
        ...(op.auth === false ? { security: [] } : {}),
        parameters: [
          ...pathParameters(path),
          ...Object.entries(op.query ?? {}).map(([name, description]) => ({
            name,
            in: "query",
            required: false,
            description,
            schema: { type: "string" },
          })),
        ],
        ...(op.body
          ? {
              requestBody: {
                required: true,
                content: Object.fromEntries(op.body.map((type) => [type, { schema: { type: "string" } }])),
              },
            }
          : {}),
        responses: Object.fromEntries(
          Object.entries(op.responses).map(([status, description]) => [
            status,
            Number(status) >= 400 ? { description, content: problem } : { description },
          ]),
        ),
      };
    }
  }
  return {
    openapi: "3.1.0",
    info: { title: "Vance Server Tools", version },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: {
        Problem: {
          type: "object",
          required: ["type", "title", "status", "code"],
          properties: {
            type: { type: "string" },
            title: { type: "string" },
            status: { type: "integer" },
            detail: { type: "string" },
            code: { type: "string" },
            errors: {
              type: "array",
              items: {
                type: "object",
                properties: {
                  path: { type: "string" },
                  message: { type: "string" },
                  line: { type: "integer" },
                },
              },
            },
          },
        },
      },
    },
    paths,
  };
}

/** A small HTML page listing the routes (no external assets: it must work offline). */
export function docsPage(version: string): string {
  const rows = Object.entries(OPERATIONS)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, op]) =>
          `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(op.summary)}</td></tr>`,
      ),
    )
    .join("\n");
  return `<!doctype html><html><head><meta charset="utf-8"><title>Vance Server Tools ${escapeHtml(version)}</title></head>
<body><h1>Vance Server Tools</h1><p>Version ${escapeHtml(version)}. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
<table>${rows}</table></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);
}
