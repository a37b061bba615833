import { JsonSchemaValidator, type OpenApiCompiler } from "@vance/core";
import { compileOpenApi } from "./compile";
import type { OpenApiParserOptions } from "./parser";

/**
 * `compileOpenApi` on the calling thread, for tests of what it answers; the service runs it on a
 * task worker with a deadline.
 */
export function inProcessOpenApiCompiler(options: OpenApiParserOptions = {}): OpenApiCompiler {
  const jsonSchemas = new JsonSchemaValidator();
  return ({ tenant: _tenant, signal: _signal, ...input }) =>
    compileOpenApi(input, { ...options, jsonSchemas });
}
