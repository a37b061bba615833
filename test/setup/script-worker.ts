import { buildParseWorker } from "../../functions/api/parse-worker-bundle";
import { buildScriptWorker } from "../../packages/sandbox/build-worker";

declare global {
  /** The build this run's first global setup started; the run's teardown forgets it. */
  var vanceWorkerBundles: Promise<void> | undefined;
}

/**
 * Global setup: builds the worker bundles, so every test runs the files that `npm start` and a
 * deploy ship (packages/sandbox/dist/script-worker.mjs, dist/parse-worker.mjs), fresh from the
 * sources under test. Both projects set it up, and `npm test` runs every project's global setup
 * in one process before any test: the second one waits for the first one's build rather than
 * building again. The teardown forgets the build, so a run that follows (watch mode) builds anew.
 */
export default async function setup(): Promise<() => void> {
  globalThis.vanceWorkerBundles ??= Promise.all([buildScriptWorker(), buildParseWorker()]).then(
    () => undefined,
  );
  await globalThis.vanceWorkerBundles;
  return () => {
    globalThis.vanceWorkerBundles = undefined;
  };
}
