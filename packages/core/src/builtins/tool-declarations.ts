import type { CallableTool } from "../calls/built-in-tool";
import type { JsonSchema } from "../json-schema";
import { byString } from "../order";
import { cutAtWord, toolHint } from "../surface/discovery";
import { isPackTool, toolFamily } from "../surface/tool-family";

/**
 * Bounds of the TypeScript declarations written from tool input schemas, which tenants and
 * upstream servers write: the work is linear in what these let through, whatever the schemas.
 */
export const DECLARATION_LIMITS = Object.freeze({
  /**
   * The typed overloads together, in characters; with `nameChars` about 2,000 tokens (o200k
   * reads about 3 characters a token of these).
   */
  chars: 5_000,
  /** The names of the tools declared by name only, in characters; past them a count. */
  nameChars: 1_500,
  /** One tool's declaration; a tool whose declaration is longer is named instead. */
  toolChars: 1_200,
  /** Schema nodes read for one tool, `$ref`s followed included; past them the type is `unknown`. */
  nodes: 200,
  /** Levels of objects, arrays, `$ref`s and combinators written out; deeper is `unknown`. */
  depth: 5,
  /** Properties written per object; the rest become `[key: string]: unknown`. */
  properties: 30,
  /** Members of an enum or a union written out; more give the base type. */
  members: 12,
  /** Characters of a string literal type (an enum member, a `const`); longer ones are `string`. */
  literalChars: 60,
  /** Characters of a property's description comment. */
  commentChars: 80,
});

/** Thrown when one tool's declaration grows past `toolChars`: the tool is named instead. */
class TooLong extends Error {}

