import { Ajv, type ValidateFunction } from "ajv";
import type { FieldError } from "./errors";
import type { JsonSchema } from "./json-schema";

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();
/** Distinct schemas kept compiled; tool schemas are few per instance. */
const MAX_COMPILED = 2048;

/**
 * Checks a value against a JSON Schema; compiled validators are cached by the schema's JSON
 * text, so a warm instance compiles each tool's schema once. Returns the failures, or `[]`.
 */
export function validateJsonSchema(schema: JsonSchema, value: unknown): FieldError[] {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => {
    const path = error.instancePath.split("/").filter(Boolean);
    const missing = (error.params as { missingProperty?: string; additionalProperty?: string }) ?? {};
    if (missing.missingProperty) path.push(missing.missingProperty);
    if (missing.additionalProperty) path.push(missing.additionalProperty);
    return { path: path.join("."), message: error.message ?? "is invalid" };
  });
}
