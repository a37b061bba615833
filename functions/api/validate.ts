import {
  commaList,
  ERROR_STATUS,
  type ErrorCode,
  Errors,
  type FieldError,
  issuesToFieldErrors,
  ProjectIdSchema,
  ruleOfIssue,
  TenantIdSchema,
  VanceError,
} from "@vance/core";
import type { MiddlewareHandler } from "hono";
import { validator } from "hono-openapi";
import * as v from "valibot";
import { mediaTypeOf, parseJsonText, textBody } from "./http";
import { CONVERSION } from "./openapi/json-schema";

/**
 * A route's input, declared once: each helper is hono-openapi's `validator`, so the one valibot
 * schema both validates the request (`c.req.valid(target)` in the handler) and is what
 * `/openapi.json` shows for it. A failure is the problem the route answered before the schema
 * was its declaration: `invalid_id` for a path, the route's code for a query, `validation_failed`
 * for a JSON body.
 */

/** The conversion every schema of the document goes through (`json-schema.ts`). */
const DOCUMENTED = { options: { ...CONVERSION } };

/** The schemas of this API are valibot's: its Standard Schema issues are its own issue objects. */
const valibotIssues = (issues: readonly unknown[]) => issues as readonly v.BaseIssue<unknown>[];

/** `{tenant}`: every route under `/v1/tenants/{tenant}`. */
export const TenantPathSchema = v.object({ tenant: TenantIdSchema });

/** `{tenant}` and `{project}`: every route under `T` (API.md). */
export const ProjectPathSchema = v.object({ ...TenantPathSchema.entries, project: ProjectIdSchema });

/**
 * A comma-separated list in a query parameter (`?with=`, `?chain=`, `?add=`…): entries trimmed,
 * empty ones dropped (`commaList`). The one reading of every comma list the API takes.
 */
export function commaListQuery(description: string) {
  return v.pipe(
    v.string(),
    v.description(description),
    v.transform((text) => commaList(text)),
  );
}

/** The path's parameters; 400 `invalid_id` naming the first that breaks its rule. */
export function params<S extends v.GenericSchema>(schema: S) {
  return validator(
    "param",
    schema,
    (result) => {
      if (result.success) return;
      const issue = valibotIssues(result.error)[0];
      const key = issue?.path?.[0]?.key;
      throw Errors.invalidId(
        String(key ?? "path parameter"),
        String(issue?.input ?? ""),
        ruleOfIssue(issue?.message),
      );
    },
    DOCUMENTED,
  );
}

/** How a query that breaks its schema is refused: the route's code and status. */
export interface QueryRefusal {
  /** Its status is the code's (`ERROR_STATUS`); a 422 code lists the issues by parameter. */
  readonly code: ErrorCode;
  /** The detail; the first issue's message when absent. */
  readonly detail?: string;
}

/**
 * The query; a failure answers `refusal` (its detail the first issue's message, and the issues
 * by parameter when the code is a 422). A parameter sent twice is an array, which a string
 * schema refuses.
 */
export function query<S extends v.GenericSchema>(schema: S, refusal: QueryRefusal) {
  return validator(
    "query",
    schema,
    (result) => {
      if (result.success) return;
      const issues = valibotIssues(result.error);
      const errors: FieldError[] =
        ERROR_STATUS[refusal.code] === 422 ? issuesToFieldErrors(issues, undefined, [], schema) : [];
      throw new VanceError(refusal.code, refusal.detail ?? issues[0]?.message ?? "bad query", errors);
    },
    DOCUMENTED,
  );
}

/**
 * A JSON body: 415 for other media types, 400 `invalid_json` for bytes that are not UTF-8 or not
 * JSON, 413 for JSON deeper or larger in values than `JSON_SHAPE_LIMITS` (judged before it is
 * parsed), 422 `validation_failed` with the issues by field for the wrong shape.
 *
 * `/openapi.json` reads it as hono-openapi's `json` validator of `schema`. The body is read and
 * parsed once, here, and validated with the same schema: the validator's own reading would
 * answer 400s of its own, and it reads the bytes again through a `Response` (a JSON request
 * through all three validators measured 3.5 times one reading its input by hand).
 */
export function json<S extends v.GenericSchema<unknown, object>>(schema: S) {
  const documented = validator("json", schema, undefined, DOCUMENTED);
  const read: typeof documented = async (c, next) => {
    c.req.addValidatedData("json", validJson(schema, await jsonValue(c)));
    await next();
  };
  // Its own properties carry the validator's description for `/openapi.json`.
  return Object.assign(read, documented);
}

/** A JSON body's value as `schema` reads it, or 422 `validation_failed` with the issues by field (see `json`). */
export function validJson<S extends v.GenericSchema<unknown, object>>(
  schema: S,
  value: unknown,
): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) {
    throw new VanceError(
      "validation_failed",
      "the request body has the wrong shape",
      issuesToFieldErrors(result.issues, undefined, [], schema),
    );
  }
  return result.output;
}

/** 415 `unsupported_media_type` unless the body is sent as JSON: `json`'s first check, before the body is read. */
export function requireJsonMediaType(contentType: string | null | undefined): void {
  if (mediaTypeOf(contentType) !== "application/json") {
    throw new VanceError("unsupported_media_type", "this route takes application/json");
  }
}

/** The body's JSON value, read the API's way (see `json`). */
async function jsonValue(c: Parameters<MiddlewareHandler>[0]): Promise<unknown> {
  requireJsonMediaType(c.req.header("content-type"));
  // textBody refuses invalid UTF-8 (400 invalid_json) instead of accepting it with U+FFFD.
  return parseJsonText(await textBody(c));
}
