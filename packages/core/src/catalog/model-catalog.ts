import * as v from "valibot";
import { unknownFieldMessage } from "../config/issue-messages";
import { issuesToFieldErrors, parseYaml } from "../config/yaml";
import { type FieldError, VanceError } from "../errors";
import { INSTANCE_PATTERN, modelIdProblem, SECRET_NAME_PATTERN, SLUG_PATTERN } from "../ids";
import { byString } from "../order";

/**
 * The model catalog (spec §14.1, DESIGN §4 "Catalog"): `model/{instance}/_provider.yaml` holds
 * the defaults of one endpoint instance, `model/{instance}/{slug}.yaml` the override of one
 * model. Only the fields the tool budget and `prompt_template` calls read are accepted: a field
 * nothing reads (a misspelt `maxtools`) is refused with a hint, never ignored.
 */

const MaxToolsSchema = v.pipe(
  v.number("maxTools must be a number"),
  v.integer("maxTools must be an integer"),
  v.minValue(0, "maxTools must be 0 (no limit) or more"),
);

/**
 * Tokens the tools array's schemas may take (names, descriptions, input schemas), estimated as
 * the discovery blocks are; triaged like `maxTools`. `0` means no limit.
 */
const MaxToolTokensSchema = v.pipe(
  v.number("maxToolTokens must be a number"),
  v.integer("maxToolTokens must be an integer"),
  v.minValue(0, "maxToolTokens must be 0 (no limit) or more"),
);

/** The sizes a model document may declare; `prompt_template`'s `modelSize` picks by them. */
export const MODEL_SIZES = ["small", "medium", "large"] as const;
export type ModelSize = (typeof MODEL_SIZES)[number];

const SECRET_REFERENCE = /^\$\{secret:([^}]*)\}$/;

/** The platform secret's name in `${secret:NAME}`, or null when `text` is no such reference. */
export function secretReferenceName(text: string): string | null {
  const name = SECRET_REFERENCE.exec(text)?.[1];
  return name !== undefined && SECRET_NAME_PATTERN.test(name) ? name : null;
}

/** `_provider.yaml`: the default of every model of this instance. Other fields are refused. */
export const ProviderSpecSchema = v.strictObject({
  maxTools: v.optional(MaxToolsSchema),
  maxToolTokens: v.optional(MaxToolTokensSchema),
  wireType: v.optional(v.pipe(v.string("wireType must be a string"), v.minLength(1))),
  /** Where `prompt_template` calls go: the API root (`…/v1`), `chat/completions` or `messages` appended. */
  baseUrl: v.optional(
    v.pipe(
      v.string("baseUrl must be a string"),
      v.check(
        (url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol),
        "baseUrl must be an http(s) URL",
      ),
      // The compiled catalog is shown to every tenant (`GET /v1/models`): a key goes in apiKey.
      v.check(
        (url) => !URL.canParse(url) || (new URL(url).username === "" && new URL(url).password === ""),
        "baseUrl must not carry credentials (user:password@); name the key's platform secret in apiKey",
      ),
    ),
  ),
  /** A platform secret, never the key itself: keys never live in the catalog. */
  apiKey: v.optional(
    v.pipe(
      v.string("apiKey must be a string"),
      v.check(
        (text) => secretReferenceName(text) !== null,
        "apiKey must be a platform secret reference, ${secret:NAME} (NAME upper-case); the key itself never goes into the catalog",
      ),
    ),
  ),
});

/** `{slug}.yaml`: the override of one model; `maxTools: 0` means "explicitly no limit". Other fields are refused. */
export const ModelSpecSchema = v.strictObject({
  maxTools: v.optional(MaxToolsSchema),
  maxToolTokens: v.optional(MaxToolTokensSchema),
  size: v.optional(v.picklist(MODEL_SIZES, `size must be one of ${MODEL_SIZES.join(", ")}`)),
});

export type ProviderSpec = v.InferOutput<typeof ProviderSpecSchema>;
export type ModelSpec = v.InferOutput<typeof ModelSpecSchema>;

