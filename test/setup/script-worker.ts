import { buildScriptWorker } from "../../packages/sandbox/build-worker";

/**
 * Global setup: builds the script worker bundle, so every test runs the file that `npm start`
 * and a deploy ship (dist/script-worker.mjs), fresh from the sources under test.
 */
export default async function setup(): Promise<void> {
  await buildScriptWorker();
}
