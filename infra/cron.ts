import { catalog } from "./storage";

/** Compiles the model catalog's YAML documents into `catalog.json`, hourly. */
export const catalogSync = new sst.aws.Cron("CatalogSync", {
  schedule: "rate(1 hour)",
  function: {
    handler: "functions/catalog-sync/handler.handler",
    runtime: "nodejs22.x",
    link: [catalog],
    copyFiles: [{ from: "packages/defaults/catalog", to: "defaults/catalog" }],
    environment: { VANCE_CATALOG_BUCKET: catalog.name, VANCE_DEFAULTS_DIR: "defaults" },
  },
});
