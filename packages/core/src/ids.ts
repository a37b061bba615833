import * as v from "valibot";
import { Errors } from "./errors";

/** Tenant and project ids: lowercase, digits, `_` and `-`, at most 63 characters. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** The project id that addresses the tenant layer. */
export const TENANT_PROJECT = "_tenant";
/** Tool names: lowercase snake_case, at most 64 characters. `__` is reserved for pack sub-tools. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** Model instances name folders of the catalog (`model/{instance}/…`), spelled like tenant ids. */
export const INSTANCE_PATTERN = ID_PATTERN;
/** Model slugs: one plain path segment (dots allowed: `gpt-4.1`); `_provider` can never be one. */
export const SLUG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/**
 * Suffix of a store's in-flight temp files (the filesystem store writes `{name}.{random}.vance-tmp`
 * and renames it into place): no document path segment may end with it, so every store agrees.
 */
export const STORE_TEMP_SUFFIX = ".vance-tmp";
/**
 * Suffix of the filesystem store's sidecar files (`{name}.vance-meta`: who wrote the document and
 * when): no document path segment may end with it either.
 */
export const STORE_META_SUFFIX = ".vance-meta";
/** Top-level folders whose documents are validated on write; matched case-sensitively. */
const VALIDATED_FOLDERS = ["server-tools", "mcp-servers"] as const;
/** Document paths have at most this many characters. */
export const MAX_PATH_LENGTH = 512;

/**
 * A string schema whose rule is `problem` (null when fine), so the schema and the `assert…`
 * function of one rule can never disagree; the issue message says what is wrong.
 */
function ruleSchema(what: string, problem: (value: string) => string | null) {
  return v.pipe(
    v.string(`${what} must be a string`),
    v.check(
      (value) => problem(value) === null,
      (issue) => `invalid ${what}: ${problem(String(issue.input))}`,
    ),
  );
}

/** The rule an issue of a {@link ruleSchema} states (its message without `invalid {what}: `), or undefined. */
export function ruleOfIssue(message: string | undefined): string | undefined {
  return message === undefined ? undefined : /^invalid [^:]+: (.+)$/s.exec(message)?.[1];
}

const ID_RULE =
  "lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 63 characters";

/** A tenant id (API.md "Ids"). */
export const TenantIdSchema = ruleSchema("tenant id", (tenant) => (ID_PATTERN.test(tenant) ? null : ID_RULE));

/** A project id, or `_tenant` for the tenant layer. */
export const ProjectIdSchema = ruleSchema("project id", (project) =>
  project === TENANT_PROJECT || ID_PATTERN.test(project) ? null : `${ID_RULE}; or ${TENANT_PROJECT}`,
);

/** A label, as tools carry it and `@label` selects it: spelled like an id. */
export const LabelSchema = ruleSchema("label", (label) => (ID_PATTERN.test(label) ? null : ID_RULE));

/** Throws `invalid_id` unless `tenant` is a valid tenant id. */
export function assertTenantId(tenant: string): void {
  if (!v.is(TenantIdSchema, tenant)) throw Errors.invalidId("tenant", tenant, ID_RULE);
}

/** Throws `invalid_id` unless `project` is a valid project id or `_tenant`. */
export function assertProjectId(project: string): void {
  if (!v.is(ProjectIdSchema, project))
    throw Errors.invalidId("project", project, `${ID_RULE}; or ${TENANT_PROJECT}`);
}

/**
 * The meta-tools' names (spec §13): the capability floor's `tool_list` and `tool_description`,
 * `invoke_tool`, and the optional `tool_search` and `execute_javascript` — spelled here only.
 */
export const META_TOOL = Object.freeze({
  list: "tool_list",
  describe: "tool_description",
  invoke: "invoke_tool",
  search: "tool_search",
  executeJavascript: "execute_javascript",
} as const);

/**
 * Where the service keeps what it compiles from documents (a layer's tool index, an OpenAPI
 * document's operation list): `_compiled/{tenant}/{layer}/…` in the documents store. `_compiled`
 * is no tenant id, so no document's key starts with it; listings and bucket events pass over it.
 */
export const COMPILED_PREFIX = "_compiled/";

/** Whether an object key is one of the service's compiled objects (not a document). */
export function isCompiledKey(key: string): boolean {
  return key.startsWith(COMPILED_PREFIX);
}

/** Separates a pack from its operation in a sub-tool name: `pack__op`. */
export const PACK_SEPARATOR = "__";

/** The operation part of a sub-tool name of `pack` (`search` of `jira__search`). */
export function operationOf(name: string, pack: string): string {
  return name.slice(pack.length + PACK_SEPARATOR.length);
}

