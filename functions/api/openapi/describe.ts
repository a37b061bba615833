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
  /**
   * Only parameters no validator declares (a wildcard's `{path}`, ids the route looks up as they
   * come): the route's `params`/`query` validators (`validate.ts`) declare the others.
   */
  readonly parameters?: readonly OpenAPIV3_1.ParameterObject[];
  /** Only a body no `json` validator declares: a document stored as sent, the MCP messages. */
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

/**
 * A JSON body described, not validated, with `schema` (the MCP messages, which the SDK's transport
 * checks); a route that validates its body declares it with `json` of `validate.ts` instead.
 */
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

/** What a document write (a tool, or any document) can be refused with, besides the shared codes. */
export const DOCUMENT_WRITE_PROBLEMS = {
  400: ["invalid_precondition"],
  409: ["path_conflict"],
  412: ["precondition_failed"],
  422: ["validation_failed", "name_mismatch", "unknown_type", "reserved_name"],
  429: ["quota_exceeded"],
};

/** Problems any authenticated route can answer, and any route at all. */
const AUTH_PROBLEMS: Problems = {
  401: ["unauthenticated"],
  403: ["forbidden"],
  503: ["store_unavailable", "issuer_unavailable"],
};
const ANY_PROBLEMS: Problems = { 500: ["internal_error"] };
/** What reading a JSON body can answer (`json` of `validate.ts`, and any body sent as JSON). */
const JSON_BODY_PROBLEMS: Problems = {
  400: ["invalid_json"],
  413: ["payload_too_large"],
  415: ["unsupported_media_type"],
  422: ["validation_failed"],
};
/** What a path parameter breaking its rule answers (`params` of `validate.ts`). */
const PATH_PROBLEMS: Problems = { 400: ["invalid_id"] };

/**
 * Where `describe` leaves a route's own problems in its operation: the ones its input answers
 * are known only once the validators' parameters and body are merged in (`withProblems`).
 */
const PROBLEMS_KEY = "x-vance-problems";

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

function problemResponse(codes: readonly string[]): OpenAPIV3_1.ResponseObject {
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
 * own valibot schemas, converted when the document is generated; its input is described by its
 * validators (`validate.ts`).
 */
export function describe(operation: Operation): MiddlewareHandler {
  const own = mergeProblems(operation.problems, operation.body?.problems);
  return describeRoute({
    summary: operation.summary,
    ...(operation.operationId ? { operationId: operation.operationId } : {}),
    tags: [operation.tag],
    ...(operation.auth === false ? { security: [] } : {}),
    ...(operation.parameters ? { parameters: [...operation.parameters] } : {}),
    ...(operation.body ? { requestBody: { required: true, content: operation.body.content } } : {}),
    responses: { ...operation.responses },
    // An extension of the operation object (`x-…`), which hono-openapi passes through.
    ...({ [PROBLEMS_KEY]: Object.fromEntries(own) } as Record<`x-${string}`, unknown>),
  });
}

/**
 * The operation with its failures as problem+json answers, by status: its own (`describe`),
 * then what its input answers — a JSON body, a path parameter — then, unless it is public,
 * what authentication answers, and what any route can.
 */
export function withProblems(operation: OpenAPIV3_1.OperationObject): OpenAPIV3_1.OperationObject {
  const { [PROBLEMS_KEY]: own, ...rest } = operation as OpenAPIV3_1.OperationObject & {
    [PROBLEMS_KEY]?: Problems;
  };
  const body = rest.requestBody && "content" in rest.requestBody ? rest.requestBody.content : {};
  const parameters = (rest.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
  const problems = mergeProblems(
    own,
    "application/json" in body ? JSON_BODY_PROBLEMS : undefined,
    parameters.some((param) => param.in === "path") ? PATH_PROBLEMS : undefined,
    rest.security?.length === 0 ? undefined : AUTH_PROBLEMS,
    ANY_PROBLEMS,
  );
  const responses = { ...rest.responses };
  for (const [status, codes] of problems) responses[status] = problemResponse(codes);
  return { ...rest, responses };
}
