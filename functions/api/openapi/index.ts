import type { Hono } from "hono";
import { generateSpecs } from "hono-openapi";
import type { OpenAPIV3_1 } from "openapi-types";
import { ProblemSchema } from "../responses";
import { withProblems } from "./describe";
import { jsonSchemaOf, RULE_COMPONENTS } from "./json-schema";

export {
  DOCUMENT_WRITE_PROBLEMS,
  describe,
  documentRequest,
  jsonRequest,
  jsonResponse,
  mediaResponse,
  type Operation,
  pathParam,
} from "./describe";

/** The OpenAPI 3.1 document of the HTTP API. */
export type OpenApiDocument = OpenAPIV3_1.Document;

/**
 * The OpenAPI document of `app`, generated from the routes' descriptions (`describe`) and the
 * valibot schemas the routes validate with (their validators, `validate.ts`); a test checks that
 * every registered route is in it.
 */
export async function openApiDocument(
  // biome-ignore lint/suspicious/noExplicitAny: any app, whatever its environment and route types
  app: Hono<any, any, any>,
  version: string,
): Promise<OpenApiDocument> {
  const document = await generateSpecs(app, {
    // `/openapi.json` is a route, not a static file.
    excludeStaticFile: false,
    // Each operation's failures are its problem+json answers (`withProblems`), not a generic 400.
    defaultValidationErrorResponse: false,
    documentation: {
      info: {
        title: "Vance Server Tools",
        version,
        description:
          "Tool registry and runtime for LLM agent engines. Errors are RFC 9457 problem+json with a stable `code`.",
      },
      security: [{ bearer: [] }],
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
        schemas: {
          Problem: jsonSchemaOf(ProblemSchema) as OpenAPIV3_1.SchemaObject,
          ...(RULE_COMPONENTS as Record<string, OpenAPIV3_1.SchemaObject>),
        },
      },
    },
  });
  // A route ending in a wildcard (`documents/*`) takes the rest of the URL as its `{path}` parameter.
  const paths = Object.entries(document.paths).map(([path, item]) => [
    path.replace(/\/\*$/, "/{path}"),
    Object.fromEntries(
      Object.entries(item ?? {}).map(([method, operation]) => [
        method,
        withProblems(operation as OpenAPIV3_1.OperationObject),
      ]),
    ),
  ]);
  return { ...document, paths: Object.fromEntries(paths) } as OpenApiDocument;
}
