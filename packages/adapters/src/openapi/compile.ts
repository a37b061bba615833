import {
  type CompiledOperations,
  JsonSchemaValidator,
  type OpenApiCompileRequest,
  readOperations,
} from "@vance/core";
import { createOpenApiParser, type OpenApiParserOptions } from "./parser";

/** What crosses to the compiler's thread: the request without its tenant and signal. */
export type OpenApiCompileInput = Omit<OpenApiCompileRequest, "tenant" | "signal">;

/** The parser's limits, and the validator that checks the operations' schemas (else one per compile). */
export interface OpenApiCompileOptions extends OpenApiParserOptions {
  readonly jsonSchemas?: JsonSchemaValidator;
}

/**
 * An OpenAPI document's operations: parsed, validated and dereferenced by `createOpenApiParser`,
 * then read by core's `readOperations` (schemas converted and checked). All of it grows with the
 * document, so the service runs it on a task worker (`functions/api/parse-worker.ts`), never on
 * the thread that serves requests. The answer is plain data.
 */
export async function compileOpenApi(
  input: OpenApiCompileInput,
  options: OpenApiCompileOptions = {},
): Promise<CompiledOperations> {
  const { jsonSchemas = new JsonSchemaValidator(), ...parserOptions } = options;
  const document = await createOpenApiParser(parserOptions)(input.text);
  return readOperations(document, {
    pack: input.pack,
    jsonSchemas,
    ...(input.specUrl === undefined ? {} : { specUrl: new URL(input.specUrl) }),
    ...(input.allow === undefined ? {} : { allow: input.allow }),
    ...(input.tags === undefined ? {} : { tags: input.tags }),
  });
}
