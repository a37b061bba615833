import type * as v from "valibot";

/**
 * The one mapping of validator issues to the sentences a user reads (API answers, `vance-tools
 * lint` and `push`, the web listing): an unknown field with the nearest known one, a missing
 * field, a wrong type with the expected one. A schema's own message (`timeoutMs must be at most
 * 30000`) is already a sentence and is kept; only valibot's generic "Invalid key: Expected never
 * but received …" texts are rewritten.
 */

/** valibot's default message: `Invalid {what}: Expected {expected} but received {received}`. */
const DEFAULT_MESSAGE = /^Invalid [a-z ]+: (?:Expected [\s\S]* but r|R)eceived [\s\S]*$/;

/** Longest text of a received value quoted back; longer ones are cut (a value may be huge). */
const QUOTE_CHARACTERS = 40;

/** Names this long or longer are never compared for a suggestion (the comparison is quadratic). */
const SUGGEST_MAX_LENGTH = 64;

type Issue = v.BaseIssue<unknown>;

/** A schema as valibot builds it, seen only through the fields that lead to an object's keys. */
interface SchemaNode {
  readonly type?: string;
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly wrapped?: unknown;
  readonly item?: unknown;
  readonly value?: unknown;
  readonly options?: readonly unknown[];
}

/** The sentence for `issue`; `schema` (the one that was parsed) lets an unknown field name its nearest sibling. */
export function issueMessage(issue: Issue, schema?: unknown): string {
  if (!DEFAULT_MESSAGE.test(issue.message)) return issue.message;
  const keys = (issue.path ?? []).map((item) => item.key);
  if (issue.kind === "schema" && (issue.type === "strict_object" || issue.type === "object")) {
    if (issue.expected === "never")
      return unknownField(String(keys.at(-1)), knownKeys(schema, keys.slice(0, -1)));
    if (issue.received === "undefined") return "missing required field";
  }
  if (issue.kind === "schema")
    return `expected ${expectedText(issue.expected)}, got ${receivedText(issue.received)}`;
  switch (issue.type) {
    case "min_value":
      return `must be at least ${bound(issue.expected)} (got ${issue.received})`;
    case "max_value":
      return `must be at most ${bound(issue.expected)} (got ${issue.received})`;
    case "min_length":
      return `must have at least ${bound(issue.expected)} characters or items (got ${issue.received})`;
    case "max_length":
      return `must have at most ${bound(issue.expected)} characters or items (got ${issue.received})`;
    case "integer":
      return `must be a whole number (got ${issue.received})`;
    default:
      return issue.expected === null
        ? `is not valid (got ${receivedText(issue.received)})`
        : `expected ${expectedText(issue.expected)}, got ${receivedText(issue.received)}`;
  }
}

function unknownField(name: string, known: readonly string[]): string {
  const suggestion = nearest(name, known);
  if (suggestion) return `unknown field; did you mean '${suggestion}'?`;
  return known.length > 0 ? `unknown field; the fields here are ${known.join(", ")}` : "unknown field";
}

/** The keys an object schema at `keys` (below `schema`) declares; none when the path leads elsewhere. */
function knownKeys(schema: unknown, keys: readonly unknown[]): string[] {
  let nodes: unknown[] = [schema];
  for (const key of keys) {
    nodes = nodes.flatMap(objectLikes).flatMap((node) => {
      if (node.entries && typeof key === "string")
        return node.entries[key] === undefined ? [] : [node.entries[key]];
      if (node.type === "array" && typeof key === "number") return [node.item];
      if (node.type === "record") return [node.value];
      return [];
    });
  }
  return [...new Set(nodes.flatMap(objectLikes).flatMap((node) => Object.keys(node.entries ?? {})))];
}

/** `schema` with optional/nullable wrappers taken off, a union's options spread. */
function objectLikes(schema: unknown): SchemaNode[] {
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as SchemaNode;
  if (node.wrapped !== undefined) return objectLikes(node.wrapped);
  if (node.options && (node.type === "union" || node.type === "variant"))
    return node.options.flatMap(objectLikes);
  return [node];
}

/** The known name closest to `name` by edit distance, when it is close enough to be a typo. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  if (name.length >= SUGGEST_MAX_LENGTH) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    const allowed = Math.max(1, Math.floor(candidate.length / 3));
    if (distance <= allowed && (best === undefined || distance < best.distance))
      best = { name: candidate, distance };
  }
  return best?.name;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  boolean: "true or false",
  Array: "a list",
  Object: "a mapping",
  null: "null",
  undefined: "nothing",
  never: "nothing here",
};

/** valibot's `expected` (`string`, `"javascript"`, `("a" | "b")`) as words. */
function expectedText(expected: string | null): string {
  if (expected === null) return "something else";
  const options = expected.replace(/^\((.*)\)$/s, "$1").split(" | ");
  const words = options.map(
    (option) => TYPE_NAMES[option] ?? (option.startsWith('"') ? `'${option.slice(1, -1)}'` : option),
  );
  if (words.length === 1) return words[0]!;
  if (options.every((option) => option.startsWith('"'))) return `one of ${words.join(", ")}`;
  return `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

/** valibot's `received` (`"yes"`, `5`, `Array`, `null`) as words, long texts cut. */
function receivedText(received: string): string {
  const named = TYPE_NAMES[received];
  if (named) return named;
  if (received === "true" || received === "false") return received;
  if (received.startsWith('"')) {
    const text =
      received.length > QUOTE_CHARACTERS + 2 ? `${received.slice(0, QUOTE_CHARACTERS + 1)}…"` : received;
    return `the text ${text}`;
  }
  if (/^-?[\d.]+(?:e[+-]?\d+)?$|^NaN$|^-?Infinity$/.test(received)) return `the number ${received}`;
  return received;
}

/** `>=3` → `3`. */
function bound(expected: string | null): string {
  return (expected ?? "").replace(/^[<>]=?/, "");
}
