import type { JsonSchema } from "../../json-schema";
import {
  pointerTarget,
  SCHEMA_KEYWORDS,
  SCHEMA_LIST_KEYWORDS,
  SCHEMA_MAP_KEYWORDS,
} from "../../json-schema-bound";

/** How deep one schema of the document is read inline (a component's own nesting, refs aside). */
export const MAX_SCHEMA_DEPTH = 32;

/**
 * OpenAPI's own keywords and those that would change how refs resolve: refs are rewritten to the
 * sub-tool's own `$defs`, and the result must stand alone. A schema's nested `$defs` are reached
 * through the refs that point into them.
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
  "$defs",
  "definitions",
  "$comment",
]);
/** Keywords that only describe: a schema of nothing else constrains nothing. */
const ANNOTATIONS = new Set(["description", "title", "example", "examples", "deprecated", "default"]);
/** What a `$defs` name may hold; other characters of a component's name become `_`. */
const DEF_NAME = /[^A-Za-z0-9_.-]/g;

/** Which way the schema's values travel: properties marked `readOnly` are never sent in a request. */
export type SchemaDirection = "request" | "any";

/** One schema of the document (a ref's target), converted once per direction. */
export interface SchemaDefinition {
  /** Its name in a sub-tool's `$defs`. */
  readonly name: string;
  readonly schema: JsonSchema | boolean;
  /** The nodes of `schema` (each value once). */
  readonly nodes: number;
  /** The definitions its refs point at, by key. */
  readonly refs: readonly string[];
}

/** What converting found that it could not keep as written: said in the pack's notes. */
export interface ConversionRemarks {
  /** Patterns RE2 cannot run, left to the upstream (the schema's description quotes them). */
  readonly patterns: string[];
  /** Refs that point at nothing in the document, and schemas nested past `MAX_SCHEMA_DEPTH`. */
  readonly unusable: string[];
}

/**
 * The document's schemas as JSON Schema definitions, converted at their first use and shared by
 * every operation: a sub-tool's input schema refers to them as `#/$defs/{name}` and carries the
 * ones it reaches, so no schema is expanded into its users, and the cost of one operation is what
 * its own definitions hold (bounded by `readOperations`), whatever the rest of the document does.
 * Keywords beside a `$ref` other than `description` are not kept (OpenAPI 3.0 ignores them).
 *
 * Each schema is an OpenAPI 3.0 or 3.1 schema object turned into one Ajv accepts (draft-07
 * reading): `nullable` becomes a `null` type, boolean `exclusiveMinimum`/`exclusiveMaximum` their
 * numeric form, OpenAPI-only and `x-` keywords are dropped, and in a request `readOnly` properties
 * go; a pattern RE2 cannot run is left out and quoted in the description. Recursion stays what it
 * is: a definition that refers to itself.
 */
export class SchemaDefinitions {
  readonly #registered = new Map<string, { ref: string; direction: SchemaDirection; name: string }>();
  readonly #definitions = new Map<string, SchemaDefinition>();
  readonly #byName = new Map<string, string>();
  readonly #patterns = new Map<string, string | null>();
  readonly #remarks = new Map<string, ConversionRemarks>();

  constructor(
    private readonly document: unknown,
    private readonly patternProblem: (pattern: string) => string | null,
  ) {}

  /** The definition of `key` (from `register`), converted at its first use. */
  definition(key: string): SchemaDefinition | undefined {
    const known = this.#definitions.get(key);
    if (known) return known;
    const wanted = this.#registered.get(key);
    if (!wanted) return undefined;
    const remarks: ConversionRemarks = { patterns: [], unusable: [] };
    const conversion = new Conversion(this, wanted.direction, remarks);
    const schema = conversion.schema(this.resolve(wanted.ref), 0);
    const definition = { name: wanted.name, schema, nodes: conversion.nodes, refs: [...conversion.refs] };
    this.#definitions.set(key, definition);
    if (remarks.patterns.length > 0 || remarks.unusable.length > 0) this.#remarks.set(key, remarks);
    return definition;
  }

  /** What converting the definition of `key` remarked (once it is converted). */
  remarks(key: string): ConversionRemarks | undefined {
    return this.#remarks.get(key);
  }

