import { ProjectIdSchema, TenantIdSchema } from "@vance/core";
import type { MiddlewareHandler } from "hono";
import { type ContentWithResolver, type DescribeRouteOptions, describeRoute, resolver } from "hono-openapi";
import type { OpenAPIV3_1 } from "openapi-types";
import type * as v from "valibot";
import { CONVERSION, jsonSchemaOf } from "./json-schema";

/** Where problem answers point: the `Problem` component, generated from `ProblemSchema`. */
const PROBLEM_REF = "#/components/schemas/Problem";

type Responses = NonNullable<DescribeRouteOptions["responses"]>;
type Response = Responses[string];
type Problems = Readonly<Record<number, readonly string[]>>;

/** A request body and the problems reading it can answer. */
export interface RequestBody {
  readonly content: ContentWithResolver;
  readonly problems: Problems;
}

/** One route's description; the problems every route of its kind can answer are added. */
export interface Operation {
  readonly summary: string;
  readonly tag:
    | "meta"
    | "types"
    | "tools"
    | "documents"
    | "invocation"
    | "processes"
    | "insights"
    | "secrets"
    | "models"
    | "mcp"
    | "oauth";
  /** `false` for the public routes; every other route takes a bearer token (API.md "Conventions"). */
  readonly auth?: false;
  readonly parameters?: readonly OpenAPIV3_1.ParameterObject[];
  readonly body?: RequestBody;
  /** The success answers, by status. */
  readonly responses: Readonly<Record<number, Response>>;
  /** The codes of this route's own failures, by status. */
  readonly problems?: Problems;
  /** Only where the generated one would repeat another route's (`documents` and `documents/*`). */
  readonly operationId?: string;
}

/** A valibot schema as the document shows it (converted while the document is generated). */
const schemaOf = (schema: v.GenericSchema) => resolver(schema, { options: CONVERSION });

/** A JSON body validated with `schema` (the same object the route parses with). */
export function jsonRequest(schema: v.GenericSchema): RequestBody {
  return {
    content: { "application/json": { schema: schemaOf(schema) } },
    problems: {
      400: ["invalid_json"],
      413: ["payload_too_large"],
      415: ["unsupported_media_type"],
      422: ["validation_failed"],
    },
  };
}

/**
 * A body stored as sent (YAML, JSON or text). `schema`, when given, is what the parsed document
 * must satisfy; the body itself is text in any of `mediaTypes`.
 */
export function documentRequest(mediaTypes: readonly string[], schema?: v.GenericSchema): RequestBody {
  return {
    content: Object.fromEntries(
      mediaTypes.map((type) => [type, { schema: schema ? schemaOf(schema) : { type: "string" } }]),
    ),
    problems: {
      400: mediaTypes.includes("application/json") ? ["invalid_body", "invalid_json"] : ["invalid_body"],
      413: ["payload_too_large"],
      415: ["unsupported_media_type"],
    },
  };
}

/** A JSON answer of this shape. */
export function jsonResponse(description: string, schema: v.GenericSchema): Response {
  return { description, content: { "application/json": { schema: schemaOf(schema) } } };
}

/** An answer with another media type (HTML, stored document bytes). */
export function mediaResponse(description: string, mediaType: string): Response {
  return { description, content: { [mediaType]: { schema: { type: "string" } } } };
}

/** Parameter schemas are JSON Schema; openapi-types types them with its OpenAPI 3.0 schema object. */
type ParameterSchema = NonNullable<OpenAPIV3_1.ParameterObject["schema"]>;
const openApiSchemaOf = (schema: v.GenericSchema) => jsonSchemaOf(schema) as ParameterSchema;

/** A path parameter whose rule is `schema` (the id rules of `ids.ts`). */
export function pathParam(
  name: string,
  schema: v.GenericSchema | ParameterSchema,
  description?: string,
): OpenAPIV3_1.ParameterObject {
  return {
    name,
    in: "path",
    required: true,
    schema: "kind" in schema ? openApiSchemaOf(schema as v.GenericSchema) : schema,
    ...(description ? { description } : {}),
  };
}

/** A query parameter, optional unless `required`. */
export function queryParam(
  name: string,
  schema: v.GenericSchema,
  description: string,
  required = false,
): OpenAPIV3_1.ParameterObject {
  return { name, in: "query", required, description, schema: openApiSchemaOf(schema) };
}

/** `{tenant}` and `{project}`, which every route under `T` (API.md) has. */
/** What a document write (a tool, or any document) can be refused with, besides the shared codes. */
export const DOCUMENT_WRITE_PROBLEMS = {
  400: ["invalid_precondition"],
  409: ["path_conflict"],
  412: ["precondition_failed"],
  422: ["validation_failed", "name_mismatch", "unknown_type", "reserved_name"],
};

export const PROJECT_PARAMS = [pathParam("tenant", TenantIdSchema), pathParam("project", ProjectIdSchema)];

/** Problems any authenticated route can answer, and any route at all. */
const AUTH_PROBLEMS: Problems = {
  401: ["unauthenticated"],
  403: ["forbidden"],
  503: ["store_unavailable", "issuer_unavailable"],
};
const ANY_PROBLEMS: Problems = { 500: ["internal_error"] };

function mergeProblems(...all: (Problems | undefined)[]): Map<number, string[]> {
  const merged = new Map<number, string[]>();
  for (const problems of all) {
    for (const [status, codes] of Object.entries(problems ?? {})) {
      const known = merged.get(Number(status)) ?? [];
      merged.set(Number(status), [...new Set([...known, ...codes])]);
    }
  }
  return merged;
}

function problemResponse(codes: readonly string[]): Response {
  return {
    description: codes.join(" | "),
    content: {
      "application/problem+json": {
        schema: {
          allOf: [
            { $ref: PROBLEM_REF },
            { type: "object", properties: { code: { type: "string", enum: [...codes] } } },
          ],
        },
      },
    },
  };
}

/**
 * Describes a route for `/openapi.json` (hono-openapi's `describeRoute`): schemas are the route's
 * own valibot schemas, converted when the document is generated.
 */
export function describe(operation: Operation): MiddlewareHandler {
  const hasPathParams = operation.parameters?.some((param) => param.in === "path") ?? false;
  const problems = mergeProblems(
    operation.problems,
    operation.body?.problems,
    hasPathParams ? { 400: ["invalid_id"] } : undefined,
    operation.auth === false ? undefined : AUTH_PROBLEMS,
    ANY_PROBLEMS,
  );
  const responses: Responses = { ...operation.responses };
  for (const [status, codes] of problems) responses[status] = problemResponse(codes);
  return describeRoute({
    summary: operation.summary,
    ...(operation.operationId ? { operationId: operation.operationId } : {}),
    tags: [operation.tag],
    ...(operation.auth === false ? { security: [] } : {}),
    ...(operation.parameters ? { parameters: [...operation.parameters] } : {}),
    ...(operation.body ? { requestBody: { required: true, content: operation.body.content } } : {}),
    responses,
  });
}
