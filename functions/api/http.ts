import { JSON_SHAPE_LIMITS, jsonShapeProblem, VanceError, type WriteOptions } from "@vance/core";
import type { Context } from "hono";

/** Content types accepted for YAML documents (tool and catalog documents), JSON included. */
const YAML_OR_JSON_TYPES = new Set([
  "application/yaml",
  "application/x-yaml",
  "text/yaml",
  "text/x-yaml",
  "application/json",
]);

/** Refuses invalid UTF-8 instead of replacing it; `decode` without `stream` starts afresh each call. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The media type of the request without parameters, lowercased. */
export function mediaType(c: Context): string {
  return mediaTypeOf(c.req.header("content-type"));
}

/** The media type of a `content-type` header without parameters, lowercased. */
export function mediaTypeOf(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Throws 415 unless the request carries a YAML or JSON body; `what` names the document in the message. */
export function requireYamlOrJson(c: Context, what: string): string {
  const type = mediaType(c);
  if (!YAML_OR_JSON_TYPES.has(type)) {
    throw new VanceError(
      "unsupported_media_type",
      `${what} is sent as application/yaml or application/json, not '${type || "(none)"}'`,
    );
  }
  return type;
}

/** Throws 415 unless the request carries a YAML or JSON body. */
export function requireToolContentType(c: Context): string {
  return requireYamlOrJson(c, "a tool document");
}

/** Throws 415 unless the body is text a document may hold. */
export function requireDocumentContentType(c: Context): string {
  const type = mediaType(c);
  if (type.startsWith("text/") || YAML_OR_JSON_TYPES.has(type) || type === "application/javascript")
    return type;
  throw new VanceError(
    "unsupported_media_type",
    `documents are text: text/*, application/yaml, application/json or application/javascript, not '${type || "(none)"}'`,
  );
}

/** The write preconditions of the request (`If-Match`, `If-None-Match: *`). */
export function preconditions(c: Context, contentType: string): WriteOptions {
  const ifMatch = c.req.header("if-match");
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== "*") {
    throw new VanceError("invalid_precondition", "only 'If-None-Match: *' is supported on writes");
  }
  return {
    contentType,
    ...(ifMatch === undefined ? {} : { ifMatch: ifMatch.trim() }),
    ...(ifNoneMatch === undefined ? {} : { ifNoneMatch: "*" as const }),
  };
}

/**
 * The request body as UTF-8 text, never altered: bytes that are not UTF-8 are refused rather
 * than replaced by U+FFFD — 400 `invalid_json` for a JSON body (API.md), `invalid_body` for
 * YAML and other text.
 */
export async function textBody(c: Context): Promise<string> {
  const bytes = await c.req.arrayBuffer();
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    if (mediaType(c) === "application/json") {
      throw new VanceError("invalid_json", "the body is not valid UTF-8, so it is not valid JSON");
    }
    throw new VanceError("invalid_body", "the body is not valid UTF-8 text");
  }
}

/**
 * A document's body as text (tool, catalog and any other document): one sent as
 * `application/json` must be JSON — 400 `invalid_json` otherwise, rather than being read as YAML —
 * within the shape limits of {@link parseJsonText}.
 */
export async function documentText(c: Context): Promise<string> {
  const text = await textBody(c);
  if (mediaType(c) === "application/json") parseJsonText(text);
  return text;
}

/**
 * A JSON body's value: 400 `invalid_json` when it is not JSON, 413 `payload_too_large` when it
 * nests deeper or holds more values than `JSON_SHAPE_LIMITS` (judged before it is parsed: what
 * walks it afterwards must not overflow the stack or spend seconds on it).
 */
export function parseJsonText(text: string): unknown {
  const problem = jsonShapeProblem(text, JSON_SHAPE_LIMITS);
  if (problem) throw new VanceError("payload_too_large", `the body is too complex: ${problem}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VanceError("invalid_json", "the body is not valid JSON");
  }
}

/**
 * A fast route's JSON body (`fast-path.ts`): its bytes read once, refused as invalid JSON when they
 * are not valid UTF-8, then {@link parseJsonText}.
 */
export async function parseJsonBody(request: Request): Promise<unknown> {
  const bytes = await request.arrayBuffer();
  let text: string;
  try {
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new VanceError("invalid_json", "the body is not valid UTF-8, so it is not valid JSON");
  }
  return parseJsonText(text);
}
