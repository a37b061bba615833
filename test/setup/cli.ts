import { buildCli } from "../../packages/cli/build";

/**
 * Global setup: bundles the CLI as `npm install` does (packages/cli/dist/vance-tools.mjs), so the
 * bin the tests run is built from the sources under test.
 */
export default async function setup(): Promise<void> {
  await buildCli();
}
