import { PACK_SEPARATOR } from "../../ids";
import type { JsonSchema } from "../../json-schema";
import { MAX_UPSTREAM_DESCRIPTION_CHARS, trimChar, upstreamDescription } from "../../text";
import type { JsonSchemaValidator } from "../../validation/json-schema-validator";
import type { SourceTool } from "../tool-type";
import { SchemaConverter, UnusableSchemaError } from "./schema";

/** The methods whose operations become sub-tools; HEAD, OPTIONS and TRACE answer nothing a model needs. */
export const OPERATION_METHODS = ["get", "put", "post", "delete", "patch"] as const;
export type OperationMethod = (typeof OPERATION_METHODS)[number];

/** Operations one pack offers at most; a larger document is cut (with a note), never loaded whole. */
export const MAX_OPERATIONS = 10_000;
/**
 * The shape and rules of what `readOperations` answers. Lists compiled under another format are
 * not read back (`ObjectStoreCompiledOperations`): raise it with every change of the answer for
 * the same document (names, schemas, targets, notes). A test pins it to a fingerprint.
 */
export const OPERATION_LIST_FORMAT = 1;
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
 * Every operation of a dereferenced OpenAPI 3.x document as a source tool, in document order:
 * its name from `operationId` (snake_case) or method and path, its description from summary and
 * description, its input schema from path, query and header parameters and the JSON request
 * body. An operation whose schema is unusable, or whose only body is not JSON, is left out with
 * a note; so are operations beyond `MAX_OPERATIONS`.
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
  const operationNames = namesOf(document, options.pack, maxName);

  for (const [path, pathItem] of Object.entries(record(document.paths) ?? {})) {
    const item = record(pathItem);
    if (!item) continue;
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
      const built = buildOperation(operation, item, method, path, serverUrl, options.jsonSchemas);
      if ("note" in built) {
        notes.push(`${label}: left out, ${built.note}`);
        continue;
      }
      if (built.remark) notes.push(`${label}: ${built.remark}`);
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

function buildOperation(
  operation: Record<string, unknown>,
  pathItem: Record<string, unknown>,
  method: OperationMethod,
  path: string,
  serverUrl: string | null,
  jsonSchemas: JsonSchemaValidator,
): { inputSchema: JsonSchema; target: OperationTarget; remark?: string } | { note: string } {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const parameters: ParameterTarget[] = [];
  const found = bodyOf(operation.requestBody);
  if (found && "note" in found) return found;
  const remark = found && "remark" in found ? found.remark : undefined;
  const body = found && "remark" in found ? null : found;
  // The body's property is claimed first, so a parameter named `body` moves aside.
  const taken = new Set(body ? [BODY_PROPERTY] : []);
  const parameterConverter = new SchemaConverter("any");

  try {
    for (const parameter of parametersOf(pathItem, operation)) {
      const place = parameter.in;
      if (place !== "path" && place !== "query" && place !== "header") continue;
      if (place === "header" && IGNORED_HEADERS.has(parameter.name.toLowerCase())) continue;
      const property = propertyName(parameter.name, place, taken);
      taken.add(property);
      const content = contentSchema(parameter.content);
      const schema = parameterConverter.convert(content ?? parameter.schema ?? {});
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
      const schema = new SchemaConverter("request").convert(body.schema);
      properties[BODY_PROPERTY] = body.description ? { ...schema, description: body.description } : schema;
      if (body.required) required.push(BODY_PROPERTY);
    }
  } catch (error) {
    if (error instanceof UnusableSchemaError) return { note: error.message };
    throw error;
  }

  const inputSchema: JsonSchema = {
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
  const problem = jsonSchemas.inputSchemaProblem(inputSchema);
  if (problem) return { note: `its input schema is ${problem}` };
  return {
    inputSchema,
    ...(remark ? { remark } : {}),
    target: {
      method: method.toUpperCase() as Uppercase<OperationMethod>,
      path,
      serverUrl,
      parameters,
      body: body ? { property: BODY_PROPERTY, mediaType: body.mediaType, required: body.required } : null,
    },
  };
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

/** The path item's parameters with the operation's, an operation's one replacing the path's of the same name and place. */
function parametersOf(pathItem: Record<string, unknown>, operation: Record<string, unknown>): Parameter[] {
  const merged = new Map<string, Parameter>();
  for (const list of [pathItem.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const parameter = record(item);
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
  document: Readonly<Record<string, unknown>>,
  pack: string,
  maxName: number,
): Map<string, string> {
  const byFull = new Map<string, { labels: string[]; head: number }>();
  for (const [path, pathItem] of Object.entries(record(document.paths) ?? {})) {
    const item = record(pathItem);
    if (!item) continue;
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
