import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { ObservedLimitStore, ObservedToolLimit } from "@vance/core";
import { type DynamoStateTable, type ItemKey, itemId, keyPart } from "./shared";

/** Observed tool limits, items `LIMIT` / `ENDPOINT#{key}`. */
export class DynamoObservedLimitStore implements ObservedLimitStore {
  constructor(private readonly table: DynamoStateTable) {}

  /** "Latest" is by `observedAt`: a stale observation that arrives late does not win. */
  async putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    const { table } = this;
    await table.conditional(() =>
      table.doc.send(
        new PutCommand({
          TableName: table.name,
          Item: {
            ...limitKey(limit.key),
            limitKey: limit.key,
            model: limit.model,
            maxTools: limit.maxTools,
            observedAt: limit.observedAt,
          },
          ConditionExpression: "attribute_not_exists(pk) OR observedAt <= :at",
          ExpressionAttributeValues: { ":at": limit.observedAt },
        }),
      ),
    );
  }

  /** One BatchGetItem per 100 keys, plus a retry round for any unprocessed keys. */
  async getObservedToolLimits(keys: readonly string[]): Promise<ObservedToolLimit[]> {
    const unique = [...new Set(keys)];
    const items = await this.table.batchGet(unique.map(limitKey));
    return unique.flatMap((key) => {
      const item = items.get(itemId(limitKey(key)));
      return item === undefined ? [] : [limitOf(item)];
    });
  }

  /** A Query of the `LIMIT` partition, every page; in sort-key order, which is key order. */
  async listObservedToolLimits(): Promise<ObservedToolLimit[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :endpoint)",
      ExpressionAttributeValues: { ":pk": "LIMIT", ":endpoint": "ENDPOINT#" },
    });
    const limits = items.map(limitOf);
    return limits.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async deleteObservedToolLimit(key: string): Promise<boolean> {
    const { table } = this;
    return table.conditional(() =>
      table.doc.send(
        new DeleteCommand({
          TableName: table.name,
          Key: limitKey(key),
          ConditionExpression: "attribute_exists(pk)",
        }),
      ),
    );
  }
}

function limitOf(item: Record<string, unknown>): ObservedToolLimit {
  return {
    key: String(item.limitKey),
    model: String(item.model),
    maxTools: Number(item.maxTools),
    observedAt: Number(item.observedAt),
  };
}

/** `ENDPOINT#`: items of the earlier per-model layout (sort key `{model}`) are never read as these. */
function limitKey(key: string): ItemKey {
  return { pk: "LIMIT", sk: `ENDPOINT#${keyPart(key)}` };
}
