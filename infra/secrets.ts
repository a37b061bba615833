import type { LinkedName } from "../functions/linked";

/** The HS256 secret that signs API tokens (`npx sst secret set JwtSecret …`). */
export const jwtSecret = new sst.Secret("JwtSecret" satisfies LinkedName);

/**
 * The AES-256-GCM key that seals tenant secrets in the state table: the base64 of 32 bytes
 * (`npx sst secret set SecretsKey "$(openssl rand -base64 32)"`). Changing it makes every stored
 * tenant secret unreadable until it is set again.
 */
export const secretsKey = new sst.Secret("SecretsKey" satisfies LinkedName);

/**
 * Where phantom empty-response diagnoses are posted (`npx sst secret set DiagnosticWebhook https://…`);
 * a secret because such URLs carry their credential. Optional: empty (the placeholder) posts nothing.
 */
export const diagnosticWebhook = new sst.Secret("DiagnosticWebhook" satisfies LinkedName, "");
