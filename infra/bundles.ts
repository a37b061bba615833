import { execFileSync } from "node:child_process";
import { join } from "node:path";

/** The functions `npm run build` writes (scripts/build.ts `FUNCTIONS`), each in its own folder. */
type BuiltFunctionName = "api" | "catalog-sync" | "document-events";

// A deploy ships bundles built from the sources it deploys, never a stale dist/: the very build
// the bundle tests load (`npm run build`).
if ($cli.command !== "remove") {
  execFileSync("npm", ["run", "build"], { cwd: $cli.paths.root, stdio: "inherit" });
}

/**
 * An SST Function's code: the built folder, deployed as it is (`bundle`: SST does not bundle it
 * again), with its entry `lambda.mjs` at the root. Node 22 on arm64 (no native module is shipped).
 */
export function builtFunction(name: BuiltFunctionName) {
  return {
    bundle: join("dist", "functions", name),
    handler: "lambda.handler",
    runtime: "nodejs22.x",
    architecture: "arm64",
  } as const;
}