/** The reading of one tool's schema: its root (for `$ref`s) and the nodes left to read. */
interface Reading {
  readonly root: unknown;
  nodes: number;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * `declare const vance: { tools: { call(…) } }` for the tools a script may call: one overload
 * per tool with its parameters typed from its input schema, in name order, within
 * `DECLARATION_LIMITS.chars`; deferred tools, and those past the budget or over `toolChars`, by
 * name only (a pack's as `` `pack__${string}` ``) within `nameChars`, their parameters left to
 * `tool_description`.
 * A pure function of `tools`: the same tools give the same bytes.
 */
export function declareTools(tools: readonly CallableTool[]): string {
  const sorted = [...tools].sort(byString((tool) => tool.name));
  const overloads: string[] = [];
  const named: string[] = [];
  let used = 0;
  for (const tool of sorted) {
    const declared = tool.deferred || used >= DECLARATION_LIMITS.chars ? null : declaration(tool);
    if (declared !== null && used + declared.length <= DECLARATION_LIMITS.chars) {
      overloads.push(declared);
      used += declared.length;
    } else {
      named.push(tool.name);
    }
  }
  const lines = ["declare const vance: {", "  tools: {", ...overloads];
  const names = nameUnion(named, DECLARATION_LIMITS.nameChars);
  if (names) {
    lines.push(
      "    /** Named only: call tool_description with these names for their parameters first. */",
      `    call(name: ${names.union}, params: object): unknown;`,
    );
    if (names.left > 0) lines.push(`    // and ${names.left} more names: tool_list has them all`);
  }
  if (overloads.length === 0 && !names) lines.push("    call(name: string, params: object): unknown;");
  lines.push("  };", "};");
  return lines.join("\n");
}

/** One tool's overload with its hint as a comment, or null when it cannot be written within `toolChars`. */
function declaration(tool: CallableTool): string | null {
  const reading: Reading = { root: tool.inputSchema, nodes: DECLARATION_LIMITS.nodes };
  let params: string;
  try {
    params = paramsType(tool.inputSchema, reading);
  } catch (error) {
    if (error instanceof TooLong) return null;
    throw error;
  }
  const hint = comment(toolHint(tool.description), 120);
  const text = `${hint ? `    /** ${hint} */\n` : ""}    call(name: ${JSON.stringify(tool.name)}, params: ${params}): unknown;`;
  return text.length <= DECLARATION_LIMITS.toolChars ? text : null;
}

/** The params object: its properties one per line, with their descriptions. */
function paramsType(schema: JsonSchema, reading: Reading): string {
  const object = properties(schema);
  if (!object || Object.keys(object.properties).length === 0) return typeOf(schema, reading, 1);
  return objectType(object, reading, 1, "      ");
}

/** A TypeScript type for `schema`, `depth` levels down. */
function typeOf(schema: unknown, reading: Reading, depth: number): string {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return "unknown";
  if (depth > DECLARATION_LIMITS.depth || reading.nodes <= 0) return "unknown";
  reading.nodes -= 1;
  const node = schema as Record<string, unknown>;
  const type = baseType(node, reading, depth);
  return node.nullable === true && type !== "unknown" ? union([type, "null"]) : type;
}

function baseType(node: Record<string, unknown>, reading: Reading, depth: number): string {
  if (typeof node.$ref === "string") return typeOf(resolveRef(reading.root, node.$ref), reading, depth + 1);
  if ("const" in node) return literal(node.const) ?? "unknown";
  if (Array.isArray(node.enum)) {
    const members = node.enum.length <= DECLARATION_LIMITS.members ? node.enum.map(literal) : [null];
    if (members.every((member) => member !== null)) return union(members as string[]);
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const members = node[key];
    if (Array.isArray(members)) return combined(members, reading, depth, " | ");
  }
  if (Array.isArray(node.allOf)) return combined(node.allOf, reading, depth, " & ");
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if (types.length > DECLARATION_LIMITS.members) return "unknown";
  const written = types.map((type) => typeNamed(type, node, reading, depth));
  return written.includes("unknown") ? "unknown" : union(written);
}

/** The type for one `type` keyword value (or none). */
function typeNamed(type: unknown, node: Record<string, unknown>, reading: Reading, depth: number): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return arrayOf(typeOf(node.items, reading, depth + 1));
    case "object":
      return objectOf(node, reading, depth);
    case undefined:
      if (properties(node)) return objectOf(node, reading, depth);
      if ("items" in node) return arrayOf(typeOf(node.items, reading, depth + 1));
      return "unknown";
    default:
      return "unknown";
  }
}

function objectOf(node: Record<string, unknown>, reading: Reading, depth: number): string {
  const object = properties(node);
  if (object && Object.keys(object.properties).length > 0) return objectType(object, reading, depth, "");
  const extra = node.additionalProperties;
  const values = extra === undefined || extra === true ? "unknown" : typeOf(extra, reading, depth + 1);
  return `Record<string, ${values}>`;
}

/**
 * An object type. With `indent` (the params object) one property per line, each with its
 * description; nested objects on one line, without descriptions.
 */
function objectType(
  object: { properties: Record<string, unknown>; required: ReadonlySet<string> },
  reading: Reading,
  depth: number,
  indent: string,
): string {
  const names = Object.keys(object.properties);
  const members: string[] = [];
  let length = 0;
  for (const name of names.slice(0, DECLARATION_LIMITS.properties)) {
    const property = object.properties[name];
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    const optional = object.required.has(name) ? "" : "?";
    const member = `${key}${optional}: ${typeOf(property, reading, depth + 1)};`;
    const described = indent ? describedMember(property, member, indent) : member;
    length += described.length;
    if (length > DECLARATION_LIMITS.toolChars) throw new TooLong();
    members.push(described);
  }
  if (names.length > DECLARATION_LIMITS.properties) members.push(`${indent}[key: string]: unknown;`);
  if (!indent) return `{ ${members.join(" ")} }`;
  return `{\n${members.join("\n")}\n    }`;
}

