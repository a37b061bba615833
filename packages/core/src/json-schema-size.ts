import type { JsonSchema } from "./json-schema";

/**
 * What a JSON Schema may be before it is compiled. Ajv's compile runs on the serving thread and
 * costs about 0.1–0.2 ms per schema node here (its generated code is some 30 times the schema's
 * text), and a `$ref` that two branches share is compiled as often as it is reached: so the
 * bound is on the schema as expanded, refs counted as their targets every time. The worst
 * compile within these bounds is measured in `test/hostile/` (README, *Isolation*).
 */
export const JSON_SCHEMA_LIMITS = {
  /** UTF-16 units of the schema's JSON text. */
  maxChars: 64 * 1024,
  /** Values in the schema as expanded (every object, array, key's value, string, number). */
  maxNodes: 1_000,
  /** Nesting of objects and arrays, refs followed. */
  maxDepth: 32,
  /** `anyOf`, `oneOf`, `allOf`, `not` and `if` inside one another: validation may try each branch. */
  maxCombinatorNesting: 4,
} as const;

/** Keywords whose subschemas a validator may try in turn on the same value. */
const COMBINATORS = new Set(["anyOf", "oneOf", "allOf", "not", "if"]);

/** What walking one value needs: where it is, how deep, and which refs are open above it. */
interface Frame {
  readonly value: unknown;
  readonly depth: number;
  readonly combinators: number;
  /** Refs being expanded around this value (a ref back into one of them is recursion, compiled once). */
  readonly refs: ReadonlySet<string>;
}

/**
 * Why `schema` is larger than {@link JSON_SCHEMA_LIMITS} allow, or null. `chars` is the length of
 * its JSON text when the caller has it. Iterative, and it stops as soon as a bound is passed, so
 * it costs at most `maxNodes` steps whatever the schema.
 */
export function jsonSchemaSizeProblem(schema: JsonSchema, chars?: number): string | null {
  const measured = measureJsonSchema(schema, chars);
  return typeof measured === "string" ? measured : null;
}

/**
 * The nodes of `schema` as expanded (see {@link jsonSchemaSizeProblem}), or why it is larger
 * than {@link JSON_SCHEMA_LIMITS} allow. For budgets over several schemas (a spawn's client tools).
 */
export function measureJsonSchema(schema: JsonSchema, chars?: number): number | string {
  const limits = JSON_SCHEMA_LIMITS;
  if (chars !== undefined && chars > limits.maxChars) {
    return `too large: its JSON has ${chars} characters, at most ${limits.maxChars} are accepted`;
  }
  let nodes = 0;
  const pending: Frame[] = [{ value: schema, depth: 0, combinators: 0, refs: new Set() }];
  for (let frame = pending.pop(); frame !== undefined; frame = pending.pop()) {
    if (++nodes > limits.maxNodes) {
      return `too large: more than ${limits.maxNodes} nodes (its $refs counted as what they point at, each time)`;
    }
    const { value, depth, combinators, refs } = frame;
    if (typeof value !== "object" || value === null) continue;
    if (depth >= limits.maxDepth) return `too deep: it nests more than ${limits.maxDepth} levels`;
    if (Array.isArray(value)) {
      for (const item of value) pending.push({ value: item, depth: depth + 1, combinators, refs });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") {
        const target = refTarget(schema, child);
        if (target !== undefined && !refs.has(child)) {
          pending.push({ value: target, depth: depth + 1, combinators, refs: new Set([...refs, child]) });
        }
        continue;
      }
      const nested = COMBINATORS.has(key) ? combinators + 1 : combinators;
      if (nested > limits.maxCombinatorNesting) {
        return `too complex: anyOf, oneOf, allOf, not and if nest more than ${limits.maxCombinatorNesting} deep`;
      }
      pending.push({ value: child, depth: depth + 1, combinators: nested, refs });
    }
  }
  return nodes;
}

/** The value a local `$ref` (`#/…`, a JSON pointer) points at in `root`, or undefined. */
function refTarget(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let target: unknown = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof target !== "object" || target === null || !Object.hasOwn(target, token)) return undefined;
    target = (target as Record<string, unknown>)[token];
  }
  return target;
}
