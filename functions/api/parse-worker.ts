/**
 * The task worker of the API (`TaskPool`): work whose cost grows with what a tenant or an upstream
 * sends runs here, where a deadline ends it by terminating the thread. Bundled as
 * parse-worker.mjs (`npm run build:worker`, and beside each API function bundle).
 */
import { compileOpenApi } from "@vance/adapters/openapi";
import { loadLazyEngines } from "@vance/core";
import { serveTasks } from "@vance/sandbox/serve-tasks";

// The compiler checks the operations' schemas with Ajv, which core loads on demand (issue 24's
// cold start): this thread loads it before it takes its first task.
await loadLazyEngines();
serveTasks({ openapi: compileOpenApi });
