import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { QuotaStore } from "@vance/core";
import { stateTableTtlAttribute } from "../table";
import { type DynamoStateTable, type ItemKey, keyPart } from "./shared";

/**
 * Quota counters, items `QUOTA#{key}` / `QUOTA`: `used`, and for a window's counter its end as
 * the table's TTL attribute (epoch seconds). Each add is one single-item transaction with its
 * own token, so an SDK retry of an applied add is not counted twice.
 */
export class DynamoQuotaStore implements QuotaStore {
  constructor(private readonly table: DynamoStateTable) {}

  async addToQuota(key: string, amount: number, limit: number, expiresAt?: number): Promise<boolean> {
    if (amount >= 0 && amount > limit) return false;
    const expires = expiresAt === undefined ? undefined : Math.ceil(expiresAt / 1000);
    const names: Record<string, string> = { "#used": "used" };
    const values: Record<string, unknown> = { ":amount": amount };
    let update = "ADD #used :amount";
    if (expires !== undefined) {
      names["#exp"] = stateTableTtlAttribute;
      values[":exp"] = expires;
      update += " SET #exp = :exp";
    }
    if (amount < 0) {
      // A release never fails, and never creates a counter that was not there.
      names["#pk"] = "pk";
      return this.table.writeOnce({
        TableName: this.table.name,
        Key: quotaKey(key),
        UpdateExpression: update,
        ConditionExpression: "attribute_exists(#pk)",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      });
    }
    // DynamoDB's TTL deletes lazily (within days): an ended window's counter counts as empty,
    // and the add then replaces it rather than adding to it.
    if (expires !== undefined) {
      const nowSeconds = Math.floor(this.table.now() / 1000);
      const restarted = await this.table.writeOnce({
        TableName: this.table.name,
        Key: quotaKey(key),
        UpdateExpression: "SET #used = :amount, #exp = :exp",
        ConditionExpression: "#exp <= :now",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ":now": nowSeconds },
      });
      if (restarted) return true;
    }
    return this.table.writeOnce({
      TableName: this.table.name,
      Key: quotaKey(key),
      UpdateExpression: update,
      ConditionExpression: "attribute_not_exists(#used) OR #used <= :room",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ":room": limit - amount },
    });
  }

  async getQuotaUsage(key: string): Promise<number> {
    const { table } = this;
    const out = await table.request(() =>
      table.doc.send(new GetCommand({ TableName: table.name, Key: quotaKey(key), ConsistentRead: true })),
    );
    const item = out.Item;
    if (item === undefined) return 0;
    const expires = item[stateTableTtlAttribute];
    if (typeof expires === "number" && expires * 1000 <= table.now()) return 0;
    return Number(item.used ?? 0);
  }
}

function quotaKey(key: string): ItemKey {
  return { pk: `QUOTA#${keyPart(key)}`, sk: "QUOTA" };
}
