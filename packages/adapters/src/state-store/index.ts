// SQLite lives at `@vance/adapters/sqlite` (src/sqlite.ts), so a Lambda bundle never loads its native module.
export {
  createDynamoClient,
  type DynamoClientOptions,
  DynamoStateStore,
  type DynamoStateStoreOptions,
  ensureStateTable,
} from "./dynamodb";
export { stateTableDefinition, stateTableTtlAttribute } from "./table";
