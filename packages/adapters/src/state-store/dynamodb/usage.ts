import type { ToolUsageDelta, ToolUsageKey, ToolUsageRow, UsageStore } from "@vance/core";
import { compareStrings } from "@vance/core";
import { type DynamoStateTable, type ItemKey, keyPart } from "./shared";

/** Tool usage counters, items `USAGE#{tenant}#{project}` / `{role}#{tool}`. */
export class DynamoUsageStore implements UsageStore {
  constructor(private readonly table: DynamoStateTable) {}

  /**
   * One single-item TransactWriteItems in the usual case. DynamoDB has no `max()` in update
   * expressions, so the first write sets `lastUsedAt` only under the condition that the stored
   * value is not newer; when an older timestamp arrives late, that condition fails (nothing is
   * written) and a second write adds the counters alone. No read happens.
   *
   * A transaction rather than an UpdateItem for its `ClientRequestToken`: the SDK retries a
   * write whose answer it lost (a client-side timeout, a reset connection) with the same token,
   * and DynamoDB applies a token once within ten minutes — a plain `ADD` retried counts twice.
   * It costs two write units instead of one.
   *
   * With `delta.token`, the two writes carry tokens made from it (`{token}.1`, `{token}.2`), so
   * the whole call can be repeated after a failure and counts once: a first write already
   * applied answers success again; one whose condition failed fails again (`lastUsedAt` only
   * grows), and the second write's token is then the one already used.
   */
  async addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    const itemKey = usageKey(key);
    const counters = { ":c": delta.calls ?? 0, ":d": delta.discoveryHits ?? 0 };
    const names = { "#calls": "calls", "#hits": "discoveryHits" };
    const advanced = await this.table.writeOnce(
      {
        TableName: this.table.name,
        Key: itemKey,
        UpdateExpression: "ADD #calls :c, #hits :d SET #last = :at, #role = :role, #tool = :tool",
        ConditionExpression: "attribute_not_exists(#last) OR #last <= :at",
        ExpressionAttributeNames: { ...names, "#last": "lastUsedAt", "#role": "role", "#tool": "tool" },
        ExpressionAttributeValues: { ...counters, ":at": delta.at, ":role": key.role, ":tool": key.tool },
      },
      delta.token === undefined ? undefined : `${delta.token}.1`,
    );
    if (advanced) return;
    await this.table.writeOnce(
      {
        TableName: this.table.name,
        Key: itemKey,
        UpdateExpression: "ADD #calls :c, #hits :d",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: counters,
      },
      delta.token === undefined ? undefined : `${delta.token}.2`,
    );
  }

  async listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]> {
    const items = await this.table.queryAll({
      KeyConditionExpression: role === undefined ? "pk = :pk" : "pk = :pk AND begins_with(sk, :rolePrefix)",
      ExpressionAttributeValues: {
        ":pk": `USAGE#${keyPart(tenant)}#${keyPart(project)}`,
        ...(role === undefined ? {} : { ":rolePrefix": `${keyPart(role)}#` }),
      },
    });
    const rows: ToolUsageRow[] = items.map((item) => ({
      role: String(item.role),
      tool: String(item.tool),
      calls: Number(item.calls ?? 0),
      discoveryHits: Number(item.discoveryHits ?? 0),
      lastUsedAt: Number(item.lastUsedAt ?? 0),
    }));
    // The sort key orders `role#tool` as one string; the port promises role, then tool.
    return rows.sort((a, b) => compareStrings(a.role, b.role) || compareStrings(a.tool, b.tool));
  }
}

function usageKey(key: ToolUsageKey): ItemKey {
  return {
    pk: `USAGE#${keyPart(key.tenant)}#${keyPart(key.project)}`,
    sk: `${keyPart(key.role)}#${keyPart(key.tool)}`,
  };
}
