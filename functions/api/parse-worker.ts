/**
 * The task worker of the API (`TaskPool`): work whose cost grows with what a tenant or an upstream
 * sends runs here, where a deadline ends it by terminating the thread. Bundled as
 * parse-worker.mjs (`npm run build:worker`, and beside each API function bundle).
 */
import { compileOpenApi } from "@vance/adapters/openapi";
import { serveTasks } from "@vance/sandbox/serve-tasks";

serveTasks({ openapi: compileOpenApi });
