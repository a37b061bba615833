/**
 * Tenant secrets in the state table (see `state-store/dynamodb/` for the other items):
 *
 * | record | pk                 | sk       | attributes |
 * | ------ | ------------------ | -------- | ---------- |
 * | secret | `SECRET#{tenant}`  | `{name}` | `tenant`, `name`, `ciphertext` (binary, {@link SecretCipher}), `updatedAt` (ISO-8601) |
 *
 * Key parts are escaped as the state store escapes them; values are read back from attributes.
 * Every method is one request, except `list` beyond one page.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import type { SecretEntry, SecretStore } from "@vance/core";
import { byString } from "@vance/core";
import { DynamoRequestCounter, errorName, keyPart } from "../state-store/dynamodb/shared";
import { SecretCipher } from "./cipher";

export interface DynamoSecretStoreOptions {
  /** The state store's client: secrets live in its table. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The 32-byte AES-256-GCM key. */
  readonly key: Uint8Array;
  /** Epoch milliseconds, for `updatedAt`. */
  readonly now?: () => number;
  /** Query page size, so tests can reach page two. */
  readonly queryPageSize?: number;
}

/** {@link SecretStore} on the state table; see the item design at the top of this file. */
export class DynamoSecretStore implements SecretStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #cipher: SecretCipher;
  readonly #now: () => number;
  readonly #queryPageSize: number | undefined;
  readonly #counter = new DynamoRequestCounter();

  constructor(options: DynamoSecretStoreOptions) {
    this.#doc = DynamoDBDocumentClient.from(options.client);
    this.#table = options.tableName;
    this.#cipher = new SecretCipher(options.key);
    this.#now = options.now ?? Date.now;
    this.#queryPageSize = options.queryPageSize;
  }

  /** HTTP requests sent to DynamoDB by this store (SDK retries included) since the last reset. */
  get requestCount(): number {
    return this.#counter.count;
  }

  /** Starts counting {@link requestCount} from zero. */
  resetRequestCount(): void {
    this.#counter.reset();
  }

  async put(tenant: string, name: string, value: string): Promise<void> {
    await this.#request(() =>
      this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            ...secretKey(tenant, name),
            tenant,
            name,
            ciphertext: this.#cipher.seal(tenant, name, value),
            updatedAt: new Date(this.#now()).toISOString(),
          },
        }),
      ),
    );
  }

  /** One conditional DeleteItem: the condition answers whether the secret existed. */
  async delete(tenant: string, name: string): Promise<boolean> {
    try {
      await this.#request(() =>
        this.#doc.send(
          new DeleteCommand({
            TableName: this.#table,
            Key: secretKey(tenant, name),
            ConditionExpression: "attribute_exists(pk)",
          }),
        ),
      );
      return true;
    } catch (error) {
      if (errorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }

  /** Names and times only: the projection keeps ciphertexts off the wire. */
  async list(tenant: string): Promise<SecretEntry[]> {
    const entries: SecretEntry[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.#request(() =>
        this.#doc.send(
          new QueryCommand({
            TableName: this.#table,
            KeyConditionExpression: "pk = :pk",
            ProjectionExpression: "#name, updatedAt",
            ExpressionAttributeNames: { "#name": "name" },
            ExpressionAttributeValues: { ":pk": secretPartition(tenant) },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            Limit: this.#queryPageSize,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        entries.push({ name: String(item.name), updatedAt: String(item.updatedAt) });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    // The sort key holds escaped names; the port promises the names' own order.
    return entries.sort(byString((entry) => entry.name));
  }

  async get(tenant: string, name: string): Promise<string | undefined> {
    const { Item } = await this.#request(() =>
      this.#doc.send(
        new GetCommand({ TableName: this.#table, Key: secretKey(tenant, name), ConsistentRead: true }),
      ),
    );
    if (Item === undefined) return undefined;
    return this.#cipher.open(tenant, name, Item.ciphertext as Uint8Array);
  }

  /** Sends one command and counts the HTTP attempts the SDK made for it. */
  #request<O extends { $metadata: { attempts?: number } }>(send: () => Promise<O>): Promise<O> {
    return this.#counter.send(send);
  }
}

/** The item key of a secret (exported for tests that read the stored item). */
export function secretKey(tenant: string, name: string): { pk: string; sk: string } {
  return { pk: secretPartition(tenant), sk: keyPart(name) };
}

function secretPartition(tenant: string): string {
  return `SECRET#${keyPart(tenant)}`;
}
