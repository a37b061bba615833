import { builtFunction } from "./bundles";
import { diagnosticWebhook, jwtSecret, secretsKey } from "./secrets";
import { catalog, documents, state } from "./storage";

/**
 * The identity settings (README "Identity"), passed on from the deploying shell when set: issuers
 * are configuration, not secrets, and a stage without them refuses to start (unless local tokens
 * are turned on) rather than accept no token.
 */
const IDENTITY_SETTINGS = ["VANCE_TOKEN_ISSUERS", "VANCE_LOCAL_TOKENS", "VANCE_PUBLIC_URL"] as const;

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
  environment: Object.fromEntries(
    IDENTITY_SETTINGS.flatMap((name) => {
      const value = process.env[name];
      return value ? [[name, value] as const] : [];
    }),
  ),
});
