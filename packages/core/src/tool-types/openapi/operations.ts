import { PACK_SEPARATOR } from "../../ids";
import type { JsonSchema } from "../../json-schema";
import { boundJsonSchema } from "../../json-schema-bound";
import { JSON_SCHEMA_LIMITS } from "../../json-schema-size";
import { MAX_UPSTREAM_DESCRIPTION_CHARS, trimChar, upstreamDescription } from "../../text";
import type { JsonSchemaValidator } from "../../validation/json-schema-validator";
import type { SourceTool } from "../tool-type";
import {
  type ConversionRemarks,
  type SchemaDefinition,
  SchemaDefinitions,
  type SchemaDirection,
} from "./schema";

/** The methods whose operations become sub-tools; HEAD, OPTIONS and TRACE answer nothing a model needs. */
export const OPERATION_METHODS = ["get", "put", "post", "delete", "patch"] as const;
export type OperationMethod = (typeof OPERATION_METHODS)[number];

/**
 * Operations one pack offers at most; a larger document is cut (with a note). Microsoft Graph's
 * whole API (11,422 operations) is one pack.
 */
export const MAX_OPERATIONS = 20_000;
/**
 * The shape and rules of what `readOperations` answers. Lists compiled under another format are
 * not read back (`ObjectStoreCompiledOperations`): raise it with every change of the answer for
 * the same document (names, schemas, targets, notes). A test pins it to a fingerprint.
 */
export const OPERATION_LIST_FORMAT = 2;
/** Characters of an operation's description a sub-tool keeps: any upstream's description's. */
export const MAX_DESCRIPTION_CHARS = MAX_UPSTREAM_DESCRIPTION_CHARS;
/** Sub-tool names have at most this many characters in all (`pack__op`). */
const MAX_TOOL_NAME = 64;

/** Where a parameter travels. Cookie parameters are left out: a sub-tool sends no cookies. */
export type ParameterPlace = "path" | "query" | "header";

/** How one input property becomes part of the request. */
export interface ParameterTarget {
  /** The parameter's name in the request (path template, query key, header name). */
  readonly name: string;
  readonly in: ParameterPlace;
  /** The input property that carries it (the name, unless that is taken or unusable in a schema). */
  readonly property: string;
  /** OpenAPI serialisation: `simple`, `label`, `matrix` (path); `form`, `spaceDelimited`, `pipeDelimited`, `deepObject` (query). */
  readonly style: string;
  readonly explode: boolean;
  /** Declared with `content` rather than `schema`: the value is sent as JSON text. */
  readonly json: boolean;
}

/** What `invokeSubTool` needs to run one operation: `SourceTool.target` of an `openapi` sub-tool. */
export interface OperationTarget {
  readonly method: Uppercase<OperationMethod>;
  /** The path template, as the document writes it (`/pets/{petId}`). */
  readonly path: string;
  /** The operation's server, resolved; null when the document gives no absolute one (then `baseUrl` must). */
  readonly serverUrl: string | null;
  readonly parameters: readonly ParameterTarget[];
  /** The JSON request body, carried by the `body` property; null when the operation takes none. */
  readonly body: { readonly property: string; readonly mediaType: string; readonly required: boolean } | null;
}

/** An `openapi` pack's operations as source tools, and what was left out and why. */
export interface OperationList {
  readonly tools: readonly SourceTool[];
  readonly notes: readonly string[];
}

/** What reading operations depends on beyond the document. */
export interface OperationListOptions {
  /** The pack document's name: sub-tool names (`pack__op`) must fit 64 characters. */
  readonly pack: string;
  /** The spec's own URL: relative server URLs resolve against it. */
  readonly specUrl?: URL;
  /** `parameters.operations`: only these become sub-tools. */
  readonly allow?: readonly string[];
  /** `parameters.tags`: only operations carrying one of these tags become sub-tools. */
  readonly tags?: readonly string[];
  /** Checks each operation's input schema (the compiling thread's own). */
  readonly jsonSchemas: JsonSchemaValidator;
}

