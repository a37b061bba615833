#!/usr/bin/env node
// The CLI runs as plain JavaScript: `npm install` (the root's `prepare`) bundles it into dist/.
import { existsSync } from "node:fs";
import * as nodeModule from "node:module";

// Node ≥ 22.1 keeps V8's compiled code of the bundle between runs (in the OS temp directory);
// Node 20 has no compile cache, so the call is guarded.
nodeModule.enableCompileCache?.();

const bundle = new URL("../dist/vance-tools.mjs", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("vance-tools is not built: run `npm run build:cli` (npm install does it)\n");
  process.exit(1);
}
await import(bundle.href);
