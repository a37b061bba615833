/**
 * Bundles the script worker (src/script-thread.ts and what it imports, quickjs-emscripten included)
 * into one ES module, dist/script-worker.mjs: a worker thread runs plain JavaScript, whatever
 * loader the main thread has. `npm start`, `npm run bench` and the test setup build it first.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Where the bundle is written; the pool's default worker URL points here. */
export const WORKER_BUNDLE = fileURLToPath(new URL("./dist/script-worker.mjs", import.meta.url));

/** Writes the bundle (to `outfile`: a function bundle carries its own copy, see scripts/build.ts). */
export async function buildScriptWorker(outfile: string = WORKER_BUNDLE): Promise<void> {
  await buildWorkerBundle(fileURLToPath(new URL("./src/script-thread.ts", import.meta.url)), outfile);
}

/**
 * Bundles a worker thread's entry and all it imports into one ES module (the task workers too).
 * Written beside the target and renamed over it, so a thread starting meanwhile (another test
 * project building the same bundle) reads the old file or the new one, never half of one.
 */
export async function buildWorkerBundle(entry: string, outfile: string): Promise<void> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    write: false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    // Emscripten's glue names require() on paths it never takes here (the compiled module is handed in).
    banner: {
      js: "import { createRequire as __vanceRequire } from 'node:module'; const require = __vanceRequire(import.meta.url);",
    },
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  mkdirSync(dirname(outfile), { recursive: true });
  const partial = `${outfile}.${process.pid}.partial`;
  writeFileSync(partial, output.contents);
  renameSync(partial, outfile);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildScriptWorker();