/** A params property on its own line, its description's first sentence above it. */
function describedMember(property: unknown, member: string, indent: string): string {
  const description =
    typeof property === "object" && property !== null && !Array.isArray(property)
      ? (property as Record<string, unknown>).description
      : undefined;
  const text =
    typeof description === "string" ? comment(toolHint(description), DECLARATION_LIMITS.commentChars) : "";
  return text ? `${indent}/** ${text} */\n${indent}${member}` : `${indent}${member}`;
}

function combined(members: unknown[], reading: Reading, depth: number, separator: string): string {
  if (members.length === 0 || members.length > DECLARATION_LIMITS.members) return "unknown";
  const types = members.map((member) => typeOf(member, reading, depth + 1));
  if (separator === " & ") {
    const known = types.filter((type) => type !== "unknown");
    if (known.length === 0) return "unknown";
    return [...new Set(known)].map((type) => (type.includes(" | ") ? `(${type})` : type)).join(separator);
  }
  return types.includes("unknown") ? "unknown" : union(types);
}

/** Members joined with `|`, each once, in their order. */
function union(types: readonly string[]): string {
  return [...new Set(types)].join(" | ");
}

function arrayOf(type: string): string {
  return /^[\w$.]+$/.test(type) ? `${type}[]` : `Array<${type}>`;
}

/** A JSON primitive as a literal type; null for what cannot be one (or a string past `literalChars`). */
function literal(value: unknown): string | null {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return value.length <= DECLARATION_LIMITS.literalChars ? JSON.stringify(value) : null;
    case "number":
      return Number.isFinite(value) ? String(value) : null;
    case "boolean":
      return String(value);
    default:
      return null;
  }
}

/** The `properties` and `required` of an object schema, when it has properties. */
function properties(
  schema: unknown,
): { properties: Record<string, unknown>; required: ReadonlySet<string> } | null {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return null;
  const node = schema as Record<string, unknown>;
  const props = node.properties;
  if (typeof props !== "object" || props === null || Array.isArray(props)) return null;
  const required = Array.isArray(node.required)
    ? new Set(node.required.filter((name): name is string => typeof name === "string"))
    : new Set<string>();
  return { properties: props as Record<string, unknown>, required };
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`) within the tool's schema; undefined for any other. */
function resolveRef(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  const segments = ref.slice(2).split("/", MAX_POINTER_SEGMENTS + 1);
  if (segments.length > MAX_POINTER_SEGMENTS) return undefined;
  let node = root;
  for (const raw of segments) {
    const segment = pointerSegment(raw);
    if (segment === null || typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) {
      return undefined;
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** Segments of a `$ref` pointer followed; a longer pointer resolves to nothing. */
const MAX_POINTER_SEGMENTS = 16;

/** A JSON pointer segment (RFC 6901, URI-encoded in a `$ref`), or null when it is not one. */
function pointerSegment(raw: string): string | null {
  try {
    return decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return null;
  }
}

/**
 * Deferred names as a union within `room` characters: packs as one template literal each
 * (`` `pack__${string}` ``), the rest by name, sorted; null when there are none.
 */
function nameUnion(names: readonly string[], room: number): { union: string; left: number } | null {
  const members = new Set<string>();
  for (const name of names) {
    members.add(isPackTool(name) ? `\`${toolFamily(name)}__\${string}\`` : JSON.stringify(name));
  }
  if (members.size === 0) return null;
  const sorted = [...members].sort(byString((member) => member.slice(1)));
  const kept: string[] = [];
  let length = 0;
  for (const member of sorted) {
    length += member.length + 3;
    if (length > room && kept.length > 0) break;
    kept.push(member);
  }
  return { union: kept.join(" | "), left: sorted.length - kept.length };
}

/** Text for a `/** … *\/` comment: one line, at most `max` characters, unable to close it early. */
function comment(text: string, max: number): string {
  return cutAtWord(text.replace(/\s+/g, " ").trim(), max).replaceAll("*/", "*\\/");
}
