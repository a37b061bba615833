import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createS3Client,
  FsObjectStore,
  jsonLogger,
  loadBundledDocuments,
  S3ObjectStore,
} from "@vance/adapters";
import {
  CATALOG_KEY,
  type CatalogDocument,
  type CatalogError,
  CompiledCatalogSchema,
  catalogContent,
  catalogDocumentsFromBundled,
  compileCatalog,
  isNotModified,
  type Logger,
  logCatalogErrors,
  ModelCatalogService,
  type ObjectStore,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import * as v from "valibot";

/** What one sync did. */
export interface SyncResult {
  /** `true` when `catalog.json` was (re)written. */
  readonly changed: boolean;
  readonly providers: number;
  readonly models: number;
  /** Source documents that could not be compiled (left out of the catalog). */
  readonly errors: readonly CatalogError[];
}

/**
 * The scheduled catalog sync: compiles the bucket's YAML sources with the bundled catalog into
 * `catalog.json`. It writes only when the content (ignoring `compiledAt`) changed, so warm
 * handlers keep revalidating the same ETag and a quiet catalog costs no writes.
 */
export async function syncCatalog(deps: {
  store: ObjectStore;
  bundled: readonly CatalogDocument[];
  logger: Logger;
}): Promise<SyncResult> {
  const service = new ModelCatalogService(deps);
  const { catalog, errors } = compileCatalog(await service.sources());
  logCatalogErrors(deps.logger, errors);
  const providers = Object.values(catalog.providers);
  const counts = {
    providers: providers.length,
    models: providers.reduce((sum, provider) => sum + Object.keys(provider.models).length, 0),
    errors,
  };

  const current = await deps.store.get(CATALOG_KEY);
  if (current && !isNotModified(current) && storedContent(current.body) === catalogContent(catalog)) {
    return { changed: false, ...counts };
  }
  await deps.store.put(CATALOG_KEY, `${JSON.stringify(catalog, null, 2)}\n`, {
    contentType: "application/json",
  });
  deps.logger.info("catalog.synced", {
    providers: counts.providers,
    models: counts.models,
    errors: errors.length,
  });
  return { changed: true, ...counts };
}

function storedContent(body: string): string | null {
  try {
    const result = v.safeParse(CompiledCatalogSchema, JSON.parse(body));
    return result.success ? catalogContent(result.output) : null;
  } catch {
    return null;
  }
}

const EnvSchema = v.object({
  // Optional-then-minLength, so a missing bucket is reported in words rather than as an "invalid key".
  VANCE_CATALOG_BUCKET: v.pipe(
    v.optional(v.string(), ""),
    v.minLength(1, "VANCE_CATALOG_BUCKET is required"),
  ),
  VANCE_S3_ENDPOINT: v.optional(v.pipe(v.string(), v.url("VANCE_S3_ENDPOINT must be a URL"))),
  AWS_REGION: v.optional(v.string(), "us-east-1"),
  VANCE_DEFAULTS_DIR: v.optional(v.string()),
});

/** The bundled catalog documents under a defaults directory, with paths as in the bucket. */
export function bundledCatalog(dir: string): CatalogDocument[] {
  return catalogDocumentsFromBundled(loadBundledDocuments(dir, ["catalog"]));
}

/** The Lambda entry, run on a schedule against the catalog bucket. */
export const handler = async (): Promise<SyncResult> => {
  const parsed = v.safeParse(EnvSchema, process.env);
  if (!parsed.success) {
    const lines = parsed.issues.map((issue) => `- ${v.getDotPath(issue) ?? "settings"}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  const env = parsed.output;
  const client = createS3Client({
    region: env.AWS_REGION,
    // A custom endpoint is a local S3 look-alike, which does not resolve bucket.host names.
    ...(env.VANCE_S3_ENDPOINT ? { endpoint: env.VANCE_S3_ENDPOINT, forcePathStyle: true } : {}),
  });
  return syncCatalog({
    store: new S3ObjectStore({ client, bucket: env.VANCE_CATALOG_BUCKET }),
    bundled: bundledCatalog(env.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR),
    logger: jsonLogger,
  });
};

/** `npx tsx functions/catalog-sync/handler.ts`: syncs the local catalog directory and prints a summary. */
async function syncLocal(): Promise<void> {
  const dir = join(process.env.VANCE_DATA_DIR || "./.data", "catalog");
  const result = await syncCatalog({
    store: new FsObjectStore(dir),
    bundled: bundledCatalog(process.env.VANCE_DEFAULTS_DIR || DEFAULTS_DIR),
    logger: jsonLogger,
  });
  console.log(
    `${result.changed ? "wrote" : "unchanged"} ${join(dir, CATALOG_KEY)}: ${result.providers} providers, ` +
      `${result.models} models, ${result.errors.length} invalid documents`,
  );
  for (const error of result.errors) console.log(`  ${error.path}: ${error.message}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  syncLocal().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
