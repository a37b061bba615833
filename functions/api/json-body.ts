import { issuesToFieldErrors, VanceError } from "@vance/core";
import type { Context } from "hono";
import * as v from "valibot";
import { mediaType, parseJsonText, textBody } from "./http";

/**
 * Reads a JSON request body and validates it; 415 for other media types, 400 for bad JSON, 413
 * for JSON deeper or larger in values than `JSON_SHAPE_LIMITS`, 422 for bad shape.
 */
export async function jsonBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  if (mediaType(c) !== "application/json") {
    throw new VanceError("unsupported_media_type", "this route takes application/json");
  }
  // textBody refuses invalid UTF-8 (400 invalid_json) instead of accepting it with U+FFFD.
  const data = parseJsonText(await textBody(c));
  const result = v.safeParse(schema, data);
  if (!result.success) {
    throw new VanceError(
      "validation_failed",
      "the request body has the wrong shape",
      issuesToFieldErrors(result.issues, undefined, [], schema),
    );
  }
  return result.output;
}
