export {
  createDynamoClient,
  type DynamoClientOptions,
  DynamoStateStore,
  type DynamoStateStoreOptions,
  ensureStateTable,
  stateTableDefinition,
  stateTableTtlAttribute,
} from "./dynamodb";
export { SqliteStateStore, type SqliteStateStoreOptions } from "./sqlite";
