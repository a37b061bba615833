import { builtFunction } from "./bundles";
import { catalog } from "./storage";

/** Compiles the model catalog's YAML documents into `catalog.json`, hourly. */
export const catalogSync = new sst.aws.Cron("CatalogSync", {
  schedule: "rate(1 hour)",
  function: {
    ...builtFunction("catalog-sync"),
    memory: "512 MB",
    timeout: "1 minute",
    link: [catalog],
  },
});
