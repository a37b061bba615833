/**
 * `npm run build`: the deployable function bundles. Infra deploys these folders as they are (each
 * is an SST Function's `bundle`), and test/bundle-*.test.ts load them, so what the tests run is
 * what ships:
 *
 *   dist/functions/api/               lambda.mjs, chunks/, script-worker.mjs, parse-worker.mjs, quickjs.wasm, defaults/
 *   dist/functions/catalog-sync/      lambda.mjs, chunks/, defaults/catalog/
 *   dist/functions/document-events/   lambda.mjs, chunks/
 *
 * ESM for Lambda's Node 22, minified, split so that what only some requests need (the MCP SDK,
 * the OpenAPI parser) loads when first needed. The entries find the files beside them through
 * `BUNDLE_FILES` (functions/settings.ts). No native module: SQLite is replaced by a stub that
 * says so, and a bundle that still reaches `better-sqlite3` fails the build.
 */
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULTS_DIR } from "@vance/defaults";
import { installedQuickJSWasm } from "@vance/sandbox";
import { build, type Metafile, type Plugin } from "esbuild";
import { buildParseWorker } from "../functions/api/parse-worker-bundle";
import { BUNDLE_FILES } from "../functions/settings";
import { buildScriptWorker } from "../packages/sandbox/build-worker";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Where `npm run build` writes; infra's `bundle` paths and the bundle tests point here. */
export const DIST_FUNCTIONS = join(ROOT, "dist", "functions");

/** Each deployable function: its entry, and the folders of packages/defaults it reads. */
export const FUNCTIONS = {
  api: {
    entry: "functions/api/lambda.ts",
    // loadBundledDocuments' folders and loadBundledCatalog's (packages/adapters/src/bundled.ts).
    defaults: ["server-tools", "documents", "scripts", "catalog"],
    sandbox: true,
  },
  "catalog-sync": { entry: "functions/catalog-sync/lambda.ts", defaults: ["catalog"], sandbox: false },
  "document-events": { entry: "functions/document-events/lambda.ts", defaults: [], sandbox: false },
} as const;

export type FunctionName = keyof typeof FUNCTIONS;

/** One built function: its folder, and the sizes a cold start pays for. */
export interface BuiltFunction {
  readonly name: FunctionName;
  readonly dir: string;
  /** The entry file, `{dir}/lambda.mjs`. */
  readonly entry: string;
  /** Bytes of JavaScript a cold start loads: the entry and the chunks it imports statically. */
  readonly startBytes: number;
  /** The source files in those: what a cold start loads. */
  readonly startInputs: readonly string[];
  /** Bytes of all JavaScript written, lazily loaded chunks included (not the script worker). */
  readonly totalBytes: number;
  readonly metafile: Metafile;
}

/** Options shared with bench/cold-start.ts, which builds a bare Hono bundle the same way. */
export const ESBUILD_OPTIONS = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  // ES module builds where a package has both: the AWS SDK's tree-shake, its CommonJS builds do not.
  mainFields: ["module", "main"],
  minify: true,
  // Error names and class names stay readable in CloudWatch.
  keepNames: true,
  splitting: true,
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  outExtension: { ".js": ".mjs" },
  metafile: true,
  logLevel: "warning",
  // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
  banner: {
    js: "import { createRequire as __vanceRequire } from 'node:module'; const require = __vanceRequire(import.meta.url);",
  },
} as const;

/** `@vance/adapters/sqlite` in a function bundle: a module that refuses, naming the setting. */
const noSqlite: Plugin = {
  name: "no-sqlite",
  setup(builder) {
    builder.onResolve({ filter: /^@vance\/adapters\/sqlite$/ }, () => ({
      path: "sqlite",
      namespace: "no-sqlite",
    }));
    builder.onLoad({ filter: /.*/, namespace: "no-sqlite" }, () => ({
      contents:
        'throw new Error("SQLite is not part of the function bundle: the state store here is DynamoDB (VANCE_STATE=dynamodb)");',
      loader: "js",
    }));
  },
};

/** Builds the named functions (all by default) into `outDir`, each in its own emptied folder. */
export async function buildFunctions(
  options: { readonly only?: readonly FunctionName[]; readonly outDir?: string } = {},
): Promise<BuiltFunction[]> {
  const names = options.only ?? (Object.keys(FUNCTIONS) as FunctionName[]);
  const outDir = options.outDir ?? DIST_FUNCTIONS;
  const built: BuiltFunction[] = [];
  // One at a time: esbuild already uses every core for each.
  for (const name of names) built.push(await buildFunction(name, join(outDir, name)));
  return built;
}

async function buildFunction(name: FunctionName, dir: string): Promise<BuiltFunction> {
  const spec = FUNCTIONS[name];
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const result = await build({
    ...ESBUILD_OPTIONS,
    mainFields: [...ESBUILD_OPTIONS.mainFields],
    entryPoints: { lambda: join(ROOT, spec.entry) },
    outdir: dir,
    // Metafile paths are relative to this.
    absWorkingDir: ROOT,
    plugins: [noSqlite],
  });
  const native = Object.keys(result.metafile.inputs).filter((input) =>
    input.includes("node_modules/better-sqlite3/"),
  );
  if (native.length > 0) throw new Error(`${name}: the bundle reaches better-sqlite3 (${native[0]})`);

  if (spec.sandbox) {
    await buildScriptWorker(join(dir, BUNDLE_FILES.VANCE_SCRIPT_WORKER));
    await buildParseWorker(join(dir, BUNDLE_FILES.VANCE_PARSE_WORKER));
    cpSync(installedQuickJSWasm(), join(dir, BUNDLE_FILES.VANCE_SCRIPT_WASM));
  }
  for (const folder of spec.defaults) {
    const from = join(DEFAULTS_DIR, folder);
    if (existsSync(from))
      cpSync(from, join(dir, BUNDLE_FILES.VANCE_DEFAULTS_DIR, folder), { recursive: true });
  }

  const entry = join(dir, "lambda.mjs");
  const start = startOutputs(result.metafile, relative(ROOT, entry));
  return {
    name,
    dir,
    entry,
    startBytes: start.reduce((sum, output) => sum + output.bytes, 0),
    startInputs: start.flatMap((output) => Object.keys(output.inputs)),
    totalBytes: Object.entries(result.metafile.outputs)
      .filter(([file]) => file.endsWith(".mjs"))
      .reduce((sum, [, output]) => sum + output.bytes, 0),
    metafile: result.metafile,
  };
}

/** The entry's output and every chunk it imports statically, transitively. */
function startOutputs(metafile: Metafile, entry: string): Metafile["outputs"][string][] {
  const seen = new Map<string, Metafile["outputs"][string]>();
  const visit = (file: string) => {
    const output = metafile.outputs[file];
    if (seen.has(file) || output === undefined) return;
    seen.set(file, output);
    for (const imported of output.imports) if (imported.kind === "import-statement") visit(imported.path);
  };
  visit(entry);
  return [...seen.values()];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const fn of await buildFunctions()) {
    console.log(
      `${relative(ROOT, fn.dir)}/: ${kib(fn.startBytes)} loaded at start, ${kib(fn.totalBytes)} of JavaScript in all`,
    );
  }
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(0)} KiB`;
}
