// SQLite lives at `@vance/adapters/sqlite` (src/sqlite.ts), so a Lambda bundle never loads its native module.
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
} from "./dynamodb/index";
export { stateTableDefinition, stateTableTtlAttribute } from "./table";