/**
 * A comma-separated list (a query parameter, a setting): entries trimmed, empty ones dropped.
 * The one spelling every `?with=`, `?chain=`, `?models=` and list setting reads through.
 */
export function commaList(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** The pack of a sub-tool name (`jira` of `jira__search`), or `null` when the name is no sub-tool's. */
export function packOf(name: string): string | null {
  const split = name.indexOf(PACK_SEPARATOR);
  return split > 0 ? name.slice(0, split) : null;
}

/** Why a configured tool name is unacceptable, or `null` when it is fine. */
export function toolNameProblem(name: string): string | null {
  if (name.includes("@")) return "'@' is reserved for label selectors";
  if (!TOOL_NAME_PATTERN.test(name))
    return "must be lowercase snake_case: [a-z][a-z0-9_]*, at most 64 characters";
  if (packOf(name) !== null) return "'__' is reserved for pack sub-tools";
  return null;
}

/** Why a pack sub-tool name (`pack__op`, at most 64 characters in all) is unacceptable, or `null`. */
export function subToolNameProblem(name: string): string | null {
  if (name.includes("@")) return "'@' is reserved for label selectors";
  if (!TOOL_NAME_PATTERN.test(name))
    return "must be lowercase snake_case: [a-z][a-z0-9_]*, at most 64 characters";
  const pack = packOf(name);
  if (pack === null) return "a pack sub-tool is named pack__op";
  if (pack.length + PACK_SEPARATOR.length === name.length) return "the operation after '__' is missing";
  return null;
}

/** Why a name a call, recipe or client declaration may use (a tool's or a pack sub-tool's) is unacceptable, or `null`. */
export function invocableToolNameProblem(name: string): string | null {
  return packOf(name) === null ? toolNameProblem(name) : subToolNameProblem(name);
}

/** A configured tool's name (the document `server-tools/{name}.yaml`) or a built-in's. */
export const ToolNameSchema = ruleSchema("tool name", toolNameProblem);

/** A pack's sub-tool name, `pack__op`. */
export const SubToolNameSchema = ruleSchema("sub-tool name", subToolNameProblem);

/** Any name a tool is called by: a tool's or a pack sub-tool's. */
export const InvocableToolNameSchema = ruleSchema("tool name", invocableToolNameProblem);

/** Throws `invalid_id` unless `name` is a valid configured tool name. */
export function assertToolName(name: string): void {
  const problem = toolNameProblem(name);
  if (problem !== null) throw Errors.invalidId("tool name", name, problem);
}

/** Why `model` is not an id the model catalog can resolve (`instance/slug`), or `null`. */
export function modelIdProblem(model: string): string | null {
  const slash = model.indexOf("/");
  if (slash < 0) return "a model id is instance/slug";
  if (!INSTANCE_PATTERN.test(model.slice(0, slash))) return `the instance must be ${ID_RULE}`;
  if (!SLUG_PATTERN.test(model.slice(slash + 1)))
    return "the slug must be a plain name: letters, digits, '.', '_' and '-', at most 128 characters";
  return null;
}

/** A model id, `instance/slug`: the catalog's own rule, so every id accepted anywhere can be resolved. */
export const ModelIdSchema = ruleSchema("model id", modelIdProblem);

/** Secret names (`${secret:NAME}`, API.md "Secrets"): upper-case letters, digits and `_`, at most 64 characters. */
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * Why `name` is no secret name, or `null`; a name that is one once upper-cased (`jira_token`)
 * is offered spelled so.
 */
export function secretNameProblem(name: string): string | null {
  if (SECRET_NAME_PATTERN.test(name)) return null;
  const rule =
    "secret names are upper-case letters, digits and '_', starting with a letter, at most 64 characters";
  return SECRET_NAME_PATTERN.test(name.toUpperCase())
    ? `${rule}; did you mean '${name.toUpperCase()}'?`
    : rule;
}

/**
 * A secret name, as a path parameter or `${secret:NAME}` names it; the rule's message comes first,
 * the pattern documents it in `/openapi.json`.
 */
export const SecretNameSchema = v.pipe(
  ruleSchema("secret name", secretNameProblem),
  v.regex(SECRET_NAME_PATTERN, "upper-case letters, digits and '_'"),
);

/** Throws `invalid_id` unless `name` is a valid secret name; the message says the rule. */
export function assertSecretName(name: string): void {
  const problem = secretNameProblem(name);
  if (problem !== null) throw Errors.invalidId("secret name", name, problem);
}

/**
 * Why `path` is not a relative document path whose segments are plain names (no `..`, no empty
 * segments, no leading `/`, no backslashes), or `null`.
 */
export function documentPathProblem(path: string): string | null {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH)
    return `a document path has 1 to ${MAX_PATH_LENGTH} characters`;
  const segments = path.split("/");
  for (const segment of segments) {
    if (!PATH_SEGMENT.test(segment) || segment.includes(".."))
      return "a relative document path such as documents/guide.md: plain names joined by '/', no '..', no empty segments";
    if (segment.endsWith(STORE_TEMP_SUFFIX))
      return `names ending in '${STORE_TEMP_SUFFIX}' are reserved for the store's unfinished writes`;
    if (segment.endsWith(STORE_META_SUFFIX))
      return `names ending in '${STORE_META_SUFFIX}' are reserved for the store's audit records`;
  }
  // On a case-insensitive filesystem `SERVER-TOOLS/x.yaml` is the file `server-tools/x.yaml`:
  // another casing of a validated folder would store a tool document unvalidated.
  const folder = segments[0]!;
  const special = VALIDATED_FOLDERS.find((name) => name === folder.toLowerCase());
  if (special !== undefined && special !== folder)
    return `'${folder}/' differs from the reserved folder '${special}/' only in case; use '${special}/'`;
  return null;
}

