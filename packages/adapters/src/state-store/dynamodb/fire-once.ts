import { randomUUID } from "node:crypto";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { FireOnceStore } from "@vance/core";
import { stateTableTtlAttribute } from "../table";
import { type DynamoStateTable, keyPart } from "./shared";

/** Fire-once markers, items `ONCE` / `{marker}` whose `expiresAt` is the table's TTL attribute. */
export class DynamoFireOnceStore implements FireOnceStore {
  constructor(private readonly table: DynamoStateTable) {}

  /**
   * DynamoDB's TTL deletes expired items lazily (within days), so the condition itself treats
   * an expired marker as absent rather than relying on deletion.
   */
  async markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    const { table } = this;
    const nowMs = table.now();
    const key = { pk: "ONCE", sk: keyPart(marker) };
    // Whose marker it is, so a retry that finds it set can tell its own lost write from another's.
    const holder = randomUUID();
    const outcome = await table.conditionalRetried(() =>
      table.doc.send(
        new PutCommand({
          TableName: table.name,
          Item: { ...key, holder, [stateTableTtlAttribute]: onceExpiresAt(nowMs, ttlSeconds) },
          ConditionExpression: "attribute_not_exists(pk) OR #exp <= :now",
          ExpressionAttributeNames: { "#exp": stateTableTtlAttribute },
          ExpressionAttributeValues: { ":now": Math.floor(nowMs / 1000) },
        }),
      ),
    );
    if (outcome !== "retried") return outcome;
    const { Item } = await table.request(() =>
      table.doc.send(new GetCommand({ TableName: table.name, Key: key, ConsistentRead: true })),
    );
    return Item?.holder === holder;
  }
}

/**
 * Epoch seconds (the unit DynamoDB's TTL reads), rounded up so a marker never opens early:
 * it holds for at least `ttlSeconds` and at most one second longer.
 */
function onceExpiresAt(nowMs: number, ttlSeconds: number): number {
  return Math.ceil((nowMs + ttlSeconds * 1000) / 1000);
}
