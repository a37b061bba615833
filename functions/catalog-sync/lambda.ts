import { jsonLogger, loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { S3ObjectStore } from "@vance/adapters/aws";
import { DEFAULTS_DIR } from "@vance/defaults";
import { s3ClientFor } from "../clients";
import { bundledFiles, loadFunctionConfig } from "../settings";
import { failEveryEvent, startFunction } from "../start";

/**
 * The Lambda entry (built to dist/functions/catalog-sync/lambda.mjs), run on a schedule: compiles
 * the catalog bucket's documents and the bundled catalog into `catalog.json`. The bucket's event
 * then tells warm API instances (functions/document-events).
 */
export const handler = await startFunction(
  "catalog-sync",
  () => {
    const config = loadFunctionConfig({
      defaults: bundledFiles(import.meta.url, ["VANCE_DEFAULTS_DIR"]),
      require: ["VANCE_CATALOG_BUCKET"],
    });
    const store = new S3ObjectStore({ client: s3ClientFor(config), bucket: config.VANCE_CATALOG_BUCKET! });
    const bundled = loadBundledCatalog(config.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR);
    return () => syncCatalog({ store, bundled, logger: jsonLogger });
  },
  failEveryEvent,
);
