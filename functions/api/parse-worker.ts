/**
 * The task worker of the API (`TaskPool`): work whose cost grows with what a tenant or an upstream
 * sends (OpenAPI compiles, `tool_search`'s indexes, large JSON Schemas' checks and compiles) runs here, where a deadline ends it by terminating the thread. Bundled as
 * parse-worker.mjs (`npm run build:worker`, and beside each API function bundle).
 */
// First: the thread yields the CPU before the compiler, Ajv and core are evaluated.
import "@vance/sandbox/worker-priority";
import { compileOpenApi } from "@vance/adapters/openapi";
import {
  buildSearchIndex,
  type JsonSchema,
  JsonSchemaValidator,
  loadLazyEngines,
  type SearchDocument,
} from "@vance/core";
import { serveTasks } from "@vance/sandbox/serve-tasks";

// The compiler checks the operations' schemas with Ajv, which core loads on demand (issue 24's
// cold start): this thread loads it before it takes its first task.
await loadLazyEngines();
// One validator per thread: a document compiled again (a new ETag) reuses its operations' schemas.
const jsonSchemas = new JsonSchemaValidator();
serveTasks({
  openapi: (input: Parameters<typeof compileOpenApi>[0]) => compileOpenApi(input, { jsonSchemas }),
  searchIndex: (documents: readonly SearchDocument[]) => buildSearchIndex(documents),
  // A client tool's input schema: why it cannot be one, or null (JsonSchemaValidator.inputSchemaProblemsAsTenant).
  inputSchema: (schema: JsonSchema) => jsonSchemas.inputSchemaProblem(schema),
  // A large schema a call needs compiled: its validator's code, which the serving thread loads
  // (JsonSchemaValidator.compileAsTenant).
  compileSchema: (schema: JsonSchema) => jsonSchemas.compileSource(schema),
});
