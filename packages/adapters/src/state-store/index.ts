// SQLite lives at `@vance/adapters/sqlite` (src/sqlite.ts), so a Lambda bundle never loads its native
// module; DynamoDB at `@vance/adapters/aws` (src/aws.ts), so it loads the AWS SDK only where it needs it.
export { stateTableDefinition, stateTableTtlAttribute } from "./table";
