import { join } from "node:path";
import { FsObjectStore, jsonLogger, loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { CATALOG_KEY } from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";

/** `npm run catalog:sync`: syncs the local catalog directory and prints a summary. */
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

syncLocal().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
