/**
 * What the DynamoDB state store's ports share: the client, the table (`DynamoStateTable`: one
 * document client, one request counter, the conditional-write and batch-read helpers) and the
 * key escaping. The item design is at the top of `index.ts`.
 */
import { randomUUID } from "node:crypto";
import {
  CreateTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { type MemoStats, StoreUnavailableError } from "@vance/core";
import { addStoreFaultHandling, boundedClientConfig, DEFAULT_STORE_DEADLINE_MS } from "../../store-faults";
import { stateTableDefinition, stateTableTtlAttribute } from "../table";

/**
 * Creates the state table when absent, waits until it is active and enables its TTL.
 * For tests and local use; deployed tables come from infra.
 */
export async function ensureStateTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(stateTableDefinition(tableName)));
  } catch (error) {
    if (errorName(error) !== "ResourceInUseException") throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: tableName });
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: stateTableTtlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    // Enabling TTL twice is a ValidationException ("already enabled"); the state we want holds.
    if (errorName(error) !== "ValidationException") throw error;
  }
}

export interface DynamoClientOptions {
  /** e.g. DynamoDB Local's `http://127.0.0.1:8000`; absent in AWS. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: DynamoDBClientConfig["credentials"];
  /**
   * Longest one request may take, retries included, before it fails with
   * `StoreUnavailableError`; {@link DEFAULT_STORE_DEADLINE_MS} unless given.
   */
  readonly deadlineMs?: number;
}

/**
 * A DynamoDB client. With an `endpoint` (DynamoDB Local) region and credentials default to
 * placeholders, because Local ignores them but the SDK refuses to sign without them. Its
 * requests are bounded in time and fail as `StoreUnavailableError` when DynamoDB cannot be
 * reached — also for the document clients built on it, which share its middleware stack.
 */
export function createDynamoClient(options: DynamoClientOptions = {}): DynamoDBClient {
  const local = options.endpoint !== undefined;
  const deadlineMs = options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
  const client = new DynamoDBClient({
    ...boundedClientConfig(deadlineMs),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.region !== undefined ? { region: options.region } : local ? { region: "us-east-1" } : {}),
    ...(options.credentials !== undefined
      ? { credentials: options.credentials }
      : local
        ? { credentials: { accessKeyId: "local", secretAccessKey: "local" } }
        : {}),
  });
  addStoreFaultHandling(client, "state store", deadlineMs);
  return client;
}

export interface DynamoStateStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch milliseconds; injectable so fire-once expiry can be tested without sleeping. */
  readonly now?: () => number;
  /** Query page size. DynamoDB pages at 1 MB anyway; a small value lets tests reach page two. */
  readonly queryPageSize?: number;
  /** Where the parsed process records are counted (the composition root lists it); a private one otherwise. */
  readonly parsedRecords?: MemoStats;
}

/** BatchGetItem takes at most 100 keys. */
const BATCH_GET_MAX_KEYS = 100;
/** Keeps an UpdateExpression far below DynamoDB's 4 KB limit. */
export const MAX_NAMES_PER_UPDATE = 100;
const UNPROCESSED_MAX_ROUNDS = 8;
/** Sends of one counted write cancelled by concurrent transactions on its item, before giving up. */
const CONFLICT_MAX_ROUNDS = 6;

/**
 * The state table as the ports use it: one document client and one request counter for all of
 * them (so `requestCount` covers every port built on it), and the ways a request is sent —
 * counted, conditional, exactly once, batched.
 */
export class DynamoStateTable {
  readonly doc: DynamoDBDocumentClient;
  readonly name: string;
  readonly now: () => number;
  readonly queryPageSize: number | undefined;
  readonly #counter = new DynamoRequestCounter();

  constructor(options: DynamoStateStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.name = options.tableName;
    this.now = options.now ?? Date.now;
    this.queryPageSize = options.queryPageSize;
  }

  /** HTTP requests sent to DynamoDB by the ports on this table (SDK retries included) since the last reset. */
  get requestCount(): number {
    return this.#counter.count;
  }

  /** Starts counting {@link requestCount} from zero. */
  resetRequestCount(): void {
    this.#counter.reset();
  }

  /** Sends one command and counts the HTTP attempts the SDK made for it. */
  request<O extends { $metadata: { attempts?: number } }>(send: () => Promise<O>): Promise<O> {
    return this.#counter.send(send);
  }

