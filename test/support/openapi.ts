import { type JsonSchema, JsonSchemaValidator } from "@vance/core";

const jsonSchemas = new JsonSchemaValidator();

import type { OpenAPIV3_1 } from "openapi-types";
import openapiTS, { astToString } from "openapi-typescript";
import type { OpenApiDocument } from "../../functions/api/openapi";
import type { testApp } from "./app";

type App = Awaited<ReturnType<typeof testApp>>["app"];

/** Where the typed client's types are written (`npm run openapi:types`). */
export const OPENAPI_TYPES_FILE = "packages/client/src/openapi-types.ts";

const BANNER = `// Generated from /openapi.json by \`npm run openapi:types\`; do not edit. test/openapi.test.ts fails when stale.\n\n`;

let cached: Promise<OpenApiDocument> | undefined;

/** `/openapi.json` as the app serves it; every app has the same routes, so it is fetched once. */
export function apiDocument(app: App): Promise<OpenApiDocument> {
  cached ??= Promise.resolve(app.request("/openapi.json")).then(
    (res) => res.json() as Promise<OpenApiDocument>,
  );
  return cached;
}

/** The TypeScript types of the document (openapi-typescript), as `OPENAPI_TYPES_FILE` holds them. */
export async function openApiTypesSource(document: OpenApiDocument): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { alphabetize: true });
  return BANNER + astToString(ast);
}

/** The operation the document declares for a method and a path template, or `undefined`. */
export function operationOf(
  document: OpenApiDocument,
  method: string,
  path: string,
): OpenAPIV3_1.OperationObject | undefined {
  const item = document.paths?.[path] as Record<string, OpenAPIV3_1.OperationObject> | undefined;
  return item?.[method.toLowerCase()];
}

/** Field errors of `value` against a schema of the document (its `$ref`s resolve into the document). */
export function violations(document: OpenApiDocument, schema: unknown, value: unknown) {
  const compiled = jsonSchemas.compile({ ...(schema as JsonSchema), components: document.components });
  if (!compiled.ok) throw new Error(`the document's schema does not compile: ${compiled.message}`);
  return compiled.validate(value);
}

/** The schema of a request body or an answer for this media type, if the document declares one. */
export function schemaFor(
  content: Record<string, OpenAPIV3_1.MediaTypeObject> | undefined,
  mediaType: string,
): unknown {
  return content?.[mediaType]?.schema;
}

/** The declared answer of an operation for a status, if any. */
export function answerOf(
  operation: OpenAPIV3_1.OperationObject,
  status: number,
): OpenAPIV3_1.ResponseObject | undefined {
  return operation.responses?.[status] as OpenAPIV3_1.ResponseObject | undefined;
}

/** The declared request body schema of an operation for a media type, if any. */
export function requestSchemaOf(
  operation: OpenAPIV3_1.OperationObject | undefined,
  mediaType: string,
): unknown {
  return schemaFor((operation?.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content, mediaType);
}