const CompiledModelSchema = v.object({
  maxTools: v.optional(MaxToolsSchema),
  maxToolTokens: v.optional(MaxToolTokensSchema),
  size: v.optional(v.picklist(MODEL_SIZES)),
});
const CompiledProviderSchema = v.object({
  maxTools: v.optional(MaxToolsSchema),
  maxToolTokens: v.optional(MaxToolTokensSchema),
  wireType: v.optional(v.string()),
  baseUrl: v.optional(v.string()),
  /** The platform secret holding the key (`apiKey: ${secret:NAME}` → `NAME`). */
  apiKeySecret: v.optional(v.string()),
  models: v.record(v.string(), CompiledModelSchema),
});

/** `catalog.json` as the sync writes it and handlers read it with one GET. */
export const CompiledCatalogSchema = v.object({
  version: v.literal(1),
  compiledAt: v.string(),
  providers: v.record(v.string(), CompiledProviderSchema),
});

export type CompiledCatalog = v.InferOutput<typeof CompiledCatalogSchema>;
export type CompiledProvider = v.InferOutput<typeof CompiledProviderSchema>;

/** One catalog source document, by its path in the catalog bucket (`model/…`). */
export interface CatalogDocument {
  readonly path: string;
  readonly body: string;
}

/** A catalog document that could not be compiled; it contributes nothing to the catalog. */
export interface CatalogError {
  readonly path: string;
  readonly message: string;
}

/** Where a model's limit came from. `observed` is added by the tool budget, never by the catalog. */
export type LimitSource = "model" | "provider" | "observed" | "none";

/** A model id split into its parts. */
export interface ModelId {
  readonly instance: string;
  readonly slug: string;
}

/** Splits and validates `instance/slug` (`ModelIdSchema`'s rule); throws `invalid_model` (400) otherwise. */
export function parseModelId(model: string): ModelId {
  const problem = modelIdProblem(model);
  if (problem !== null) {
    const shown = model.length > 80 ? `${model.slice(0, 80)}…` : model;
    throw new VanceError("invalid_model", `model '${shown}' is not a model id: ${problem}`);
  }
  const slash = model.indexOf("/");
  return { instance: model.slice(0, slash), slug: model.slice(slash + 1) };
}

const DOCUMENT_PATH = /^model\/([^/]+)\/([^/]+)\.yaml$/;

/** One catalog document, validated: the spec it contributes to its instance. */
export type ParsedCatalogDocument =
  | {
      readonly ok: true;
      readonly instance: string;
      /** `_provider`, or the model's slug. */
      readonly file: string;
      readonly provider?: ProviderSpec;
      readonly model?: ModelSpec;
    }
  | { readonly ok: false; readonly errors: FieldError[] };

/** The file name of an instance's provider document, `model/{instance}/_provider.yaml`. */
export const PROVIDER_FILE = "_provider";

/** The bucket path of a catalog document. */
export function catalogDocumentPath(instance: string, file: string): string {
  return `model/${instance}/${file}.yaml`;
}

/**
 * Parses and validates one catalog document by its path: the path's instance and file, the YAML,
 * and the provider or model schema. Problems come back with their YAML lines, as a write of the
 * document answers them (422) and the compile reports them.
 */
