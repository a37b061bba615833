import type { JsonSchema } from "../../json-schema";

/** Schema nodes one operation's input schema may hold in all (shared subtrees count each time they appear). */
export const MAX_SCHEMA_NODES = 5_000;
/** How deep one operation's input schema may nest. */
export const MAX_SCHEMA_DEPTH = 32;

/** Why an OpenAPI schema could not become part of a JSON Schema. */
export class UnusableSchemaError extends Error {
  override readonly name = "UnusableSchemaError";
}

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
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
const SCHEMA_LIST_KEYWORDS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
  "$defs",
  "definitions",
]);
/**
 * OpenAPI's own keywords and those that would change how refs resolve: the document's refs are
 * already resolved, and the result must stand alone.
 */
const DROPPED_KEYWORDS = new Set([
  "discriminator",
  "xml",
  "externalDocs",
  "nullable",
  "$id",
  "$schema",
  "$anchor",
  "$dynamicAnchor",
  "$recursiveAnchor",
  "$vocabulary",
]);
/** Keywords that only describe: a schema of nothing else constrains nothing. */
const ANNOTATIONS = new Set(["description", "title", "example", "examples", "deprecated", "default"]);

/** Which way the schema's values travel: properties marked `readOnly` are never sent in a request. */
export type SchemaDirection = "request" | "any";

/**
 * An OpenAPI 3.0 or 3.1 schema object, its refs already resolved, as a self-contained JSON
 * Schema that Ajv (draft-07 reading) accepts: `nullable` becomes a `null` type, boolean
 * `exclusiveMinimum`/`exclusiveMaximum` their numeric form, OpenAPI-only and `x-` keywords are
 * dropped, and in a request `readOnly` properties go. A recursive schema (a cycle in the resolved
 * graph, or a ref left unresolved) becomes `{}` where it recurs: any value may stand there.
 * Bounded by node count and depth; throws `UnusableSchemaError` past them.
 */
export class SchemaConverter {
  private nodes = 0;

  constructor(private readonly direction: SchemaDirection = "any") {}

  /** Converts one schema; the node budget is shared by every call on this converter. */
  convert(schema: unknown): JsonSchema {
    const converted = this.schema(schema, 0, new Set());
    return typeof converted === "boolean" ? (converted ? {} : { not: {} }) : converted;
  }

  private schema(node: unknown, depth: number, ancestors: Set<object>): JsonSchema | boolean {
    if (typeof node === "boolean") return node;
    if (typeof node !== "object" || node === null || Array.isArray(node)) return {};
    if (ancestors.has(node)) return {};
    this.count(depth);
    const source = node as Record<string, unknown>;
    if (typeof source.$ref === "string" || typeof source.$dynamicRef === "string") return {};
    ancestors.add(node);
    try {
      return this.members(source, depth, ancestors);
    } finally {
      ancestors.delete(node);
    }
  }

  private members(source: Record<string, unknown>, depth: number, ancestors: Set<object>): JsonSchema {
    const entries: [string, unknown][] = [];
    for (const [key, value] of Object.entries(source)) {
      if (key.startsWith("x-") || DROPPED_KEYWORDS.has(key)) continue;
      if (SCHEMA_KEYWORDS.has(key)) {
        entries.push([
          key,
          Array.isArray(value)
            ? value.map((item) => this.schema(item, depth + 1, ancestors))
            : this.schema(value, depth + 1, ancestors),
        ]);
      } else if (SCHEMA_LIST_KEYWORDS.has(key)) {
        if (!Array.isArray(value)) continue;
        entries.push([key, value.map((item) => this.schema(item, depth + 1, ancestors))]);
      } else if (SCHEMA_MAP_KEYWORDS.has(key)) {
        if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
        entries.push([key, this.schemaMap(value as Record<string, unknown>, depth, ancestors)]);
      } else if (key === "examples" && !Array.isArray(value)) {
        // OpenAPI 3.0 spells `examples` as a map; JSON Schema wants a list.
      } else {
        entries.push([key, this.json(value, depth + 1, ancestors)]);
      }
    }
    const result = Object.fromEntries(entries) as Record<string, unknown>;
    this.exclusiveBounds(result);
    if (this.direction === "request") this.dropReadOnly(result);
    return source.nullable === true ? nullable(result) : result;
  }

  private schemaMap(
    map: Record<string, unknown>,
    depth: number,
    ancestors: Set<object>,
  ): Record<string, JsonSchema | boolean> {
    return Object.fromEntries(
      Object.entries(map).map(([name, item]) => [name, this.schema(item, depth + 1, ancestors)] as const),
    );
  }

  /** A plain JSON value (enum, default, example), copied within the same budget. */
  private json(value: unknown, depth: number, ancestors: Set<object>): unknown {
    if (typeof value !== "object" || value === null) return value;
    if (ancestors.has(value)) throw new UnusableSchemaError("a value in the schema contains itself");
    this.count(depth);
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((item) => this.json(item, depth + 1, ancestors));
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.json(item, depth + 1, ancestors)]),
      );
    } finally {
      ancestors.delete(value);
    }
  }

  private count(depth: number): void {
    if (++this.nodes > MAX_SCHEMA_NODES) {
      throw new UnusableSchemaError(`the schema has more than ${MAX_SCHEMA_NODES} nodes`);
    }
    if (depth > MAX_SCHEMA_DEPTH) {
      throw new UnusableSchemaError(`the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    }
  }

  /** OpenAPI 3.0 writes `exclusiveMinimum: true` beside `minimum`; JSON Schema puts the bound there. */
  private exclusiveBounds(schema: Record<string, unknown>): void {
    for (const [exclusive, inclusive] of [
      ["exclusiveMinimum", "minimum"],
      ["exclusiveMaximum", "maximum"],
    ] as const) {
      const flag = schema[exclusive];
      if (typeof flag !== "boolean") continue;
      if (flag && typeof schema[inclusive] === "number") {
        schema[exclusive] = schema[inclusive];
        delete schema[inclusive];
      } else {
        delete schema[exclusive];
      }
    }
  }

  /** A request never carries `readOnly` properties: they leave `properties` and `required`. */
  private dropReadOnly(schema: Record<string, unknown>): void {
    const properties = schema.properties;
    if (typeof properties !== "object" || properties === null) return;
    const entries = Object.entries(properties);
    const readOnly = new Set(
      entries
        .filter(([, item]) => typeof item === "object" && item !== null && item.readOnly === true)
        .map(([name]) => name),
    );
    if (readOnly.size === 0) return;
    schema.properties = Object.fromEntries(entries.filter(([name]) => !readOnly.has(name)));
    if (Array.isArray(schema.required)) {
      schema.required = schema.required.filter((name) => !readOnly.has(name));
    }
  }
}

/** OpenAPI 3.0's `nullable: true`: null is one more allowed value. */
function nullable(schema: Record<string, unknown>): JsonSchema {
  const type = schema.type;
  if (typeof type === "string" || Array.isArray(type)) {
    const types = typeof type === "string" ? [type] : type;
    const result: Record<string, unknown> = {
      ...schema,
      type: types.includes("null") ? types : [...types, "null"],
    };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) result.enum = [...schema.enum, null];
    return result;
  }
  const constraining = Object.keys(schema).filter((key) => !ANNOTATIONS.has(key));
  if (constraining.length === 0) return schema;
  const annotations = Object.fromEntries(Object.entries(schema).filter(([key]) => ANNOTATIONS.has(key)));
  const constraints = Object.fromEntries(Object.entries(schema).filter(([key]) => !ANNOTATIONS.has(key)));
  return { ...annotations, anyOf: [constraints, { type: "null" }] };
}
