import type { JsonSchema } from "./json-schema";
import { JSON_SCHEMA_LIMITS } from "./json-schema-size";

/** A schema cut to fit {@link JSON_SCHEMA_LIMITS}, and where it was cut. */
export interface BoundedJsonSchema {
  /** Self-contained (no `$ref`): what the limits' measure counts is what it holds. */
  readonly schema: JsonSchema;
  /** Where something was left unchecked, as `body.items.name` paths with the reason. */
  readonly cut: readonly string[];
}

/** Keywords whose value is one schema. */
export const SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  "additionalProperties",
  "additionalItems",
  "items",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contentSchema",
]);
/** Keywords whose value is a list of schemas. */
export const SCHEMA_LIST_KEYWORDS: ReadonlySet<string> = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names to schemas. */
export const SCHEMA_MAP_KEYWORDS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
]);
/** Keywords whose subschemas a validator may try in turn on the same value (the measure's rule). */
const COMBINATORS = new Set(["anyOf", "oneOf", "allOf", "not", "if"]);
/** Annotations a model could use but nothing checks: left out here, the budget goes to checks. */
const EXAMPLES = new Set(["example", "examples"]);
/** Characters kept free under `maxChars`: the estimate below counts separators loosely. */
const CHAR_MARGIN = 1_024;

/** One subschema waiting for its turn, with the slot its result goes into. */
interface Pending {
  readonly source: unknown;
  readonly depth: number;
  readonly combinators: number;
  /** Refs being inlined around it: a ref back into one of them recurs, and stops there. */
  readonly refs: ReadonlySet<string>;
  readonly path: string;
  readonly place: (schema: JsonSchema | boolean) => void;
}

/**
 * `schema` made to fit {@link JSON_SCHEMA_LIMITS} whatever its size: its `$ref`s inlined (through
 * `resolve`, by default the schema's own `#/…` pointers) breadth-first, so what lies near the root
 * is checked first, and a subschema that no longer fits — past the nodes, the characters or the
 * depth, a combinator nested past the limit, a ref that recurs or points at nothing — becomes
 * `{}`: any value passes there, and the upstream checks it. `example`/`examples` are left out.
 * The result passes `jsonSchemaSizeProblem`. Cost: linear in the nodes kept.
 */