export function parseCatalogDocument(path: string, body: string): ParsedCatalogDocument {
  const fail = (message: string): ParsedCatalogDocument => ({ ok: false, errors: [{ path: "", message }] });
  const match = DOCUMENT_PATH.exec(path);
  const instance = match?.[1];
  const file = match?.[2];
  if (instance === undefined || file === undefined)
    return fail("not a catalog document: expected model/{instance}/{slug}.yaml");
  if (!INSTANCE_PATTERN.test(instance)) return fail(`instance '${instance}' must match [a-z0-9][a-z0-9_-]*`);
  const isProvider = file === PROVIDER_FILE;
  if (!isProvider && !SLUG_PATTERN.test(file))
    return fail(`model slug '${file}' must be a plain name ([A-Za-z0-9][A-Za-z0-9._-]*)`);
  const parsed = parseYaml(body);
  if (!parsed.ok) return { ok: false, errors: parsed.errors };
  // A document of comments only parses to null: a valid spec without fields.
  const data = parsed.yaml.data ?? {};
  if (typeof data !== "object" || Array.isArray(data))
    return {
      ok: false,
      errors: [{ path: "", message: "a catalog document is a mapping of fields", line: 1 }],
    };
  const schema = isProvider ? ProviderSpecSchema : ModelSpecSchema;
  const known = Object.keys(schema.entries);
  // Every unknown field is named (a strict schema stops at the first), the rest checked as well.
  const fields = Object.entries(data as Record<string, unknown>);
  const unknown: FieldError[] = fields.flatMap(([field]) => {
    if (known.includes(field)) return [];
    const line = parsed.yaml.lineOf([field]);
    return [
      { path: field, message: unknownFieldMessage(field, known), ...(line === undefined ? {} : { line }) },
    ];
  });
  const result = v.safeParse(schema, Object.fromEntries(fields.filter(([field]) => known.includes(field))));
  const errors = [
    ...unknown,
    ...(result.success ? [] : issuesToFieldErrors(result.issues, parsed.yaml, [], schema)),
  ];
  if (!result.success || errors.length > 0) {
    return { ok: false, errors: errors.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)) };
  }
  return isProvider
    ? { ok: true, instance, file, provider: result.output as ProviderSpec }
    : { ok: true, instance, file, model: result.output as ModelSpec };
}

/**
 * Compiles catalog documents into the shape `catalog.json` holds. A document that does not
 * parse or validate is reported in `errors` and skipped; the rest still compile, so one typo
 * does not take every other model's limit with it. Output keys are sorted, so the same
 * sources always give the same JSON (the sync compares contents).
 */
export function compileCatalog(
  documents: readonly CatalogDocument[],
  compiledAt: string = new Date().toISOString(),
): { catalog: CompiledCatalog; errors: CatalogError[] } {
  const providers: Record<string, CompiledProvider> = {};
  const errors: CatalogError[] = [];
  const providerOf = (instance: string): CompiledProvider => {
    if (!Object.hasOwn(providers, instance)) providers[instance] = { models: {} };
    return providers[instance]!;
  };

  const sorted = [...documents].sort(byString((document) => document.path));
  for (const { path, body } of sorted) {
    const parsed = parseCatalogDocument(path, body);
    if (!parsed.ok) {
      errors.push({ path, message: describeErrors(parsed.errors) });
      continue;
    }
    const provider = providerOf(parsed.instance);
    if (parsed.provider) {
      const spec = parsed.provider;
      if (spec.maxTools !== undefined) provider.maxTools = spec.maxTools;
      if (spec.maxToolTokens !== undefined) provider.maxToolTokens = spec.maxToolTokens;
      if (spec.wireType !== undefined) provider.wireType = spec.wireType;
      if (spec.baseUrl !== undefined) provider.baseUrl = spec.baseUrl;
      const secret = spec.apiKey === undefined ? null : secretReferenceName(spec.apiKey);
      if (secret !== null) provider.apiKeySecret = secret;
    } else if (parsed.model) {
      const spec = parsed.model;
      provider.models[parsed.file] = {
        ...(spec.maxTools === undefined ? {} : { maxTools: spec.maxTools }),
        ...(spec.maxToolTokens === undefined ? {} : { maxToolTokens: spec.maxToolTokens }),
        ...(spec.size === undefined ? {} : { size: spec.size }),
      };
    }
  }
  return { catalog: { version: 1, compiledAt, providers }, errors };
}

/**
 * The catalog's `maxTools` for one model (spec §14.1): the model document wins — `0` there
 * means "explicitly no limit" and suppresses the provider default; otherwise the provider
 * default of the model's INSTANCE (`0` = no limit); otherwise no known limit. A gateway speaking
 * the openai wire format never inherits openai's number: the limit belongs to the endpoint.
 */