/** The input property of the JSON request body. */
const BODY_PROPERTY = "body";
/** What model APIs accept as property names (Anthropic: `^[a-zA-Z0-9_.-]{1,64}$`). */
const PROPERTY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
/** Form bodies are sent URL-encoded from the body's top-level properties. */
export const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
/**
 * Header parameters that are never inputs: the three OpenAPI says to ignore, and those that
 * frame the request or pick its virtual host, which the HTTP client sets and a model must not.
 */
const IGNORED_HEADERS = new Set([
  "accept",
  "content-type",
  "authorization",
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
]);

/**
 * Every operation of an OpenAPI 3.x document (its `$ref`s in place) as a source tool, in document
 * order: its name from `operationId` (snake_case) or method and path, its description from
 * summary and description, its input schema from path, query and header parameters and the JSON
 * request body, the schemas it refers to as its own `$defs` (`SchemaDefinitions`). What the
 * service cannot check of a schema is left to the upstream and said in a note; only an operation
 * whose required body is neither JSON nor a form, and those beyond `MAX_OPERATIONS`, are left
 * out (with a note).
 */
export function readOperations(
  document: Readonly<Record<string, unknown>>,
  options: OperationListOptions,
): OperationList {
  const notes: string[] = [];
  const tools: SourceTool[] = [];
  const maxName = Math.max(1, MAX_TOOL_NAME - options.pack.length - PACK_SEPARATOR.length);
  const allow = options.allow ? new Set(options.allow) : null;
  const matched = new Set<string>();
  const tagFilter = options.tags ? new Set(options.tags) : null;
  const matchedTags = new Set<string>();
  const documentServers = serverUrlOf(document.servers, options.specUrl);
  const context: OperationContext = {
    definitions: new SchemaDefinitions(document, (pattern) => options.jsonSchemas.patternProblem(pattern)),
    jsonSchemas: options.jsonSchemas,
  };
  const items = pathItems(document, context.definitions);
  const operationNames = namesOf(items, options.pack, maxName);

  for (const [path, item] of items) {
    const pathServers =
      item.servers === undefined ? documentServers : serverUrlOf(item.servers, options.specUrl);
    for (const method of OPERATION_METHODS) {
      const operation = record(item[method]);
      if (!operation) continue;
      const label = `${method.toUpperCase()} ${path}`;
      const operationId = typeof operation.operationId === "string" ? operation.operationId : undefined;
      const sourceName = operationNames.get(label) ?? nameOf(operationId, method, path, maxName);
      const tags = tagsOf(operation);
      if (tagFilter && !tags.some((tag) => tagFilter.has(tag))) continue;
      if (tagFilter) for (const tag of tags) if (tagFilter.has(tag)) matchedTags.add(tag);
      if (allow) {
        const keys = [operationId, label, `${method} ${path}`, sourceName].filter((key) => key !== undefined);
        const key = keys.find((candidate) => allow.has(candidate));
        if (key === undefined) continue;
        matched.add(key);
      }
      if (tools.length >= MAX_OPERATIONS) {
        notes.push(`${label}: left out, the pack offers at most ${MAX_OPERATIONS} operations`);
        continue;
      }
      const serverUrl =
        operation.servers === undefined ? pathServers : serverUrlOf(operation.servers, options.specUrl);
      const built = buildOperation(operation, item, method, path, serverUrl, context);
      if ("note" in built) {
        notes.push(`${label}: left out, ${built.note}`);
        continue;
      }
      for (const remark of built.remarks) notes.push(`${label}: ${remark}`);
      const aliases = [operationId, label].filter(
        (alias): alias is string => alias !== undefined && alias !== sourceName,
      );
      tools.push({
        sourceName,
        ...(aliases.length > 0 ? { aliases } : {}),
        description: describe(operation, label),
        inputSchema: built.inputSchema,
        target: built.target,
        ...(tags[0] !== undefined && snake(tags[0]) !== "" ? { family: snake(tags[0]) } : {}),
      });
    }
  }
  for (const entry of options.allow ?? []) {
    if (!matched.has(entry)) notes.push(`operations: '${entry}' names no operation of the document`);
  }
  for (const tag of options.tags ?? []) {
    if (!matchedTags.has(tag)) notes.push(`tags: '${tag}' is the tag of no operation of the document`);
  }
  return { tools, notes };
}