/** A document path inside the cascade. */
export const DocumentPathSchema = ruleSchema("document path", documentPathProblem);

/** Throws `invalid_id` unless `path` is a valid document path. */
export function assertDocumentPath(path: string): void {
  if (!v.is(DocumentPathSchema, path))
    throw Errors.invalidId("document path", path, documentPathProblem(path) ?? undefined);
}

/** The folder of tool configurations in every layer (spec §4); documents in it are validated as tools. */
export const TOOL_DOCUMENTS_DIR = "server-tools/";

/** The folder of OpenAPI documents that packs name: writes into it take the spec body limit (API.md). */
export const SPEC_DOCUMENTS_DIR = "specs/";

/** The document path of a tool configuration. */
export function toolDocumentPath(name: string): string {
  return `${TOOL_DOCUMENTS_DIR}${name}.yaml`;
}

/** Whether a document path lies in the tool folder, so a write of it is a tool document's. */
export function isToolDocumentPath(path: string): boolean {
  return path.startsWith(TOOL_DOCUMENTS_DIR);
}

/** The tool name a document path stands for, or `null` when the path is not a tool document. */
export function toolNameFromPath(path: string): string | null {
  if (!isToolDocumentPath(path) || !path.endsWith(".yaml")) return null;
  const name = path.slice(TOOL_DOCUMENTS_DIR.length, -".yaml".length);
  return name.length > 0 && !name.includes("/") ? name : null;
}

/**
 * The key prefix of one layer's documents in the documents store: `{tenant}/{layerProject}/`
 * (`_tenant` for the tenant layer). The one spelling of it: every key a layer's document has is
 * this prefix and the document's path.
 */
export function layerKeyPrefix(tenant: string, layerProject: string): string {
  return `${tenant}/${layerProject}/`;
}

/** The object key of a document of one layer: `{tenant}/{layerProject}/{path}` (unvalidated). */
export function layerDocumentKey(tenant: string, layerProject: string, path: string): string {
  return `${layerKeyPrefix(tenant, layerProject)}${path}`;
}

/**
 * A documents-store key split into its tenant, layer project and document path, or null when
 * it has fewer than three segments or an empty path. Ids are not validated here.
 */
export function parseLayerDocumentKey(
  key: string,
): { readonly tenant: string; readonly layerProject: string; readonly path: string } | null {
  const first = key.indexOf("/");
  const second = first < 0 ? -1 : key.indexOf("/", first + 1);
  if (second < 0 || second === key.length - 1) return null;
  return {
    tenant: key.slice(0, first),
    layerProject: key.slice(first + 1, second),
    path: key.slice(second + 1),
  };
}

/**
 * The project folder a document layer reads, as a request for `project` addresses it: the project
 * layer its own, the tenant layer `_tenant`; the bundled and built-in layers have none (null).
 */
export function layerProjectOf(
  layer: "project" | "tenant" | "bundled" | "builtin",
  project: string,
): string | null {
  if (layer === "project") return project;
  return layer === "tenant" ? TENANT_PROJECT : null;
}

/** The layer folders a request for `project` reads, innermost first: its own and the tenant's (once for `_tenant`). */
export function layerProjectsOf(project: string): readonly string[] {
  return project === TENANT_PROJECT ? [TENANT_PROJECT] : [project, TENANT_PROJECT];
}