export function maxToolsFor(
  catalog: CompiledCatalog,
  model: string,
): { maxTools: number | null; source: "model" | "provider" | "none" } {
  const { instance, slug } = parseModelId(model);
  const provider = Object.hasOwn(catalog.providers, instance) ? catalog.providers[instance] : undefined;
  const spec = provider && Object.hasOwn(provider.models, slug) ? provider.models[slug] : undefined;
  if (spec?.maxTools !== undefined) {
    return { maxTools: spec.maxTools > 0 ? spec.maxTools : null, source: "model" };
  }
  if (provider?.maxTools !== undefined && provider.maxTools > 0) {
    return { maxTools: provider.maxTools, source: "provider" };
  }
  return { maxTools: null, source: "none" };
}

/**
 * The catalog's `maxToolTokens` for one model, by the rule of {@link maxToolsFor}: the model
 * document wins (`0`: explicitly no limit), else the provider's, else none.
 */
export function maxToolTokensFor(catalog: CompiledCatalog, model: string): number | null {
  const { instance, slug } = parseModelId(model);
  const provider = Object.hasOwn(catalog.providers, instance) ? catalog.providers[instance] : undefined;
  const spec = provider && Object.hasOwn(provider.models, slug) ? provider.models[slug] : undefined;
  if (spec?.maxToolTokens !== undefined) return spec.maxToolTokens > 0 ? spec.maxToolTokens : null;
  if (provider?.maxToolTokens !== undefined && provider.maxToolTokens > 0) return provider.maxToolTokens;
  return null;
}

/** One provider as `GET /v1/models` shows it. */
export interface ProviderView {
  readonly instance: string;
  readonly wireType: string | null;
  /** As the provider document says (`0`: no limit); null when it names none. */
  readonly maxTools: number | null;
  readonly maxToolTokens?: number;
  readonly baseUrl?: string;
  readonly models: readonly {
    readonly slug: string;
    readonly maxTools?: number;
    readonly maxToolTokens?: number;
    readonly size?: ModelSize;
  }[];
}

/**
 * The compiled catalog as `GET /v1/models` answers it: providers by instance, their models by
 * slug. Which secret holds a provider's key is the platform's business: it is left out.
 */
export function catalogView(catalog: CompiledCatalog): { providers: ProviderView[] } {
  const providers = Object.entries(catalog.providers)
    .sort(byString(([instance]) => instance))
    .map(([instance, provider]) => providerView(instance, provider));
  return { providers };
}

/** One compiled provider as {@link catalogView} shows it. */
export function providerView(instance: string, provider: CompiledProvider): ProviderView {
  return {
    instance,
    wireType: provider.wireType ?? null,
    maxTools: provider.maxTools ?? null,
    ...(provider.maxToolTokens === undefined ? {} : { maxToolTokens: provider.maxToolTokens }),
    ...(provider.baseUrl === undefined ? {} : { baseUrl: provider.baseUrl }),
    models: Object.entries(provider.models)
      .sort(byString(([slug]) => slug))
      .map(([slug, model]) => ({ slug, ...model })),
  };
}

/**
 * `catalog` without `compiledAt`, as JSON with sorted keys: equal strings mean nothing a reader
 * uses changed, whatever order the keys were written in.
 */
export function catalogContent(catalog: CompiledCatalog): string {
  return JSON.stringify({ version: catalog.version, providers: catalog.providers }, (_key, value: unknown) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(byString(([key]) => key)))
      : value,
  );
}

function describeErrors(errors: readonly { path: string; message: string; line?: number }[]): string {
  return errors
    .map((error) => {
      const where = [error.path, error.line === undefined ? "" : `line ${error.line}`].filter(Boolean);
      return where.length > 0 ? `${where.join(", ")}: ${error.message}` : error.message;
    })
    .join("; ");
}
