import { CATALOG_MARKER, type Generations } from "../cascade/generations";
import { Errors, VanceError } from "../errors";
import { INSTANCE_PATTERN, SLUG_PATTERN } from "../ids";
import type { ObjectStore } from "../ports/object-store";
import {
  catalogDocumentPath,
  PROVIDER_FILE,
  type ProviderView,
  parseCatalogDocument,
  providerView,
} from "./model-catalog";
import type { ModelCatalogService } from "./model-catalog-service";

export interface CatalogEditorOptions {
  /** The catalog bucket. */
  readonly store: ObjectStore;
  /** Compiles the bucket's sources into `catalog.json` (the catalog sync), after every write. */
  readonly rebuild: () => Promise<unknown>;
  /** Bumped after every write, so every instance's next request reads the new catalog. */
  readonly generations?: Pick<Generations, "bump">;
  /** Where the answer's fresh read of the rebuilt catalog begins. */
  readonly catalog: Pick<ModelCatalogService, "begin">;
}

/**
 * Writes the model catalog's documents (API.md "Models and budget"): a document is validated
 * before it is stored (422 with YAML lines, never "fine until the next sync"), then the compiled
 * `catalog.json` is rebuilt and the catalog's generation bumped before the answer — so the next
 * budget, on any instance, already reflects it.
 */
export class CatalogEditor {
  constructor(private readonly options: CatalogEditorOptions) {}

  /**
   * Creates or replaces `model/{instance}/{file}.yaml` (`file`: `_provider` or a model slug);
   * answers whether it was new and the instance's provider as the rebuilt catalog shows it to a
   * read that begins after the bump (as every request after this one sees it).
   */
  async put(
    instance: string,
    file: string,
    body: string,
  ): Promise<{ readonly created: boolean; readonly provider: ProviderView }> {
    const path = pathOf(instance, file);
    const parsed = parseCatalogDocument(path, body);
    if (!parsed.ok) throw Errors.validationFailed(`'${path}' is not a valid catalog document`, parsed.errors);
    const options = { contentType: "application/yaml" };
    let written = await this.options.store.put(path, body, { ...options, ifNoneMatch: "*" });
    const created = written.ok;
    if (!written.ok && written.reason === "precondition_failed") {
      written = await this.options.store.put(path, body, options);
    }
    if (!written.ok) throw Errors.pathConflict(path);
    await this.#rebuild();
    const catalog = await this.options.catalog.begin().catalog();
    const provider = Object.hasOwn(catalog.providers, instance) ? catalog.providers[instance] : undefined;
    return { created, provider: providerView(instance, provider ?? { models: {} }) };
  }

  /** Deletes a stored catalog document (a bundled one at the same path then applies again); 404 when none is stored. */
  async delete(instance: string, file: string): Promise<void> {
    const path = pathOf(instance, file);
    const deleted = await this.options.store.delete(path);
    if (!deleted.ok) throw Errors.documentNotFound(path);
    await this.#rebuild();
  }

  async #rebuild(): Promise<void> {
    await this.options.rebuild();
    await this.options.generations?.bump(CATALOG_MARKER);
  }
}

/** The bucket path of a document, its instance and file checked: 400 `invalid_id` otherwise. */
function pathOf(instance: string, file: string): string {
  if (!INSTANCE_PATTERN.test(instance)) {
    throw new VanceError("invalid_id", `'${instance}' is not a catalog instance ([a-z0-9][a-z0-9_-]*)`);
  }
  if (file !== PROVIDER_FILE && !SLUG_PATTERN.test(file)) {
    throw new VanceError(
      "invalid_id",
      `'${file}' is neither ${PROVIDER_FILE} nor a model slug ([A-Za-z0-9][A-Za-z0-9._-]*)`,
    );
  }
  return catalogDocumentPath(instance, file);
}
