// SQLite lives at `@vance/adapters/sqlite`, so a Lambda bundle never loads its native module;
// DynamoDB at `@vance/adapters/aws`, so it loads the AWS SDK only where it needs it.
export {
  decodeSecretsKey,
  SECRETS_KEY_BYTES,
  SecretCipher,
  SecretDecryptionError,
} from "./cipher";
