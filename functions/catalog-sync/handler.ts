import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type CatalogSyncResult,
  createS3Client,
  FsObjectStore,
  jsonLogger,
  loadBundledCatalog,
  S3ObjectStore,
  syncCatalog,
} from "@vance/adapters";
import { CATALOG_KEY } from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import * as v from "valibot";

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

/** The Lambda entry, run on a schedule against the catalog bucket. */
export const handler = async (): Promise<CatalogSyncResult> => {
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
    bundled: loadBundledCatalog(env.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR),
    logger: jsonLogger,
  });
};

/** `npx tsx functions/catalog-sync/handler.ts`: syncs the local catalog directory and prints a summary. */
async function syncLocal(): Promise<void> {
  const dir = join(process.env.VANCE_DATA_DIR || "./.data", "catalog");
  const result = await syncCatalog({
    store: new FsObjectStore(dir),
    bundled: loadBundledCatalog(process.env.VANCE_DEFAULTS_DIR || DEFAULTS_DIR),
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
