import { buildParseWorker } from "../../functions/api/parse-worker-bundle";
import { buildScriptWorker } from "../../packages/sandbox/build-worker";

/**
 * Global setup: builds the worker bundles, so every test runs the files that `npm start` and a
 * deploy ship (packages/sandbox/dist/script-worker.mjs, dist/parse-worker.mjs), fresh from the
 * sources under test.
 */
export default async function setup(): Promise<void> {
  await Promise.all([buildScriptWorker(), buildParseWorker()]);
}
