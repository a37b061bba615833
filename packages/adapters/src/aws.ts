// The adapters over AWS (S3, DynamoDB), apart from the package index as SQLite's are: a module
// that imports the index loads no AWS SDK. The API's Lambda entry imports this at its first store
// call (functions/deferred-stores.ts), so a cold start that reads no store never loads the SDK.
export {
  createS3Client,
  type S3ClientSettings,
  S3ObjectStore,
  type S3ObjectStoreOptions,
} from "./object-store/s3";
export { DynamoSecretStore, type DynamoSecretStoreOptions, secretKey } from "./secret-store/dynamodb";
export {
  createDynamoClient,
  type DynamoClientOptions,
  DynamoFireOnceStore,
  DynamoGenerationStore,
  DynamoObservedLimitStore,
  DynamoProcessStore,
  DynamoStateStore,
  type DynamoStateStoreOptions,
  DynamoStateTable,
  DynamoUsageStore,
  ensureStateTable,
} from "./state-store/dynamodb/index";
