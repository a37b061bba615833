import {
  CATALOG_KEY,
  type CatalogDocument,
  type CatalogError,
  catalogFileCurrent,
  compileCatalogFile,
  isNotModified,
  type Logger,
  loadYamlParser,
  logCatalogErrors,
  ModelCatalogService,
  type ObjectStore,
} from "@vance/core";

/** What one catalog sync did. */
export interface CatalogSyncResult {
  /** `true` when `catalog.json` was (re)written. */
  readonly changed: boolean;
  readonly providers: number;
  readonly models: number;
  /** Source documents that could not be compiled (left out of the catalog). */
  readonly errors: readonly CatalogError[];
}

/**
 * The catalog sync: reads the bucket's YAML sources (each replacing the bundled document at its
 * path), compiles them into `catalog.json` and writes it only when its content (ignoring
 * `compiledAt`) changed, so warm handlers keep revalidating the same ETag and a quiet catalog
 * costs no writes. Run by the scheduled function and by the local server at start.
 */
export async function syncCatalog(deps: {
  store: ObjectStore;
  bundled: readonly CatalogDocument[];
  logger: Logger;
}): Promise<CatalogSyncResult> {
  // The catalog's sources are YAML: a scheduled sync may be the first parse of its process.
  await loadYamlParser();
  const file = compileCatalogFile(await new ModelCatalogService(deps).sources());
  logCatalogErrors(deps.logger, file.errors);
  const counts = { providers: file.providers, models: file.models, errors: file.errors };

  const current = await deps.store.get(CATALOG_KEY);
  const stored = current === null || isNotModified(current) ? null : current.body;
  if (catalogFileCurrent(stored, file.catalog)) return { changed: false, ...counts };
  await deps.store.put(CATALOG_KEY, file.text, { contentType: "application/json" });
  deps.logger.info("catalog.synced", {
    providers: counts.providers,
    models: counts.models,
    errors: counts.errors.length,
  });
  return { changed: true, ...counts };
}
