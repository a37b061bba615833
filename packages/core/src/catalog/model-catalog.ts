import * as v from "valibot";
import { issuesToFieldErrors, parseYaml } from "../config/yaml";
import { VanceError } from "../errors";
import { INSTANCE_PATTERN, modelIdProblem, SLUG_PATTERN } from "../ids";
import { byString } from "../order";

/**
 * The model catalog (spec §14.1, DESIGN §4 "Catalog"): `model/{instance}/_provider.yaml` holds
 * the defaults of one endpoint instance, `model/{instance}/{slug}.yaml` the override of one
 * model. Only the fields the tool budget needs are read; everything else (pricing, params, …)
 * belongs to other consumers and is allowed and ignored here.
 */

const MaxToolsSchema = v.pipe(
  v.number("maxTools must be a number"),
  v.integer("maxTools must be an integer"),
  v.minValue(0, "maxTools must be 0 (no limit) or more"),
);

/** `_provider.yaml`: the default of every model of this instance. Other fields are ignored. */
export const ProviderSpecSchema = v.looseObject({
  maxTools: v.optional(MaxToolsSchema),
  wireType: v.optional(v.pipe(v.string("wireType must be a string"), v.minLength(1))),
});

/** `{slug}.yaml`: the override of one model; `maxTools: 0` means "explicitly no limit". */
export const ModelSpecSchema = v.looseObject({
  maxTools: v.optional(MaxToolsSchema),
});

export type ProviderSpec = v.InferOutput<typeof ProviderSpecSchema>;
export type ModelSpec = v.InferOutput<typeof ModelSpecSchema>;

const CompiledModelSchema = v.object({ maxTools: v.optional(MaxToolsSchema) });
const CompiledProviderSchema = v.object({
  maxTools: v.optional(MaxToolsSchema),
  wireType: v.optional(v.string()),
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
    throw new VanceError("invalid_model", 400, `model '${shown}' is not a model id: ${problem}`);
  }
  const slash = model.indexOf("/");
  return { instance: model.slice(0, slash), slug: model.slice(slash + 1) };
}

const DOCUMENT_PATH = /^model\/([^/]+)\/([^/]+)\.yaml$/;
const PROVIDER_FILE = "_provider";

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
    const match = DOCUMENT_PATH.exec(path);
    const instance = match?.[1];
    const file = match?.[2];
    if (instance === undefined || file === undefined) {
      errors.push({ path, message: "not a catalog document: expected model/{instance}/{slug}.yaml" });
      continue;
    }
    if (!INSTANCE_PATTERN.test(instance)) {
      errors.push({ path, message: `instance '${instance}' must match [a-z0-9][a-z0-9_-]*` });
      continue;
    }
    const isProvider = file === PROVIDER_FILE;
    if (!isProvider && !SLUG_PATTERN.test(file)) {
      errors.push({
        path,
        message: `model slug '${file}' must be a plain name ([A-Za-z0-9][A-Za-z0-9._-]*)`,
      });
      continue;
    }
    const parsed = parseYaml(body);
    if (!parsed.ok) {
      errors.push({ path, message: describeErrors(parsed.errors) });
      continue;
    }
    // A document of comments only parses to null: a valid spec without fields.
    const data = parsed.yaml.data ?? {};
    const result = v.safeParse(isProvider ? ProviderSpecSchema : ModelSpecSchema, data);
    if (!result.success) {
      errors.push({ path, message: describeErrors(issuesToFieldErrors(result.issues, parsed.yaml)) });
      continue;
    }
    const provider = providerOf(instance);
    if (isProvider) {
      const spec = result.output as ProviderSpec;
      if (spec.maxTools !== undefined) provider.maxTools = spec.maxTools;
      if (spec.wireType !== undefined) provider.wireType = spec.wireType;
    } else {
      const spec = result.output as ModelSpec;
      provider.models[file] = spec.maxTools === undefined ? {} : { maxTools: spec.maxTools };
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
