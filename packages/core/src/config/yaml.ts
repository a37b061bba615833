import type * as v from "valibot";
import { LineCounter, parseDocument } from "yaml";
import type { FieldError } from "../errors";

/** A parsed YAML (or JSON) text that can point issues at source lines. */
export interface ParsedYaml {
  readonly data: unknown;
  /** The 1-based line of the node at `path`, or of its nearest existing ancestor. */
  lineOf(path: readonly (string | number)[]): number | undefined;
}

export type YamlParseResult =
  | { readonly ok: true; readonly yaml: ParsedYaml }
  | { readonly ok: false; readonly errors: FieldError[] };

/** Parses YAML (JSON is YAML) keeping a line index; syntax errors come back with their lines. */
export function parseYaml(text: string): YamlParseResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((error) => ({
        path: "",
        message: firstLine(error.message),
        line: error.linePos?.[0]?.line,
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
  return {
    ok: true,
    yaml: {
      data,
      lineOf(path) {
        for (let depth = path.length; depth >= 0; depth--) {
          const node = doc.getIn(path.slice(0, depth), true);
          const offset = isRanged(node) ? node.range[0] : undefined;
          if (offset !== undefined) return lineCounter.linePos(offset).line;
        }
        return undefined;
      },
    },
  };
}

/** Maps valibot issues to field errors with YAML line numbers, prefixing paths with `prefix`. */
export function issuesToFieldErrors(
  issues: readonly v.BaseIssue<unknown>[],
  yaml: ParsedYaml | undefined,
  prefix: readonly (string | number)[] = [],
): FieldError[] {
  return issues.map((issue) => {
    const keys = [...prefix, ...(issue.path ?? []).map((item) => item.key as string | number)];
    const line = yaml?.lineOf(keys);
    return { path: keys.join("."), message: issue.message, ...(line === undefined ? {} : { line }) };
  });
}

function isRanged(node: unknown): node is { range: [number, number, number] } {
  return typeof node === "object" && node !== null && Array.isArray((node as { range?: unknown }).range);
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
