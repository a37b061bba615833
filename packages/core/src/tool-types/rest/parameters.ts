import * as v from "valibot";
import { OpenJsonSchema } from "../common";
import { ToolInputsSchema } from "../inputs";

/** The `parameters` of a `rest` tool document. */
export const RestParametersSchema = v.strictObject({
  url: v.pipe(
    v.string(),
    v.regex(
      /^https?:\/\/[^\s]+$/,
      "url must be an absolute http(s) URL; {input} placeholders and ${secret:NAME} may appear in it",
    ),
  ),
  method: v.optional(v.picklist(["GET", "POST", "PUT", "PATCH", "DELETE"]), "GET"),
  headers: v.optional(v.record(v.string(), v.string()), {}),
  query: v.optional(v.record(v.string(), v.string()), {}),
  bodyTemplate: v.optional(v.unknown()),
  responseSchema: v.optional(OpenJsonSchema),
  timeoutMs: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30_000, "timeoutMs must be at most 30000")),
    10_000,
  ),
  inputs: v.optional(ToolInputsSchema, []),
});

export type RestParameters = v.InferOutput<typeof RestParametersSchema>;