  /**
   * Converts a schema written in place (a parameter's, a body's); its refs become
   * `#/$defs/{name}`, their definitions registered here (converted when a sub-tool takes them).
   */
  convert(
    schema: unknown,
    direction: SchemaDirection,
    remarks: ConversionRemarks,
  ): { schema: JsonSchema; nodes: number; refs: string[] } {
    const conversion = new Conversion(this, direction, remarks);
    const converted = conversion.schema(schema, 0);
    return {
      schema: typeof converted === "boolean" ? (converted ? {} : { not: {} }) : converted,
      nodes: conversion.nodes,
      refs: [...conversion.refs],
    };
  }

  /**
   * The key and `$defs` name of a ref's definition, or undefined when it points at nothing. Only
   * named here: converting it waits for `definition`, so a long chain of schemas is never walked
   * by recursion.
   */
  register(ref: string, direction: SchemaDirection): { key: string; name: string } | undefined {
    const key = `${direction} ${ref}`;
    const known = this.#registered.get(key);
    if (known) return { key, name: known.name };
    if (this.resolve(ref) === undefined) return undefined;
    const name = this.#nameFor(ref, direction);
    this.#registered.set(key, { ref, direction, name });
    this.#byName.set(name, key);
    return { key, name };
  }

  /** What a local ref points at, refs to refs followed (a few hops). */
  resolve(ref: string): unknown {
    let target = pointerTarget(this.document, ref);
    for (let hops = 0; hops < 16; hops++) {
      const next = isObject(target) && typeof target.$ref === "string" ? target.$ref : undefined;
      if (next === undefined) return target;
      target = pointerTarget(this.document, next);
    }
    return undefined;
  }

  /** Why RE2 cannot run `pattern`, or null; asked once per pattern of the document. */
  checkPattern(pattern: string): string | null {
    const known = this.#patterns.get(pattern);
    if (known !== undefined) return known;
    const problem = this.patternProblem(pattern);
    this.#patterns.set(pattern, problem);
    return problem;
  }

  /** The key of the definition named `name` in a sub-tool's `$defs`. */
  keyOf(name: string): string | undefined {
    return this.#byName.get(name);
  }

  #nameFor(ref: string, direction: SchemaDirection): string {
    const segments = ref.replace(/^#\/?/, "").split("/");
    const components = segments[0] === "components" && segments[1] === "schemas" && segments.length === 3;
    const raw = components ? segments[2]! : segments.slice(-2).join("_");
    let base = (safeDecode(raw).replace(DEF_NAME, "_").slice(0, 100) || "schema") as string;
    if (direction === "any") base = `${base}.param`;
    let name = base;
    for (let n = 2; this.#byName.has(name); n++) name = `${base}_${n}`;
    return name;
  }
}

/** One conversion's walk: depth-bounded, counting what it makes, noting the refs it meets. */
class Conversion {
  nodes = 0;
  readonly refs = new Set<string>();

  constructor(
    private readonly definitions: SchemaDefinitions,
    private readonly direction: SchemaDirection,
    private readonly remarks: ConversionRemarks,
  ) {}

