import type { ToolOutcome } from "../../builtins/built-in-tool";
import type { FieldError } from "../../errors";
import type { JsonSchema } from "../../json-schema";
import { compileJsonSchema } from "../../json-schema-validator";

/**
 * The value of a 2xx answer: JSON when labelled JSON (`ResponseParseError` when it is not),
 * else the text; checked against `responseSchema` when the tool declares one.
 */
export function responseValue(response: Response, body: string, responseSchema?: JsonSchema): ToolOutcome {
  const value = parseBody(response, body);
  if (value === UNPARSABLE) {
    return {
      error: "ResponseParseError",
      message: `the response is labelled ${response.headers.get("content-type")} but is not valid JSON`,
    };
  }
  if (responseSchema) {
    const compiled = compileJsonSchema(responseSchema);
    if (!compiled.ok)
      return { error: "ResponseSchemaError", message: `responseSchema is ${compiled.message}` };
    const problems = compiled.validate(value);
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

function parseBody(response: Response, body: string): unknown {
  if (body === "") return null;
  const type = response.headers.get("content-type") ?? "";
  if (!/^application\/([\w.-]+\+)?json\b/i.test(type)) return body;
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
