import { fileURLToPath } from "node:url";

/**
 * Where `npm run build:worker` writes the API's task worker (parse-worker.ts bundled); a function
 * bundle carries its own copy and points `VANCE_PARSE_WORKER` at it.
 */
export const PARSE_WORKER_BUNDLE = fileURLToPath(new URL("../../dist/parse-worker.mjs", import.meta.url));
