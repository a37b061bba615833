import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { buildParseWorker } from "../../functions/api/parse-worker-bundle";
import { PARSE_WORKER_BUNDLE } from "../../functions/api/worker-files";
import { buildScriptWorker, WORKER_BUNDLE } from "../../packages/sandbox/build-worker";

declare global {
  /** The build this run's first global setup started; the run's teardown forgets it. */
  var vanceWorkerBundles: Promise<void> | undefined;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The bundles the build writes. */
const BUNDLES = [WORKER_BUNDLE, PARSE_WORKER_BUNDLE];
/** What the last build was made from and what it wrote (ignored by git, like the rest of node_modules). */
const STAMP = join(ROOT, "node_modules/.cache/vance/worker-bundles.json");

/**
 * What the bundles can be made from, hashed: every source file of the packages and the functions
 * (a superset of what the two entries import) and the lockfile (the dependencies bundled in).
 * Tests are left out: they are not bundled, and changing one should not rebuild.
 */
function inputsHash(): string {
  const hash = createHash("sha256");
  const files = ["package-lock.json", "packages/sandbox/build-worker.ts"];
  for (const folder of ["packages", "functions"]) {
    for (const entry of readdirSync(join(ROOT, folder), { recursive: true, encoding: "utf8" })) {
      const path = join(folder, entry);
      if (!/\.(ts|mts|js|mjs|json)$/.test(path) || path.endsWith(".test.ts")) continue;
      if (/(^|\/)(node_modules|dist)\//.test(path)) continue;
      files.push(path);
    }
  }
  for (const path of files.sort()) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(ROOT, path)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** The bundles as they are on disk, hashed; null when one is missing. */
function bundlesHash(): string | null {
  const hash = createHash("sha256");
  for (const bundle of BUNDLES) {
    try {
      hash.update(`${relative(ROOT, bundle)}\0`).update(readFileSync(bundle));
    } catch {
      return null;
    }
  }
  return hash.digest("hex");
}

function readStamp(): { inputs?: string; bundles?: string } {
  try {
    return JSON.parse(readFileSync(STAMP, "utf8")) as { inputs?: string; bundles?: string };
  } catch {
    return {};
  }
}

/**
 * Builds the bundles unless the last build was made from the same sources and its files are
 * still the ones it wrote: a run after a run that changed no source (or only tests) reuses them.
 */
async function buildWhenStale(): Promise<void> {
  const inputs = inputsHash();
  const stamp = readStamp();
  if (stamp.inputs === inputs && stamp.bundles !== undefined && stamp.bundles === bundlesHash()) return;
  await Promise.all([buildScriptWorker(), buildParseWorker()]);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, JSON.stringify({ inputs, bundles: bundlesHash() }));
}

/**
 * Global setup: builds the worker bundles, so every test runs the files that `npm start` and a
 * deploy ship (packages/sandbox/dist/script-worker.mjs, dist/parse-worker.mjs), fresh from the
 * sources under test — skipped when they are fresh already (`buildWhenStale`). Both projects set
 * it up, and `npm test` runs every project's global setup in one process before any test: the
 * second one waits for the first one's build rather than building again. The teardown forgets
 * the build, so a run that follows (watch mode) checks anew.
 */
export default async function setup(): Promise<() => void> {
  globalThis.vanceWorkerBundles ??= buildWhenStale();
  await globalThis.vanceWorkerBundles;
  return () => {
    globalThis.vanceWorkerBundles = undefined;
  };
}