  /** Every item a consistent Query of this table finds, page after page (`queryPageSize` a page). */
  async queryAll(
    input: Pick<QueryCommandInput, "KeyConditionExpression" | "ExpressionAttributeValues">,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.request(() =>
        this.doc.send(
          new QueryCommand({
            ...input,
            TableName: this.name,
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            Limit: this.queryPageSize,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  }

  /**
   * Consistent reads of these items by key (`itemId` → item; absent items are missing): one
   * BatchGetItem per 100 keys, and retry rounds with backoff for keys DynamoDB left unprocessed.
   * `attributes` projects every item on these attributes (the keys are always read).
   */
  async batchGet(
    keys: readonly ItemKey[],
    attributes?: readonly string[],
  ): Promise<Map<string, Record<string, unknown>>> {
    const names = attributes && { ...placeholders("#p", ["pk", "sk", ...attributes]) };
    const projection = names && {
      ProjectionExpression: Object.keys(names).join(", "),
      ExpressionAttributeNames: names,
    };
    const found = new Map<string, Record<string, unknown>>();
    const unique = [...new Map(keys.map((key) => [itemId(key), key])).values()];
    for (const chunk of chunks(unique, BATCH_GET_MAX_KEYS)) {
      let pending: Record<string, unknown>[] = chunk;
      for (let round = 0; pending.length > 0; round++) {
        if (round === UNPROCESSED_MAX_ROUNDS) {
          throw new Error(`DynamoDB left ${pending.length} keys unprocessed after ${round} rounds`);
        }
        if (round > 0) await sleep(25 * 2 ** round);
        const requestKeys = pending;
        const out = await this.request(() =>
          this.doc.send(
            new BatchGetCommand({
              RequestItems: { [this.name]: { Keys: requestKeys, ConsistentRead: true, ...projection } },
            }),
          ),
        );
        for (const item of out.Responses?.[this.name] ?? []) {
          found.set(itemId({ pk: String(item.pk), sk: String(item.sk) }), item);
        }
        pending = out.UnprocessedKeys?.[this.name]?.Keys ?? [];
      }
    }
    return found;
  }

  /**
   * Applies one update exactly once: a transaction of one item with a token, which the SDK's
   * retries resend unchanged. `false` when its condition failed. A transaction that DynamoDB
   * cancelled for a concurrent one on the same item was not applied, so it is sent again after
   * a short backoff, a bounded number of times.
   *
   * With a caller's `token` (up to 36 characters) every send uses it, so the caller may send the
   * same update again after a failure — within DynamoDB's ten-minute window — and it still
   * applies once; a conflict's resend keeps it too, since an earlier send of it may have been
   * applied. Without one, each call gets a token of its own (and each conflict round a new one).
   */
  async writeOnce(
    update: NonNullable<TransactWriteCommandInput["TransactItems"]>[number]["Update"],
    token?: string,
  ): Promise<boolean> {
    for (let round = 0; ; round++) {
      try {
        await this.request(() =>
          this.doc.send(
            new TransactWriteCommand({
              ClientRequestToken: token ?? randomUUID(),
              TransactItems: [{ Update: update }],
            }),
          ),
        );
        return true;
      } catch (error) {
        const reason = cancellationReason(error);
        if (reason === "ConditionalCheckFailed") return false;
        if (reason !== "TransactionConflict") throw error;
        if (round + 1 === CONFLICT_MAX_ROUNDS) {
          throw new StoreUnavailableError(
            "state store",
            `transaction conflicts ${CONFLICT_MAX_ROUNDS} times in a row`,
          );
        }
        await sleep(10 * 2 ** round + Math.random() * 10);
      }
    }
  }

  /**
   * As {@link conditional}, but `"retried"` when the condition failed on a retry of the SDK:
   * then the first attempt may have been applied and its answer lost, and the caller decides.
   */
  async conditionalRetried(
    send: () => Promise<{ $metadata: { attempts?: number } }>,
  ): Promise<boolean | "retried"> {
    try {
      await this.request(send);
      return true;
    } catch (error) {
      if (errorName(error) !== "ConditionalCheckFailedException") throw error;
      return attemptsOf(error) > 1 ? "retried" : false;
    }
  }

  /** `false` when the request's condition failed (an expected outcome, not an error). */
  async conditional(send: () => Promise<{ $metadata: { attempts?: number } }>): Promise<boolean> {
    try {
      await this.request(send);
      return true;
    } catch (error) {
      if (errorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }
}

/** Escapes one part of a key (see the top of `index.ts`); shared with the secret store's items. */
export function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll("#", "%23");
}

/** A type, not an interface: the SDK takes keys as plain records. */
export type ItemKey = { readonly pk: string; readonly sk: string };

/** One string per item key, for finding a batch read's answers. */
export function itemId(key: ItemKey): string {
  return `${key.pk}\n${key.sk}`;
}

/** `{ "#n0": names[0], ... }` for use as ExpressionAttributeNames. */
export function placeholders(prefix: string, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name, i) => [`${prefix}${i}`, name]));
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The SDK's error name (`ConditionalCheckFailedException`, …), if it is an Error. */
export function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/** The reason DynamoDB gives for cancelling a one-item transaction, if `error` is that cancellation. */
function cancellationReason(error: unknown): string | undefined {
  if (errorName(error) !== "TransactionCanceledException") return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return reasons?.find((r) => r.Code !== undefined && r.Code !== "None")?.Code;
}

/** HTTP attempts the SDK made for a failed command. */
function attemptsOf(error: unknown): number {
  const metadata = (error as { $metadata?: { attempts?: number } } | null)?.$metadata;
  return metadata?.attempts ?? 1;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Counts the HTTP attempts the SDK makes for a store's commands (retries included), so tests
 * and benches can assert requests per operation. Shared by the DynamoDB state and secret stores.
 */
export class DynamoRequestCounter {
  #requests = 0;

  /** Attempts since the last reset. */
  get count(): number {
    return this.#requests;
  }

  reset(): void {
    this.#requests = 0;
  }

  /** Sends one command and counts the attempts it took, whether it succeeded or failed. */
  async send<O extends { $metadata: { attempts?: number } }>(send: () => Promise<O>): Promise<O> {
    try {
      const out = await send();
      this.#requests += out.$metadata.attempts ?? 1;
      return out;
    } catch (error) {
      this.#requests += attemptsOf(error);
      throw error;
    }
  }
}
