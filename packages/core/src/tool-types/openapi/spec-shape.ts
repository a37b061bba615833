/**
 * Whether a text has an OpenAPI 3.x document's top level — an `openapi` field naming 3.x and a
 * `paths` or `webhooks` field — read by a linear scan, so the serving thread can judge a 32 MiB
 * spec before storing it (only specs may be that long) without parsing it: the full parse runs
 * on the task worker when a pack loads it. JSON is scanned for its top-level keys (strings and
 * nesting skipped); YAML for unindented `key:` lines.
 */
export function openApiShapeProblem(text: string): string | null {
  // A byte-order mark is not content.
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const start = firstNonSpace(text, bom);
  const top = text.charAt(start) === "{" ? jsonTopLevel(text, start) : yamlTopLevel(text, bom);
  if (top.version === null) return "it has no top-level 'openapi' field";
  if (!top.version.startsWith("3.")) return `its 'openapi' field is '${top.version}', not 3.x`;
  if (!top.paths) return "it has no top-level 'paths' or 'webhooks'";
  return null;
}

interface TopLevel {
  version: string | null;
  paths: boolean;
}

/** Longest `openapi` value read: versions are short. */
const MAX_VERSION_CHARS = 32;

function firstNonSpace(text: string, from: number): number {
  let at = from;
  while (
    at < text.length &&
    (text[at] === " " || text[at] === "\n" || text[at] === "\r" || text[at] === "\t")
  )
    at++;
  return at;
}

/** One pass over the JSON text: each character is looked at once, strings are skipped whole. */
function jsonTopLevel(text: string, start: number): TopLevel {
  const top: TopLevel = { version: null, paths: false };
  let depth = 0;
  let expectKey = false;
  let key: string | null = null;
  let valueFor: string | null = null;
  for (let at = start; at < text.length; at++) {
    const c = text[at];
    if (c === '"') {
      let end = at + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (depth === 1 && expectKey) {
        key = end - at - 1 <= MAX_VERSION_CHARS ? text.slice(at + 1, end) : null;
        expectKey = false;
      } else if (depth === 1 && valueFor === "openapi") {
        top.version = text.slice(at + 1, Math.min(end, at + 1 + MAX_VERSION_CHARS));
      }
      at = end;
      continue;
    }
    if (c === "{" || c === "[") {
      depth++;
      if (depth === 1) expectKey = c === "{";
      else if (depth === 2 && c === "{" && (valueFor === "paths" || valueFor === "webhooks"))
        top.paths = true;
      valueFor = depth === 1 ? valueFor : null;
    } else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1 && c === ",") {
      expectKey = true;
      valueFor = null;
    } else if (depth === 1 && c === ":") {
      valueFor = key;
    }
  }
  return top;
}

/** Unindented `openapi:` / `paths:` lines (quoted keys too); one pass over the lines. */
function yamlTopLevel(text: string, from: number): TopLevel {
  const top: TopLevel = { version: null, paths: false };
  let lineStart = from;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const key = topLevelKey(text, lineStart, lineEnd);
    if (key !== null) {
      const rest = text.slice(key.valueAt, Math.min(lineEnd, key.valueAt + MAX_VERSION_CHARS)).trim();
      if (key.name === "openapi") top.version = rest.replace(/^["']/, "").replace(/["']$/, "");
      if (key.name === "paths" || key.name === "webhooks") top.paths = true;
    }
    lineStart = lineEnd + 1;
  }
  return top;
}

const YAML_KEYS = ["openapi", "paths", "webhooks"] as const;

/** The key of an unindented `key:` line among {@link YAML_KEYS}, and where its value starts. */
function topLevelKey(
  text: string,
  from: number,
  to: number,
): { name: (typeof YAML_KEYS)[number]; valueAt: number } | null {
  for (const name of YAML_KEYS) {
    for (const spelled of [name, `"${name}"`, `'${name}'`]) {
      const end = from + spelled.length;
      if (end < to && text.startsWith(spelled, from) && text[end] === ":") return { name, valueAt: end + 1 };
    }
  }
  return null;
}
