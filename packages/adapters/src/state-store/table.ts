import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/** The table's TTL attribute: epoch seconds after which DynamoDB may delete the item. */
export const stateTableTtlAttribute = "expiresAt";

/**
 * The state table: keys `pk` / `sk` (strings), on-demand billing. The one definition of it:
 * infra deploys it (`infra/storage.ts`) and tests create it in DynamoDB Local, so the deployed
 * table and the tested one cannot drift apart. This module imports no SDK code, so infra can use it.
 */
export function stateTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: "pk", AttributeType: "S" },
      { AttributeName: "sk", AttributeType: "S" },
    ],
    KeySchema: [
      { AttributeName: "pk", KeyType: "HASH" },
      { AttributeName: "sk", KeyType: "RANGE" },
    ],
    BillingMode: "PAY_PER_REQUEST",
  };
}
