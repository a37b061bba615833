import * as v from "valibot";
import { OpenJsonSchema } from "./common";
import { inputsToJsonSchema, ToolInputsSchema } from "./inputs";
import { defineToolType } from "./tool-type";

/** `rest`: a generic HTTP call with parameter mapping. */
export const RestType = defineToolType({
  typeId: "rest",
  description:
    "Calls an HTTP endpoint. {input} placeholders in the URL path, query, headers and body template are filled from the call's params; ${secret:NAME} from the function's secrets.",
  parametersSchema: v.strictObject({
    url: v.pipe(v.string(), v.regex(/^https?:\/\/[^\s]+$/, "url must be an absolute http(s) URL")),
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
  }),
  inputSchema: (parameters) => inputsToJsonSchema(parameters.inputs),
});
