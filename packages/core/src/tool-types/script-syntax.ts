import type { parse as Parse } from "acorn";

/**
 * The language version scripts are checked against: QuickJS 2024-01-13 (the sandbox's engine)
 * implements ES2023. A test holds acorn's verdict to QuickJS's own on a set of scripts.
 */
const ECMA_VERSION = 2023;

/**
 * acorn (~120 KiB of JavaScript), loaded when first needed rather than at every cold start: an
 * `import()`, a chunk of its own in the function bundles (see `loadLazyEngines`).
 */
let parse: typeof Parse | undefined;
let loading: Promise<void> | undefined;

/** Loads the script parser once; a failed load is not kept. `scriptSyntaxProblem` needs it. */
export function loadScriptParser(): Promise<void> {
  if (parse) return Promise.resolve();
  loading ??= import("acorn").then(
    (acorn) => {
      parse = acorn.parse;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Where a script stops parsing, 1-based, and why. */
export interface ScriptSyntaxProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/**
 * Why `source` would not compile as a sandbox script (a global script, as the engine evaluates
 * it: no top-level `return`, `await` or `import`), or null. Nothing runs: acorn only parses, in
 * time linear in the source, which the document size limit bounds, so it is safe on the serving
 * thread (a QuickJS compile would need a worker slot for every write and every lint). The parser
 * must be loaded (`loadScriptParser`).
 */
export function scriptSyntaxProblem(source: string): ScriptSyntaxProblem | null {
  if (!parse) throw new Error("the script parser is not loaded yet: await loadScriptParser() first");
  try {
    parse(source, { ecmaVersion: ECMA_VERSION, sourceType: "script", locations: true });
    return null;
  } catch (error) {
    if (error instanceof SyntaxError) {
      const at = (error as SyntaxError & { loc?: { line: number; column: number } }).loc;
      const message = error.message.replace(/ \(\d+:\d+\)$/, "");
      return { line: at?.line ?? 1, column: (at?.column ?? 0) + 1, message };
    }
    // A script nested deeper than the parser's stack: QuickJS would refuse it as well.
    if (error instanceof RangeError)
      return { line: 1, column: 1, message: "the script nests too deeply to parse" };
    throw error;
  }
}

/** The sentence a refused write or `lint` shows for `problem`. */
export function scriptSyntaxMessage(problem: ScriptSyntaxProblem): string {
  return `the script does not compile: ${problem.message} (line ${problem.line}, column ${problem.column})`;
}
