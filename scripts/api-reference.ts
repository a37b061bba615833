/**
 * `npm run docs:api`: the HTTP contract in the repository, generated from `/openapi.json` as the
 * app serves it — `docs/openapi.json` verbatim and `docs/api-reference.md`, the same routes to
 * read (test/api-reference.test.ts fails when either differs from what the app serves).
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { OpenAPIV3_1 } from "openapi-types";
import type { OpenApiDocument } from "../functions/api/openapi";

export const API_JSON = fileURLToPath(new URL("../docs/openapi.json", import.meta.url));
export const API_REFERENCE = fileURLToPath(new URL("../docs/api-reference.md", import.meta.url));

const METHODS = ["get", "put", "post", "delete"] as const;
type Schema = OpenAPIV3_1.SchemaObject | OpenAPIV3_1.ReferenceObject;

interface Listed {
  readonly method: (typeof METHODS)[number];
  readonly path: string;
  readonly operation: OpenAPIV3_1.OperationObject;
}

function operationsOf(document: OpenApiDocument): Listed[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ method, path, operation }] : [];
    }),
  );
}

/** `docs/openapi.json`: the document as `/openapi.json` answers it, two-space indented. */
export function apiJson(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** A schema as one line of TypeScript-like shape: `{ name: string, labels?: string[] }`. */
export function shapeOf(schema: Schema | undefined, depth = 0): string {
  if (!schema) return "unknown";
  if ("$ref" in schema) return schema.$ref.replace("#/components/schemas/", "");
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" \\| ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.allOf) return schema.allOf.map((part) => shapeOf(part, depth)).join(" & ");
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map((part) => shapeOf(part, depth)).join(" \\| ");
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const shapes = types.map((type) => {
    if (type === "array") {
      const items = (schema as OpenAPIV3_1.ArraySchemaObject).items as Schema | undefined;
      const inner = shapeOf(items, depth);
      return /[ |&]/.test(inner) ? `(${inner})[]` : `${inner}[]`;
    }
    if (type !== "object") return type;
    const properties = Object.entries(schema.properties ?? {}) as [string, Schema][];
    if (properties.length === 0) {
      const values = schema.additionalProperties;
      return typeof values === "object" && Object.keys(values).length > 0
        ? `{ [key]: ${shapeOf(values as Schema, depth + 1)} }`
        : "object";
    }
    if (depth >= 3) return "{ … }";
    const required = new Set(schema.required ?? []);
    const fields = properties.map(
      ([name, value]) => `${name}${required.has(name) ? "" : "?"}: ${shapeOf(value, depth + 1)}`,
    );
    return `{ ${fields.join(", ")} }`;
  });
  return shapes.length > 0 ? shapes.join(" \\| ") : "unknown";
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n+/g, " ");
const code = (text: string) => `\`${text.replace(/\\\|/g, "|")}\``;

function parametersOf(operation: OpenAPIV3_1.OperationObject): string[] {
  const parameters = (operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
  if (parameters.length === 0) return [];
  return [
    "| parameter | in | required | what |",
    "| --- | --- | --- | --- |",
    ...parameters.map(
      (p) =>
        `| \`${p.name}\` | ${p.in} | ${p.required ? "yes" : "no"} | ${cell(p.description ?? shapeOf(p.schema as Schema))} |`,
    ),
    "",
  ];
}

function bodyOf(operation: OpenAPIV3_1.OperationObject): string[] {
  const body = operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
  if (!body) return [];
  return Object.entries(body.content).map(
    ([media, content]) => `Body (${code(media)}): ${code(shapeOf(content.schema as Schema))}\n`,
  );
}

function answersOf(operation: OpenAPIV3_1.OperationObject): string[] {
  const responses = Object.entries(operation.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][];
  return [
    "| status | media type | what |",
    "| --- | --- | --- |",
    ...responses.map(([status, response]) => {
      const media = Object.keys(response.content ?? {});
      const success = !status.startsWith("4") && !status.startsWith("5");
      const json = response.content?.["application/json"]?.schema as Schema | undefined;
      const shape = success && json ? ` ${code(shapeOf(json))}` : "";
      return `| ${status} | ${media.map((m) => `\`${m}\``).join(", ") || "—"} | ${cell(response.description ?? "")}${shape} |`;
    }),
    "",
  ];
}

/** `docs/api-reference.md`: every operation of the document, grouped by tag, in route order. */
export function apiReference(document: OpenApiDocument): string {
  const listed = operationsOf(document);
  const tags = [...new Set(listed.map((entry) => entry.operation.tags?.[0] ?? "other"))];
  const { title, version } = document.info;
  const lines = [
    `# ${title} HTTP API reference`,
    "",
    "<!-- Generated from /openapi.json by `npm run docs:api`; do not edit. test/api-reference.test.ts fails when stale. -->",
    "",
    `Every route of the service (version ${version}), generated from the same \`/openapi.json\` a`,
    "running server answers; the document itself is [openapi.json](openapi.json) beside this file, for",
    "client generators and OpenAPI viewers. What the routes mean, with examples, is in",
    "[the HTTP API](http-api.md). Every route but the public ones takes `Authorization: Bearer <jwt>`;",
    "failures are `application/problem+json` with the stable `code`s each answer names.",
    "",
    ...tags.map((tag) => `- [${tag}](#${tag})`),
    "",
  ];
  for (const tag of tags) {
    lines.push(`## ${tag}`, "");
    for (const { method, path, operation } of listed.filter(
      (entry) => (entry.operation.tags?.[0] ?? "other") === tag,
    )) {
      lines.push(`### \`${method.toUpperCase()} ${path}\``, "");
      const summary = cell(operation.summary ?? "").replace(/([^.])$/, "$1.");
      lines.push(operation.security?.length === 0 ? `${summary} Public: no token.` : summary, "");
      if (operation.description) lines.push(cell(operation.description), "");
      lines.push(...parametersOf(operation), ...bodyOf(operation), ...answersOf(operation));
    }
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { testApp } = await import("../test/support/app");
  const { app } = await testApp();
  const document = (await (await app.request("/openapi.json")).json()) as OpenApiDocument;
  writeFileSync(API_JSON, apiJson(document));
  writeFileSync(API_REFERENCE, apiReference(document));
  console.log(`wrote ${API_JSON} and ${API_REFERENCE}`);
  process.exit(0);
}
