import * as v from "valibot";
import type * as Yaml from "yaml";
import type { FieldError } from "../errors";
import { issueMessage } from "./issue-messages";

/**
 * The YAML parser (~120 KiB of JavaScript), loaded when first needed rather than at every cold
 * start: an `import()`, a chunk of its own in the function bundles (see `loadLazyEngines`).
 */
let yaml: typeof Yaml.default | undefined;
let loading: Promise<void> | undefined;

/** Loads the YAML parser once; a failed load is not kept. `parseYaml` needs it. */
export function loadYamlParser(): Promise<void> {
  if (yaml) return Promise.resolve();
  loading ??= import("yaml").then(
    (module) => {
      // The package is CommonJS under Node: Node's namespace has its named exports, esbuild's
      // (the function bundles) only `default`, which is the exports object in both.
      yaml = module.default;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** A parsed YAML (or JSON) text that can point issues at source lines. */
export interface ParsedYaml {
  readonly data: unknown;
  /** The 1-based line of the node at `path`, or of its nearest existing ancestor. */
  lineOf(path: readonly (string | number)[]): number | undefined;
  /**
   * The document line of line `line` (1-based) of the text at `path`: exact for block scalars
   * (`source: |`) and plain ones; a quoted string's own line otherwise.
   */
  lineWithin(path: readonly (string | number)[], line: number): number | undefined;
}

export type YamlParseResult =
  | { readonly ok: true; readonly yaml: ParsedYaml }
  | { readonly ok: false; readonly errors: FieldError[] };

/**
 * Characters of a YAML document the serving thread parses (tool, MCP server and catalog
 * documents): the parser costs a few microseconds per character on adversarial text (0.2–0.8 s
 * for 64 Ki here, depending on the load), so half that. Scripts longer than that live in
 * `scripts/` (`scriptPath`); OpenAPI documents are parsed on the task worker with their own bound.
 */
export const MAX_YAML_DOCUMENT_CHARS = 32 * 1024;
/** Flow collections (`[`, `{`) nested deeper than this are refused before the parser sees them. */
export const MAX_YAML_FLOW_DEPTH = 64;
/** Syntax errors a parse reports at most (a document may hold one per line). */
const MAX_YAML_ERRORS = 20;

/** A document parsed as YAML, checked to be a mapping and validated against its schema. */
export type YamlDocumentResult<T> =
  | { readonly ok: true; readonly value: T; readonly yaml: ParsedYaml }
  | {
      readonly ok: false;
      readonly message: string;
      readonly errors: FieldError[];
      /** The document when only the schema refused it, so later checks can still read it. */
      readonly yaml?: ParsedYaml;
    };

/**
 * The one reading of a YAML configuration document (tool and MCP server documents): syntax,
 * a mapping at the top, then `schema`, with every issue pointed at its line. `what` names the
 * document in the messages ("a tool document", "the tool schema"); `mapping` says what the
 * mapping holds when the top is something else.
 */
export function parseYamlDocument<S extends v.GenericSchema>(
  text: string,
  schema: S,
  what: { readonly document: string; readonly schema: string; readonly mapping: string },
): YamlDocumentResult<v.InferOutput<S>> {
  const parsed = parseYaml(text);
  if (!parsed.ok) return { ok: false, message: "the document is not valid YAML", errors: parsed.errors };
  const { yaml } = parsed;
  if (typeof yaml.data !== "object" || yaml.data === null || Array.isArray(yaml.data)) {
    return {
      ok: false,
      message: `${what.document} is a YAML mapping`,
      errors: [{ path: "", message: what.mapping }],
    };
  }
  const result = v.safeParse(schema, yaml.data);
  if (!result.success) {
    return {
      ok: false,
      message: `the document does not match ${what.schema}`,
      errors: issuesToFieldErrors(result.issues, yaml, [], schema),
      yaml,
    };
  }
  return { ok: true, value: result.output, yaml };
}

/**
 * Parses YAML (JSON is YAML) keeping a line index; syntax errors come back with their lines. The
 * parser's cost grows steeply with flow nesting (200 KB of `[` took 3 s here), so deeper nesting
 * is refused by a linear scan first; errors are not pretty-printed (that formats every one).
 */
export function parseYaml(text: string, maxChars: number = MAX_YAML_DOCUMENT_CHARS): YamlParseResult {
  if (text.length > maxChars) {
    return {
      ok: false,
      errors: [
        { path: "", message: `the document has ${text.length} characters; at most ${maxChars} are accepted` },
      ],
    };
  }
  const tooDeep = flowDepthProblem(text);
  if (tooDeep) return { ok: false, errors: [{ path: "", message: tooDeep }] };
  if (!yaml) throw new Error("the YAML parser is not loaded yet: await loadLazyEngines() first");
  const { isScalar, LineCounter, parseDocument } = yaml;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.slice(0, MAX_YAML_ERRORS).map((error) => ({
        path: "",
        message: syntaxMessage(error, lineCounter.linePos(error.pos[0]).col),
        line: lineCounter.linePos(error.pos[0]).line,
      })),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return {
      ok: false,
      errors: [{ path: "", message: error instanceof Error ? error.message : String(error) }],
    };
  }
  const lineOf = (path: readonly (string | number)[]) => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = doc.getIn(path.slice(0, depth), true);
      const offset = isRanged(node) ? node.range[0] : undefined;
      if (offset !== undefined) return lineCounter.linePos(offset).line;
    }
    return undefined;
  };
  return {
    ok: true,
    yaml: {
      data,
      lineOf,
      lineWithin(path, line) {
        const node = doc.getIn(path, true);
        const start = lineOf(path);
        if (!isScalar(node) || start === undefined) return start;
        if (node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED") return start + line;
        return node.type === "PLAIN" ? start + line - 1 : start;
      },
    },
  };
}

/**
 * Maps valibot issues to field errors with YAML line numbers, prefixing paths with `prefix`, in
 * the words of `issueMessage`; `schema` (the one that was parsed) lets an unknown field name its
 * nearest known one. One error per field: valibot goes on checking a value that already failed
 * (`abc` is no number, then not ≥ 1 either), and the first says what is wrong.
 */
export function issuesToFieldErrors(
  issues: readonly v.BaseIssue<unknown>[],
  yaml: ParsedYaml | undefined,
  prefix: readonly (string | number)[] = [],
  schema?: unknown,
): FieldError[] {
  const errors = new Map<string, FieldError>();
  for (const issue of issues) {
    const keys = [...prefix, ...(issue.path ?? []).map((item) => item.key as string | number)];
    const path = keys.join(".");
    if (errors.has(path)) continue;
    const line = yaml?.lineOf(keys);
    errors.set(path, { path, message: issueMessage(issue, schema), ...(line === undefined ? {} : { line }) });
  }
  return [...errors.values()];
}

function isRanged(node: unknown): node is { range: [number, number, number] } {
  return typeof node === "object" && node !== null && Array.isArray((node as { range?: unknown }).range);
}

/**
 * Why the text nests `[` and `{` deeper than {@link MAX_YAML_FLOW_DEPTH}, or null. Quoted scalars
 * and comments are skipped roughly (a bracket in a block scalar counts too: conservative).
 */
function flowDepthProblem(text: string): string | null {
  let depth = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (quote !== 0) {
      if (code === 0x5c && quote === 0x22) i++;
      else if (code === quote || code === 0x0a) quote = 0;
      continue;
    }
    if (code === 0x22 || code === 0x27) quote = code;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > MAX_YAML_FLOW_DEPTH)
        return `the document nests [ and { deeper than ${MAX_YAML_FLOW_DEPTH} levels`;
    } else if ((code === 0x5d || code === 0x7d) && depth > 0) depth--;
    else if (code === 0x0a && depth === 0) quote = 0;
  }
  return null;
}

/** The parser's own words for the syntax errors a hand-written document meets most, else its first line without the position (the line is reported beside it). */
const SYNTAX_MESSAGES: Readonly<Record<string, string>> = {
  DUPLICATE_KEY: "the same key appears twice in one mapping",
  TAB_AS_INDENT: "tabs cannot indent YAML; use spaces",
};

function syntaxMessage(error: Yaml.YAMLError, column: number | undefined): string {
  const first = (error.message.split("\n")[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, "");
  if (error.code === "MISSING_CHAR" && /closing "?quote/.test(first)) {
    return "a quoted string is never closed: a closing quote is missing above this line";
  }
  const message = SYNTAX_MESSAGES[error.code] ?? first;
  return column === undefined ? message : `${message} (column ${column})`;
}
