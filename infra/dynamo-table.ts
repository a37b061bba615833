import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

const FIELD_TYPES = { S: "string", N: "number", B: "binary" } as const;

/**
 * `sst.aws.Dynamo`'s arguments from a CreateTable definition (the one the adapter and the tests
 * use). What `sst.aws.Dynamo` would silently not deploy as defined (indexes, provisioned capacity)
 * fails the deploy instead, so the deployed table cannot drift from the definition.
 */
export function dynamoArgs(table: CreateTableCommandInput, ttl: string): sst.aws.DynamoArgs {
  const unsupported = [
    table.GlobalSecondaryIndexes?.length ? "GlobalSecondaryIndexes" : undefined,
    table.LocalSecondaryIndexes?.length ? "LocalSecondaryIndexes" : undefined,
    table.BillingMode === "PAY_PER_REQUEST" ? undefined : `BillingMode ${table.BillingMode ?? "(unset)"}`,
  ].filter((part) => part !== undefined);
  if (unsupported.length > 0) {
    throw new Error(`infra/dynamo-table.ts does not deploy ${unsupported.join(", ")} of ${table.TableName}`);
  }
  const fields: Record<string, "string" | "number" | "binary"> = {};
  for (const { AttributeName, AttributeType } of table.AttributeDefinitions ?? []) {
    if (AttributeName === undefined || AttributeType === undefined) continue;
    fields[AttributeName] = FIELD_TYPES[AttributeType];
  }
  const key = (type: "HASH" | "RANGE") =>
    table.KeySchema?.find((part) => part.KeyType === type)?.AttributeName;
  const hashKey = key("HASH");
  if (hashKey === undefined) throw new Error(`${table.TableName} has no HASH key`);
  const rangeKey = key("RANGE");
  return { fields, primaryIndex: rangeKey === undefined ? { hashKey } : { hashKey, rangeKey }, ttl };
}
