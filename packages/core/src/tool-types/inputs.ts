import * as v from "valibot";
import type { JsonSchema } from "../json-schema";

/** The JSON types a declared tool input may have (spec §3.1). */
export const InputTypeSchema = v.picklist(
  ["string", "number", "integer", "boolean", "object", "array"],
  "input type must be one of string, number, integer, boolean, object, array",
);

/** One declared input of a tool: bound as a top-level variable in scripts, so it must be an identifier. */
export const ToolInputSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.regex(/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/, "input names are JavaScript identifiers"),
    v.check((name) => name !== "vance", "the input name 'vance' is reserved for the host object"),
  ),
  type: InputTypeSchema,
  description: v.optional(v.string()),
  required: v.optional(v.boolean(), true),
});

export type ToolInput = v.InferOutput<typeof ToolInputSchema>;

/** A list of inputs with unique names. */
export const ToolInputsSchema = v.pipe(
  v.array(ToolInputSchema),
  v.check(
    (inputs) => new Set(inputs.map((input) => input.name)).size === inputs.length,
    "input names must be unique",
  ),
);

/** The LLM-visible JSON Schema generated from declared inputs. */
export function inputsToJsonSchema(inputs: readonly ToolInput[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const input of inputs) {
    properties[input.name] = input.description
      ? { type: input.type, description: input.description }
      : { type: input.type };
  }
  const required = inputs.filter((input) => input.required).map((input) => input.name);
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** The input schema of a tool that takes no arguments. */
export const NO_INPUT_SCHEMA: JsonSchema = { type: "object", properties: {}, additionalProperties: false };
