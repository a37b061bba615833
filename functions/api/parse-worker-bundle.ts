/**
 * Bundles the API's task worker (parse-worker.ts) into one ES module, dist/parse-worker.mjs:
 * `npm run build:worker` (before start, test and bench) and `npm run build` (beside the function).
 */
import { fileURLToPath } from "node:url";
import { buildWorkerBundle } from "../../packages/sandbox/build-worker";
import { PARSE_WORKER_BUNDLE } from "./worker-files";

/** Writes the bundle (to `outfile`: a function bundle carries its own copy). */
export async function buildParseWorker(outfile: string = PARSE_WORKER_BUNDLE): Promise<void> {
  await buildWorkerBundle(fileURLToPath(new URL("./parse-worker.ts", import.meta.url)), outfile);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildParseWorker();
