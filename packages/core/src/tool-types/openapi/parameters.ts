import * as v from "valibot";
import { MIB } from "../../cache/byte-cache";
import { documentPathProblem } from "../../ids";
import { PlainText } from "../../text";

/** OpenAPI documents larger than this (UTF-8 bytes) are refused, wherever they come from. */
export const MAX_OPENAPI_SPEC_BYTES = 32 * MIB;

/** Header names as HTTP allows them (RFC 9110 tokens). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The spec's URL when `spec` names one (https only), else null: then it is a document path. */
export function specUrl(spec: string): URL | null {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(spec)) return null;
  try {
    return new URL(spec);
  } catch {
    return null;
  }
}

/** Why `spec` is neither an https URL nor a document path, or null. */
function specProblem(spec: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) {
    const url = specUrl(spec);
    return url?.protocol === "https:" ? null : "a spec URL must be an absolute https URL";
  }
  const problem = documentPathProblem(spec);
  return problem === null ? null : `spec is neither an https URL nor a document path: ${problem}`;
}

function httpUrl(text: string): URL | null {
  const url = specUrl(text);
  return url && (url.protocol === "http:" || url.protocol === "https:") ? url : null;
}

/** The `parameters` of an `openapi` tool document. */
export const OpenApiParametersSchema = v.strictObject({
  /** A document of the cascade (`specs/pets.yaml`) or an https URL, read again after the sources' TTL. */
  spec: v.pipe(
    v.string("spec is required: a document path or an https URL"),
    v.check(
      (spec) => specProblem(spec) === null,
      (issue) => specProblem(String(issue.input)) ?? "invalid spec",
    ),
  ),
  /** Replaces the document's `servers`: every operation is sent below this URL. */
  baseUrl: v.optional(
    v.pipe(
      v.string(),
      v.check((url) => httpUrl(url) !== null, "baseUrl must be an absolute http(s) URL"),
    ),
  ),
  /** Sent with every operation; values may hold `${secret:NAME}`. */
  headers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(HEADER_NAME, "header names are HTTP tokens (letters, digits, '-', …)")),
      v.string(),
    ),
    {},
  ),
  /** Only these operations become sub-tools: operationIds, `METHOD /path`, or sub-tool op names. */
  operations: v.optional(v.array(v.pipe(v.string(), v.minLength(1, "operations entries must not be empty")))),
  /** Only operations carrying one of these OpenAPI tags become sub-tools (with `operations`: both must hold). */
  tags: v.optional(v.array(v.pipe(v.string(), v.minLength(1, "tags entries must not be empty")))),
  /** The pack's line in discovery blocks and `tool_list.packHints`. */
  promptHint: v.optional(v.pipe(v.string(), PlainText("promptHint"))),
  /** Bounds each call, and each fetch of a spec URL. */
  timeoutMs: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30_000, "timeoutMs must be at most 30000")),
    10_000,
  ),
});

export type OpenApiParameters = v.InferOutput<typeof OpenApiParametersSchema>;

/** `baseUrl` as a URL, for the write-time address check. */
export function baseUrlOf(parameters: OpenApiParameters): URL | null {
  return parameters.baseUrl === undefined ? null : httpUrl(parameters.baseUrl);
}
