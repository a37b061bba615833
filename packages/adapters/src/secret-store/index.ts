// SQLite lives at `@vance/adapters/sqlite`, so a Lambda bundle never loads its native module.
export {
  decodeSecretsKey,
  SECRETS_KEY_BYTES,
  SecretCipher,
  SecretDecryptionError,
} from "./cipher";
export { DynamoSecretStore, type DynamoSecretStoreOptions, secretKey } from "./dynamodb";
