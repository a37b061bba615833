/**
 * The resources infra links to the functions, under the names `Resource` knows them by: the
 * property each gives and the setting of `ConfigSchema` it supplies. Infra names its components
 * from this list (`"Documents" satisfies LinkedName`), so the name a function reads and the name
 * infra deploys cannot differ. No imports: `sst.config.ts` loads this file.
 */
export const LINKED = {
  Documents: { property: "name", setting: "VANCE_DOCUMENTS_BUCKET" },
  Catalog: { property: "name", setting: "VANCE_CATALOG_BUCKET" },
  State: { property: "name", setting: "VANCE_STATE_TABLE" },
  JwtSecret: { property: "value", setting: "VANCE_JWT_SECRET" },
  SecretsKey: { property: "value", setting: "VANCE_SECRETS_KEY" },
  DiagnosticWebhook: { property: "value", setting: "VANCE_DIAGNOSTIC_WEBHOOK_URL" },
} as const;

/** A name infra may give a linked resource. */
export type LinkedName = keyof typeof LINKED;
