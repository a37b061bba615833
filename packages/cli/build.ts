/**
 * Bundles the CLI (src/main.ts, @vance/core's sources and the libraries they use) into one plain
 * ES module, dist/vance-tools.mjs, which the bin runs: no TypeScript loader at run time, so a
 * command starts in about the time Node itself takes. The root's `prepare` (every `npm install`
 * and `npm ci`) and the test setup build it.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Where the bundle is written; bin/vance-tools.js imports it. */
export const CLI_BUNDLE = fileURLToPath(new URL("./dist/vance-tools.mjs", import.meta.url));

/** Writes the bundle to `outfile`. */
export async function buildCli(outfile: string = CLI_BUNDLE): Promise<void> {
  await build({
    entryPoints: [fileURLToPath(new URL("./src/main.ts", import.meta.url))],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Less JavaScript to parse at every start; class and error names stay readable.
    minify: true,
    keepNames: true,
    logLevel: "warning",
    // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __vanceRequire } from 'node:module'; const require = __vanceRequire(import.meta.url);",
    },
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildCli();