/** The document's path items, in its order; one given by a `$ref` is what it points at. */
function pathItems(
  document: Readonly<Record<string, unknown>>,
  definitions: SchemaDefinitions,
): (readonly [string, Record<string, unknown>])[] {
  const items: (readonly [string, Record<string, unknown>])[] = [];
  for (const [path, pathItem] of Object.entries(record(document.paths) ?? {})) {
    const item = record(resolved(pathItem, definitions));
    if (item) items.push([path, item]);
  }
  return items;
}

/** An operation's OpenAPI tags (strings only). */
function tagsOf(operation: Record<string, unknown>): string[] {
  return Array.isArray(operation.tags)
    ? operation.tags.filter((tag): tag is string => typeof tag === "string")
    : [];
}

/** The target of a source tool listed by `readOperations`, or null when it is not one. */
export function operationTarget(tool: SourceTool): OperationTarget | null {
  const target = tool.target as Partial<OperationTarget> | undefined;
  return target && typeof target.method === "string" && typeof target.path === "string"
    ? (target as OperationTarget)
    : null;
}

/** What building one operation reads beside the operation itself. */
interface OperationContext {
  readonly definitions: SchemaDefinitions;
  readonly jsonSchemas: JsonSchemaValidator;
}

function buildOperation(
  operation: Record<string, unknown>,
  pathItem: Record<string, unknown>,
  method: OperationMethod,
  path: string,
  serverUrl: string | null,
  context: OperationContext,
): { inputSchema: JsonSchema; target: OperationTarget; remarks: string[] } | { note: string } {
  const { definitions } = context;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const parameters: ParameterTarget[] = [];
  const remarks: string[] = [];
  const converted: ConversionRemarks = { patterns: [], unusable: [] };
  const refs = new Set<string>();
  const found = bodyOf(resolved(operation.requestBody, definitions));
  if (found && "note" in found) return found;
  if (found && "remark" in found) remarks.push(found.remark);
  const body = found && "remark" in found ? null : found;
  // The body's property is claimed first, so a parameter named `body` moves aside.
  const taken = new Set(body ? [BODY_PROPERTY] : []);
  const convert = (schema: unknown, direction: SchemaDirection) => {
    const result = definitions.convert(schema, direction, converted);
    for (const ref of result.refs) refs.add(ref);
    return result.schema;
  };

  for (const parameter of parametersOf(pathItem, operation, definitions, converted)) {
    const place = parameter.in;
    if (place !== "path" && place !== "query" && place !== "header") continue;
    if (place === "header" && IGNORED_HEADERS.has(parameter.name.toLowerCase())) continue;
    const property = propertyName(parameter.name, place, taken);
    taken.add(property);
    const content = contentSchema(parameter.content);
    const schema = convert(content ?? parameter.schema ?? {}, "any");
    const description = typeof parameter.description === "string" ? parameter.description.trim() : "";
    properties[property] = description ? { ...schema, description } : schema;
    if (place === "path" || parameter.required === true) required.push(property);
    const style =
      typeof parameter.style === "string" ? parameter.style : place === "query" ? "form" : "simple";
    parameters.push({
      name: parameter.name,
      in: place,
      property,
      style,
      explode: typeof parameter.explode === "boolean" ? parameter.explode : style === "form",
      json: content !== undefined,
    });
  }
  if (body) {
    const schema = convert(body.schema, "request");
    properties[BODY_PROPERTY] = body.description ? { ...schema, description: body.description } : schema;
    if (body.required) required.push(BODY_PROPERTY);
  }

  const root: JsonSchema = {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
  const checked = checkedSchema(root, refs, context, converted);
  remarks.push(...unchecked(converted, checked.cut));
  return {
    inputSchema: checked.schema,
    remarks,
    target: {
      method: method.toUpperCase() as Uppercase<OperationMethod>,
      path,
      serverUrl,
      parameters,
      body: body ? { property: BODY_PROPERTY, mediaType: body.mediaType, required: body.required } : null,
    },
  };
}

/**
 * The input schema a sub-tool offers and checks: exactly the operation's, with the definitions it
 * reaches in `$defs`, when that is within the JSON Schema limits; else cut to them
 * (`boundJsonSchema`: what lies nearest the root kept, the rest left to the upstream). A keyword
 * the checks refuse (a duplicate in an `enum`, a pattern past the patterns' budget) is left out
 * and said; what still does not pass leaves the shape alone (its properties, which are
 * required). Never none: a schema this service cannot check whole still yields its operation.
 * The checks are `gateProblems`' (no validator is generated here: each compiles at its first call).
 */
function checkedSchema(
  root: JsonSchema,
  refs: ReadonlySet<string>,
  context: OperationContext,
  converted: ConversionRemarks,
): { schema: JsonSchema; cut: string[] } {
  const { definitions, jsonSchemas } = context;
  const reached = new Set<string>();
  const take = (key: string) => {
    const definition = definitions.definition(key);
    if (definition && !reached.has(key)) {
      reached.add(key);
      const said = definitions.remarks(key);
      if (said) {
        converted.patterns.push(...said.patterns);
        converted.unusable.push(...said.unusable);
      }
    }
    return definition;
  };
  const exact = withDefinitions(root, refs, take);
  if (exact) {
    const problems = jsonSchemas.gateProblems(exact);
    if (problems.length === 0) return { schema: exact, cut: [] };
    if (problems.every((problem) => problem.pointer !== null)) {
      const repaired = repair(structuredClone(exact), problems, jsonSchemas);
      if (repaired) return repaired;
    }
  }
  const resolve = (ref: string) => {
    const key = definitions.keyOf(decodePointer(ref.replace(/^#\/\$defs\//, "")));
    return key === undefined ? undefined : take(key)?.schema;
  };
  const bounded = boundJsonSchema(root, resolve);
  const problems = jsonSchemas.gateProblems(bounded.schema);
  if (problems.length === 0) return { schema: bounded.schema, cut: [...bounded.cut] };
  const repaired = problems.every((problem) => problem.pointer !== null)
    ? repair(bounded.schema, problems, jsonSchemas)
    : null;
  if (repaired) return { schema: repaired.schema, cut: [...bounded.cut, ...repaired.cut] };
  const shape: JsonSchema = {
    type: "object",
    properties: Object.fromEntries(Object.keys(root.properties ?? {}).map((name) => [name, {}])),
    ...(root.required ? { required: root.required } : {}),
    additionalProperties: false,
  };
  return {
    schema: shape,
    cut: [`every property's own schema (${problems[0]?.message ?? "it does not pass"})`],
  };
}

/** Rounds of leaving out what the checks refuse, one keyword each, before giving up on a schema. */
const MAX_REPAIRS = 16;

/**
 * `schema` (a copy of its own) with each keyword the checks refuse left out, round by round; null
 * when a problem names no place or the rounds run out.
 */
function repair(
  schema: JsonSchema,
  first: readonly { readonly pointer: string | null; readonly message: string }[],
  jsonSchemas: JsonSchemaValidator,
): { schema: JsonSchema; cut: string[] } | null {
  const cut: string[] = [];
  let problems = first;
  for (let round = 0; round < MAX_REPAIRS; round++) {
    for (const problem of problems) {
      if (problem.pointer === null || !leaveOut(schema, problem.pointer)) return null;
      cut.push(`${problem.pointer} (${problem.message})`);
    }
    problems = jsonSchemas.gateProblems(schema);
    if (problems.length === 0) return { schema, cut };
  }
  return null;
}

/** Removes the keyword at `pointer` (a subschema in a map or a list becomes `{}`); false when there is none. */
function leaveOut(schema: JsonSchema, pointer: string): boolean {
  const tokens = pointer.split("/").slice(1).map(decodePointer);
  const last = tokens.pop();
  if (last === undefined) return false;
  let parent: unknown = schema;
  for (const token of tokens) {
    if (typeof parent !== "object" || parent === null) return false;
    parent = (parent as Record<string, unknown>)[token];
  }
  if (typeof parent !== "object" || parent === null || !Object.hasOwn(parent, last)) return false;
  const container = tokens.at(-1);
  if (Array.isArray(parent) || (container !== undefined && SCHEMA_CONTAINERS.has(container))) {
    (parent as Record<string, unknown>)[last] = {};
  } else {
    delete (parent as Record<string, unknown>)[last];
  }
  return true;
}

/** Keywords whose members are subschemas by name: a member at fault is replaced, not removed. */
const SCHEMA_CONTAINERS = new Set(["properties", "dependentSchemas", "$defs", "definitions"]);

/**
 * `root` with the definitions its refs reach in `$defs`, or null when they hold more nodes than
 * one schema may (then the exact form cannot pass the limits anyway). Walked by a queue.
 */
function withDefinitions(
  root: JsonSchema,
  refs: ReadonlySet<string>,
  take: (key: string) => SchemaDefinition | undefined,
): JsonSchema | null {
  if (refs.size === 0) return root;
  const defs: Record<string, JsonSchema | boolean> = {};
  const queue = [...refs];
  const seen = new Set(queue);
  let nodes = 0;
  for (let head = 0; head < queue.length; head++) {
    const definition = take(queue[head]!);
    if (!definition) continue;
    nodes += definition.nodes;
    if (nodes > JSON_SCHEMA_LIMITS.maxNodes) return null;
    defs[definition.name] = definition.schema;
    for (const ref of definition.refs) {
      if (!seen.has(ref)) {
        seen.add(ref);
        queue.push(ref);
      }
    }
  }
  return { ...root, $defs: defs };
}

/** What of an offered operation's schema is not checked here, for the pack's notes. */
function unchecked(converted: ConversionRemarks, cut: readonly string[]): string[] {
  const said: string[] = [];
  const patterns = [...new Set(converted.patterns)];
  if (patterns.length > 0) {
    said.push(
      `not checked here, left to the API: ${listed(patterns.map((pattern) => `the pattern ${JSON.stringify(pattern)}`))} (RE2 cannot run ${patterns.length === 1 ? "it" : "them"}: lookaround or backreferences)`,
    );
  }
  const unusable = [...new Set(converted.unusable)];
  if (unusable.length > 0) said.push(`not checked here, left to the API: ${listed(unusable)}`);
  if (cut.length > 0) {
    const { maxNodes, maxDepth, maxCombinatorNesting } = JSON_SCHEMA_LIMITS;
    said.push(
      `checked in part (a schema here holds at most ${maxNodes} nodes, ${maxDepth} levels, combinators ${maxCombinatorNesting} deep), the rest left to the API: ${listed([...new Set(cut)])}`,
    );
  }
  return said;
}

/** At most a few entries, and how many more. */
function listed(entries: readonly string[]): string {
  const shown = entries.slice(0, MAX_LISTED);
  const more = entries.length - shown.length;
  return `${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/** Entries one note lists by name. */
const MAX_LISTED = 5;

/** A value given by a `$ref` (a parameter, a request body, a path item) as what it points at. */
function resolved(value: unknown, definitions: SchemaDefinitions): unknown {
  const item = record(value);
  return item && typeof item.$ref === "string" ? definitions.resolve(item.$ref) : value;
}

function decodePointer(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: unknown;
  readonly description?: unknown;
  readonly schema?: unknown;
  readonly content?: unknown;
  readonly style?: unknown;
  readonly explode?: unknown;
}

/**
 * The path item's parameters with the operation's, an operation's one replacing the path's of the
 * same name and place; a parameter given by a `$ref` is what it points at.
 */
function parametersOf(
  pathItem: Record<string, unknown>,
  operation: Record<string, unknown>,
  definitions: SchemaDefinitions,
  converted: ConversionRemarks,
): Parameter[] {
  const merged = new Map<string, Parameter>();
  for (const list of [pathItem.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const parameter = record(resolved(item, definitions));
      if (!parameter && typeof record(item)?.$ref === "string") {
        converted.unusable.push(
          `the parameter $ref '${String(record(item)?.$ref).slice(0, 200)}' (it points at nothing)`,
        );
      }
      if (!parameter || typeof parameter.name !== "string" || typeof parameter.in !== "string") continue;
      merged.set(`${parameter.in} ${parameter.name}`, parameter as unknown as Parameter);
    }
  }
  return [...merged.values()];
}

/** The schema of a parameter declared with `content` (its one media type), or undefined. */
function contentSchema(content: unknown): unknown {
  const first = Object.values(record(content) ?? {})[0];
  return first === undefined ? undefined : (record(first)?.schema ?? {});
}

/** The JSON request body; a note when the operation needs a body that is not JSON. */
function bodyOf(
  requestBody: unknown,
):
  | { schema: unknown; mediaType: string; required: boolean; description: string }
  | { note: string }
  | { remark: string }
  | null {
  const body = record(requestBody);
  if (!body) return null;
  const content = record(body.content) ?? {};
  const mediaTypes = Object.keys(content);
  const mediaType =
    mediaTypes.find((type) => type.toLowerCase() === "application/json") ??
    mediaTypes.find((type) => JSON_MEDIA_TYPE.test(type)) ??
    mediaTypes.find((type) => FORM_MEDIA_TYPE.test(type));
  const required = body.required === true;
  if (mediaType === undefined) {
    const what = `its request body is ${mediaTypes.join(", ") || "of no media type"}; only JSON and form (application/x-www-form-urlencoded) bodies are sent`;
    return required ? { note: what } : { remark: `offered without its optional request body: ${what}` };
  }
  return {
    schema: record(content[mediaType])?.schema ?? {},
    mediaType,
    required,
    description: typeof body.description === "string" ? body.description.trim() : "",
  };
}

/** A parameter's input property: its name where a model API accepts it and it is free, else one made from it. */
function propertyName(name: string, place: ParameterPlace, taken: ReadonlySet<string>): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || place;
  if (PROPERTY_NAME.test(cleaned) && !taken.has(cleaned)) return cleaned;
  const placed = `${place}_${cleaned}`.slice(0, 64);
  let candidate = placed;
  for (let n = 2; taken.has(candidate); n++) candidate = `${placed.slice(0, 60)}_${n}`;
  return candidate;
}

/**
 * The operation's name as the pack shows it: `operationId` in snake_case (`getPetById` →
 * `get_pet_by_id`), else method and path (`GET /pets/{id}` → `get_pets_id`), cut to fit.
 */
export function nameOf(
  operationId: string | undefined,
  method: string,
  path: string,
  maxLength = 64,
): string {
  const name = fullName(operationId, method, path);
  return trimChar(name.slice(0, maxLength), "_", "end") || method;
}

/** The operation's whole name in snake_case, before any shortening. */
function fullName(operationId: string | undefined, method: string, path: string): string {
  const fromId = operationId === undefined ? "" : snake(operationId);
  return fromId || snake(`${method} ${path.replace(/[{}]/g, "")}`) || method;
}

/**
 * Every operation's sub-tool name, by `METHOD /path`, decided for the whole document at once —
 * so a name does not depend on the order of operations, nor on `operations:` / `tags:` picking
 * some. A name that fits is the operation's whole name. A longer one is shortened by rule
 * (`shortenings`); when two shortened names meet, the later (by whole name) takes its next
 * shortening. Only operations whose whole names are the same are numbered (`_2`, `_3`, in order
 * of method and path).
 */
function namesOf(
  items: readonly (readonly [string, Record<string, unknown>])[],
  pack: string,
  maxName: number,
): Map<string, string> {
  const byFull = new Map<string, { labels: string[]; head: number }>();
  for (const [path, item] of items) {
    for (const method of OPERATION_METHODS) {
      const operation = record(item[method]);
      if (!operation) continue;
      const operationId = typeof operation.operationId === "string" ? operation.operationId : undefined;
      const full = fullName(operationId, method, path);
      const entry = byFull.get(full) ?? { labels: [], head: headWords(full, tagsOf(operation)[0]) };
      entry.labels.push(`${method.toUpperCase()} ${path}`);
      byFull.set(full, entry);
    }
  }
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const fulls = [...byFull.keys()].sort();
  // Whole names first: a name that fits is never moved by a shortened one.
  const ordered = [
    ...fulls.filter((full) => full.length <= maxName),
    ...fulls.filter((full) => full.length > maxName),
  ];
  for (const full of ordered) {
    const { labels, head } = byFull.get(full)!;
    labels.sort();
    const pick = (max: number) =>
      shortenings(full, pack, max, head).find((candidate) => !taken.has(candidate)) ?? null;
    // The numbered names' base, by the suffix's length.
    const bases = new Map<number, string>();
    const baseFor = (suffix: string) => {
      let base = bases.get(suffix.length);
      if (base === undefined) {
        base = shortenings(full, pack, maxName - suffix.length, head)[0] ?? "";
        bases.set(suffix.length, base);
      }
      return base;
    };
    labels.forEach((label, index) => {
      let name = index === 0 ? pick(maxName) : null;
      for (let n = Math.max(2, index + 1); name === null; n++) {
        const suffix = `_${n}`;
        const candidate = `${baseFor(suffix)}${suffix}`;
        if (!taken.has(candidate)) name = candidate;
      }
      taken.add(name);
      names.set(label, name);
    });
  }
  return names;
}

/**
 * How many leading words of a name no shortening leaves out: the operation's tag and the verb
 * after it when the name starts with its tag (GitHub's `issues/create-comment`), else the first
 * word (`getPetById`).
 */
function headWords(full: string, tag: string | undefined): number {
  const tagName = tag === undefined ? "" : snake(tag);
  return tagName !== "" && full.startsWith(`${tagName}_`) ? tagName.split("_").length + 1 : 1;
}

/** Words that carry no meaning a name needs once it must be shortened. */
const FILLER_WORDS = new Set(["a", "an", "the", "for", "of", "by", "to", "from", "with", "in", "on", "at"]);
/** Long words and the short forms API names use for them. */
const SHORT_WORDS: Readonly<Record<string, string>> = {
  organization: "org",
  organizations: "orgs",
  repository: "repo",
  repositories: "repos",
  authenticated: "auth",
  configuration: "config",
  configurations: "configs",
  application: "app",
  applications: "apps",
  environment: "env",
  environments: "envs",
  information: "info",
  administrator: "admin",
  identifier: "id",
  parameters: "params",
  statistics: "stats",
  directory: "dir",
};

/**
 * The ways a name may be shortened to `max` characters, best first. A name that fits is itself.
 * Else, rule by rule until it fits: later repeats of a word and the pack's own words left out
 * (`actions_get_github_actions_…` in pack `github` → `actions_get_…`), then filler words (`for`,
 * `the`, `by` …), then long words in their usual short form (`organization` → `org`). Still too
 * long: words after the head (`headWords`: tag and verb) are left out from the front of the
 * middle, keeping the distinguishing tail, the window moving on for each further way. Last, the
 * name cut to `max`.
 */
function shortenings(full: string, pack: string, max: number, head: number): string[] {
  if (max <= 0) return [];
  if (full.length <= max) return [full];
  // A name past this is no one's readable name: only its start is shortened, so the cost of the
  // rules below stays bounded whatever a document's operationIds hold.
  let words = full
    .slice(0, MAX_NAME_SOURCE)
    .split("_")
    .filter((word) => word !== "");
  const packWords = new Set(snake(pack).split("_"));
  const rules: ((list: string[]) => string[])[] = [
    (list) => {
      const seen = new Set<string>();
      return list.filter((word, index) => {
        const keep = index < head || (!packWords.has(word) && !seen.has(word));
        seen.add(word);
        return keep;
      });
    },
    (list) =>
      list.filter((word, index) => index < head || index === list.length - 1 || !FILLER_WORDS.has(word)),
    (list) => list.map((word) => SHORT_WORDS[word] ?? word),
  ];
  for (const rule of rules) {
    const next = rule(words);
    if (next.length > 0) words = next;
    if (words.join("_").length <= max) return [words.join("_")];
  }
  const found: string[] = [];
  const length = words.join("_").length;
  const first = Math.max(1, Math.min(head, words.length - 2));
  for (let start = first; start < words.length - 1 && start < first + MAX_WINDOWS; start++) {
    // Leaving out words[start..end) saves their characters and one `_` each.
    let saved = 0;
    for (let end = start + 1; end < words.length; end++) {
      saved += words[end - 1]!.length + 1;
      if (length - saved <= max) {
        found.push([...words.slice(0, start), ...words.slice(end)].join("_"));
        break;
      }
    }
  }
  const cut = trimChar(words.join("_").slice(0, max), "_", "end");
  if (cut !== "") found.push(cut);
  return [...new Set(found)];
}

/** Characters of a whole name the shortening rules read. */
const MAX_NAME_SOURCE = 256;
/** Positions the left-out window of words is tried at. */
const MAX_WINDOWS = 16;

function snake(text: string): string {
  const words = splitAcronyms(text.replace(/([a-z0-9])([A-Z])/g, "$1_$2"));
  return trimChar(words.toLowerCase().replace(/[^a-z0-9]+/g, "_"), "_");
}

/** `HTTPServer` → `HTTP_Server`: a break before an acronym's last capital when a word follows. */
function splitAcronyms(text: string): string {
  let result = "";
  for (let i = 0; i < text.length; i++) {
    if (i > 0 && isUpper(text, i - 1) && isUpper(text, i) && isLower(text, i + 1)) result += "_";
    result += text[i];
  }
  return result;
}

function isUpper(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 65 && code <= 90;
}

function isLower(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 97 && code <= 122;
}

function describe(operation: Record<string, unknown>, label: string): string {
  const parts = [operation.summary, operation.description]
    .filter((part): part is string => typeof part === "string")
    .map((part) => part.trim())
    .filter((part, index, all) => part !== "" && all.indexOf(part) === index);
  if (parts.length === 0) parts.push(label);
  if (operation.deprecated === true) parts.unshift("Deprecated.");
  return upstreamDescription(parts.join("\n\n"));
}

/**
 * The first server's URL with its variables at their defaults, resolved against the spec's URL
 * when relative; null when there is no absolute http(s) URL to be had. Without `servers`, OpenAPI
 * says `/`.
 */
function serverUrlOf(servers: unknown, specUrl: URL | undefined): string | null {
  const first = Array.isArray(servers) ? record(servers[0]) : undefined;
  let text = typeof first?.url === "string" ? first.url : "/";
  const variables = record(first?.variables) ?? {};
  text = text.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
    const value = record(variables[name])?.default;
    return typeof value === "string" ? value : whole;
  });
  let url: URL;
  try {
    url = specUrl ? new URL(text, specUrl) : new URL(text);
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
