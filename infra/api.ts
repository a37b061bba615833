import { builtFunction } from "./bundles";
import { diagnosticWebhook, jwtSecret, secretsKey } from "./secrets";
import { catalog, documents, state } from "./storage";

/**
 * The HTTP API: one Hono app behind a function URL. Its settings come from the links (buckets,
 * table, secrets, the diagnostics webhook: functions/settings.ts reads them through `Resource`).
 */
export const api = new sst.aws.Function("Api", {
  ...builtFunction("api"),
  memory: "1024 MB",
  timeout: "30 seconds",
  url: true,
  link: [documents, catalog, state, jwtSecret, secretsKey, diagnosticWebhook],
});