  schema(node: unknown, depth: number): JsonSchema | boolean {
    if (typeof node === "boolean") return node;
    if (!isObject(node)) return {};
    this.nodes++;
    if (depth > MAX_SCHEMA_DEPTH) {
      this.remarks.unusable.push(`a schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
      return {};
    }
    if (typeof node.$ref === "string") return this.reference(node);
    if (typeof node.$dynamicRef === "string") return {};
    return this.members(node, depth);
  }

  /** A ref as a ref into the sub-tool's `$defs`; a description beside it is kept (OpenAPI 3.1). */
  private reference(node: Record<string, unknown>): JsonSchema {
    const ref = node.$ref as string;
    const registered = this.definitions.register(ref, this.direction);
    if (registered === undefined) {
      this.remarks.unusable.push(`the $ref '${ref.slice(0, 200)}' points at nothing in the document`);
      return {};
    }
    const { key, name } = registered;
    this.refs.add(key);
    const result: Record<string, unknown> = { $ref: `#/$defs/${encodePointer(name)}` };
    if (typeof node.description === "string") {
      result.description = node.description;
      this.nodes++;
    }
    this.nodes++;
    return result;
  }

  private members(source: Record<string, unknown>, depth: number): JsonSchema {
    const entries: [string, unknown][] = [];
    for (const [key, value] of Object.entries(source)) {
      if (key.startsWith("x-") || DROPPED_KEYWORDS.has(key)) continue;
      if (SCHEMA_KEYWORDS.has(key)) {
        entries.push([
          key,
          Array.isArray(value)
            ? value.map((item) => this.schema(item, depth + 1))
            : this.schema(value, depth + 1),
        ]);
      } else if (SCHEMA_LIST_KEYWORDS.has(key)) {
        if (!Array.isArray(value)) continue;
        entries.push([key, value.map((item) => this.schema(item, depth + 1))]);
      } else if (SCHEMA_MAP_KEYWORDS.has(key)) {
        if (!isObject(value)) continue;
        entries.push([key, this.schemaMap(key, value, depth)]);
      } else if (key === "examples" && !Array.isArray(value)) {
        // OpenAPI 3.0 spells `examples` as a map; JSON Schema wants a list.
      } else if (key === "pattern" && typeof value === "string") {
        const problem = this.definitions.checkPattern(value);
        if (problem === null) entries.push([key, value]);
        else this.remarks.patterns.push(value);
      } else {
        entries.push([key, this.json(value, depth + 1)]);
      }
    }
    const result = Object.fromEntries(entries) as Record<string, unknown>;
    const dropped = typeof source.pattern === "string" && result.pattern === undefined;
    if (dropped) {
      // Still said to the model, which can keep to it; the upstream checks it.
      const said = `Must match the pattern ${source.pattern} (checked by the API, not here).`;
      result.description = typeof result.description === "string" ? `${result.description}\n\n${said}` : said;
    }
    this.exclusiveBounds(result);
    if (this.direction === "request") this.dropReadOnly(result, source);
    this.nodes += entries.length;
    return source.nullable === true ? nullable(result) : result;
  }

  private schemaMap(
    keyword: string,
    map: Record<string, unknown>,
    depth: number,
  ): Record<string, JsonSchema | boolean> {
    const entries: [string, JsonSchema | boolean][] = [];
    for (const [name, item] of Object.entries(map)) {
      if (keyword === "patternProperties" && this.definitions.checkPattern(name) !== null) {
        this.remarks.patterns.push(name);
        continue;
      }
      entries.push([name, this.schema(item, depth + 1)]);
    }
    return Object.fromEntries(entries);
  }

  /** A plain JSON value (enum, default, example): a tree, as the document's text gave it. */
  private json(value: unknown, depth: number): unknown {
    if (typeof value !== "object" || value === null) return value;
    if (depth > MAX_SCHEMA_DEPTH * 2) {
      this.remarks.unusable.push(`a value nested deeper than ${MAX_SCHEMA_DEPTH * 2} levels (read as null)`);
      return null;
    }
    this.nodes++;
    if (Array.isArray(value)) return value.map((item) => this.json(item, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.json(item, depth + 1)]));
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

  /**
   * A request never carries `readOnly` properties: they leave `properties` and `required`. A
   * property given by a ref is read-only when its target says so.
   */
  private dropReadOnly(schema: Record<string, unknown>, source: Record<string, unknown>): void {
    const properties = schema.properties;
    const written = source.properties;
    if (!isObject(properties) || !isObject(written)) return;
    const readOnly = new Set(
      Object.entries(written)
        .filter(([, item]) => {
          const target =
            isObject(item) && typeof item.$ref === "string" ? this.definitions.resolve(item.$ref) : item;
          return (isObject(item) && item.readOnly === true) || (isObject(target) && target.readOnly === true);
        })
        .map(([name]) => name),
    );
    if (readOnly.size === 0) return;
    schema.properties = Object.fromEntries(
      Object.entries(properties).filter(([name]) => !readOnly.has(name)),
    );
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

function encodePointer(name: string): string {
  return name.replaceAll("~", "~0").replaceAll("/", "~1");
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return text;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
