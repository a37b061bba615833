/** The HS256 secret that signs API tokens (`npx sst secret set JwtSecret …`). */
export const jwtSecret = new sst.Secret("JwtSecret");

/**
 * The AES-256-GCM key that seals tenant secrets in the state table: the base64 of 32 bytes
 * (`npx sst secret set SecretsKey "$(openssl rand -base64 32)"`). Changing it makes every stored
 * tenant secret unreadable until it is set again.
 */
export const secretsKey = new sst.Secret("SecretsKey");