export function boundJsonSchema(
  schema: JsonSchema,
  resolve: (ref: string) => unknown = (ref) => pointerTarget(schema, ref),
  limits = JSON_SCHEMA_LIMITS,
): BoundedJsonSchema {
  const cut: string[] = [];
  let nodes = 0;
  let chars = 0;
  const maxChars = limits.maxChars - CHAR_MARGIN;
  const fits = (moreNodes: number, moreChars: number) =>
    nodes + moreNodes <= limits.maxNodes && chars + moreChars <= maxChars;
  const take = (moreNodes: number, moreChars: number) => {
    nodes += moreNodes;
    chars += moreChars;
  };

  let root: JsonSchema = {};
  const queue: Pending[] = [
    {
      source: schema,
      depth: 0,
      combinators: 0,
      refs: new Set(),
      path: "",
      place: (value) => {
        root = typeof value === "boolean" ? {} : value;
      },
    },
  ];
  // The root's placeholder.
  take(1, 2);
  for (let head = 0; head < queue.length; head++) {
    const item = queue[head]!;
    const { depth, combinators, path } = item;
    let source = item.source;
    let refs = item.refs;
    if (typeof source === "boolean") {
      item.place(source);
      continue;
    }
    let description: unknown;
    // A ref stands for its target: inlined here, unless it recurs.
    for (let hops = 0; isObject(source) && typeof source.$ref === "string"; hops++) {
      const ref = source.$ref;
      description ??= source.description;
      const target = hops < 16 && !refs.has(ref) ? resolve(ref) : undefined;
      if (target === undefined) {
        cut.push(`${path || "(root)"} (${refs.has(ref) ? "recursive" : "unresolved"} ${ref})`);
        source = {};
        break;
      }
      refs = new Set([...refs, ref]);
      source = target;
    }
    if (!isObject(source)) {
      item.place(typeof source === "boolean" ? source : {});
      continue;
    }
    const result: Record<string, unknown> = {};
    // Keywords of this subschema that no longer fit: said once, for the subschema.
    const past: string[] = [];
    const entries = Object.entries(source).filter(
      ([key]) => key !== "$ref" && key !== "$defs" && key !== "definitions" && !EXAMPLES.has(key),
    );
    if (description !== undefined && source.description === undefined)
      entries.push(["description", description]);
    for (const [key, value] of entries) {
      const keyChars = key.length + 4;
      const inner = COMBINATORS.has(key) ? combinators + 1 : combinators;
      const where = `${path}${path ? "." : ""}${key}`;
      if (inner > limits.maxCombinatorNesting) {
        cut.push(`${path || "(root)"} (${key} nested more than ${limits.maxCombinatorNesting} deep)`);
        continue;
      }
      if (SCHEMA_KEYWORDS.has(key) && (isObject(value) || typeof value === "boolean")) {
        if (depth + 1 >= limits.maxDepth || !fits(1, keyChars + 2)) {
          past.push(key);
          continue;
        }
        take(1, keyChars + 2);
        result[key] = {};
        queue.push(child(value, depth + 1, inner, refs, childPath(path, key), (v) => (result[key] = v)));
      } else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value)) {
        const count = value.length;
        if (depth + 2 >= limits.maxDepth || !fits(1 + count, keyChars + 2 + 3 * count)) {
          past.push(key);
          continue;
        }
        take(1 + count, keyChars + 2 + 3 * count);
        const list: (JsonSchema | boolean)[] = value.map(() => ({}));
        result[key] = list;
        value.forEach((entry, index) => {
          const at = `${path}${path ? "." : ""}${key}[${index}]`;
          queue.push(child(entry, depth + 2, inner, refs, at, (v) => (list[index] = v)));
        });
      } else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
        const names = Object.keys(value);
        const nameChars = names.reduce((sum, name) => sum + name.length + 6, 0);
        if (depth + 2 >= limits.maxDepth || !fits(1 + names.length, keyChars + 2 + nameChars)) {
          past.push(key);
          continue;
        }
        take(1 + names.length, keyChars + 2 + nameChars);
        const map: Record<string, JsonSchema | boolean> = {};
        for (const name of names) {
          map[name] = {};
          const at = key === "properties" ? `${path}${path ? "." : ""}${name}` : `${where}.${name}`;
          queue.push(child(value[name], depth + 2, inner, refs, at, (v) => (map[name] = v)));
        }
        result[key] = map;
      } else if (
        !SCHEMA_KEYWORDS.has(key) &&
        !SCHEMA_LIST_KEYWORDS.has(key) &&
        !SCHEMA_MAP_KEYWORDS.has(key)
      ) {
        const size = measureData(value, depth + 1, limits.maxDepth);
        if (size === null || !fits(size.nodes, keyChars + size.chars)) {
          if (key !== "description" && key !== "title" && key !== "default") {
            past.push(key);
          }
          continue;
        }
        take(size.nodes, keyChars + size.chars);
        result[key] = value;
      }
    }
    if (past.length > 0) cut.push(`${path || "(root)"} (${past.join(", ")}: past the schema limits)`);
    item.place(result as JsonSchema);
  }
  return { schema: root, cut };
}

function child(
  source: unknown,
  depth: number,
  combinators: number,
  refs: ReadonlySet<string>,
  path: string,
  place: (schema: JsonSchema | boolean) => void,
): Pending {
  return { source, depth, combinators, refs, path, place };
}

function childPath(path: string, key: string): string {
  return key === "items" ? `${path}[]` : `${path}${path ? "." : ""}${key}`;
}

/**
 * The nodes and JSON characters of a plain value as the measure counts them, or null when it
 * nests to `maxDepth` (starting at `depth`). Iterative.
 */
function measureData(
  value: unknown,
  depth: number,
  maxDepth: number,
): { nodes: number; chars: number } | null {
  let nodes = 0;
  let chars = 0;
  const pending: [unknown, number][] = [[value, depth]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [current, level] = item;
    nodes++;
    if (typeof current !== "object" || current === null) {
      chars += current === undefined ? 4 : (JSON.stringify(current)?.length ?? 4) + 1;
      continue;
    }
    if (level >= maxDepth) return null;
    chars += 2;
    if (Array.isArray(current)) {
      for (const entry of current) pending.push([entry, level + 1]);
    } else {
      for (const [key, entry] of Object.entries(current)) {
        chars += key.length + 4;
        pending.push([entry, level + 1]);
      }
    }
  }
  return { nodes, chars };
}

/** What a local ref (`#/a/b`, a JSON pointer) points at in `root`, or undefined. */
export function pointerTarget(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let target: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    let token: string;
    try {
      token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (typeof target !== "object" || target === null || !Object.hasOwn(target, token)) return undefined;
    target = (target as Record<string, unknown>)[token];
  }
  return target;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
