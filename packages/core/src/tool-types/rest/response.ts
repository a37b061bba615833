import type { ToolOutcome } from "../../calls/built-in-tool";
import type { FieldError } from "../../errors";
import { JSON_SHAPE_LIMITS, jsonShapeProblem } from "../../json-shape";
import type { CompiledJsonSchema } from "../../validation/json-schema-validator";

/**
 * The value of a 2xx answer: JSON when labelled JSON (`ResponseParseError` when it is not),
 * else the text; checked against `responseSchema` when the tool declares one.
 */
export function responseValue(
  response: Response,
  body: string,
  responseSchema?: CompiledJsonSchema,
): ToolOutcome {
  if (isJson(response)) {
    // Checking against a schema costs per value and per schema node: a checked answer holds fewer.
    const problem = jsonShapeProblem(body, responseSchema ? CHECKED_RESPONSE_LIMITS : JSON_SHAPE_LIMITS);
    if (problem)
      return { error: "ResponseTooLarge", message: `the response is too complex to read: ${problem}` };
  }
  const value = parseBody(response, body);
  if (value === UNPARSABLE) {
    return {
      error: "ResponseParseError",
      message: `the response is labelled ${response.headers.get("content-type")} but is not valid JSON`,
    };
  }
  if (responseSchema) {
    if (!responseSchema.ok)
      return { error: "ResponseSchemaError", message: `responseSchema is ${responseSchema.message}` };
    const problems = responseSchema.validate(value);
    if (problems.length > 0) {
      return {
        error: "ResponseSchemaError",
        message: `the response does not match responseSchema: ${summarise(problems)}`,
      };
    }
  }
  return { value };
}

const UNPARSABLE = Symbol("unparsable");

/** The shape of an answer checked against `responseSchema` (up to 1,000 schema nodes each value). */
export const CHECKED_RESPONSE_LIMITS = { maxDepth: JSON_SHAPE_LIMITS.maxDepth, maxValues: 20_000 } as const;

function isJson(response: Response): boolean {
  return /^application\/([\w.-]+\+)?json\b/i.test(response.headers.get("content-type") ?? "");
}

function parseBody(response: Response, body: string): unknown {
  if (body === "") return null;
  if (!isJson(response)) return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return UNPARSABLE;
  }
}

function summarise(errors: readonly FieldError[]): string {
  const shown = errors.slice(0, 5).map((error) => `/${error.path.split(".").join("/")} ${error.message}`);
  return errors.length > shown.length
    ? `${shown.join("; ")}; and ${errors.length - shown.length} more`
    : shown.join("; ");
}
