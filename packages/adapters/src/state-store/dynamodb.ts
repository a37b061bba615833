/**
 * The state store on DynamoDB: one table, single-table design, keys `pk` / `sk` (strings).
 *
 * | record            | pk                          | sk                 | attributes |
 * | ----------------- | --------------------------- | ------------------ | ---------- |
 * | process           | `PROC#{tenant}#{project}`   | `{processId}`      | the record's fields; `activatedTools` a map name → epoch ms (created empty at spawn) |
 * | tool usage        | `USAGE#{tenant}#{project}`  | `{role}#{tool}`    | `role`, `tool`, `calls`, `discoveryHits`, `lastUsedAt` (epoch ms) |
 * | observed limit    | `LIMIT`                     | `ENDPOINT#{key}`   | `limitKey`, `model`, `maxTools`, `observedAt` (epoch ms) |
 * | fire-once marker  | `ONCE`                      | `{marker}`         | `expiresAt` (epoch seconds, the table's TTL attribute) |
 * | generation        | `GEN#{marker}`              | `GEN`              | `generation` (number, grown with `ADD`) |
 *
 * Key parts are escaped (`%` → `%25`, `#` → `%23`) so that no tenant, project, role or tool
 * containing `#` can reach another's items; ordinary ids read unchanged in the console.
 * Values are read back from attributes, never parsed out of keys.
 *
 * Every mutation is one conditional request, except `addToolUsage` with an out-of-order
 * timestamp (two) and the chunked `touchActivatedTools` / `getObservedToolLimits`. What each
 * write does when the SDK retries it after a lost answer is in README ("Writes under retries").
 * Each generation marker has its own partition key: every manifest reads them, so they must not
 * share one hot partition.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
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
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type {
  ObservedToolLimit,
  ProcessKey,
  ProcessRecord,
  ProcessWithGenerations,
  StateStore,
  ToolUsageDelta,
  ToolUsageKey,
  ToolUsageRow,
} from "@vance/core";
import { compareStrings, StoreUnavailableError } from "@vance/core";
import { addStoreFaultHandling, boundedClientConfig, DEFAULT_STORE_DEADLINE_MS } from "../store-faults";
import { stateTableDefinition, stateTableTtlAttribute } from "./table";

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
}

/** BatchGetItem takes at most 100 keys. */
const BATCH_GET_MAX_KEYS = 100;
/** Keeps an UpdateExpression far below DynamoDB's 4 KB limit. */
const MAX_NAMES_PER_UPDATE = 100;
const UNPROCESSED_MAX_ROUNDS = 8;
/** Sends of one counted write cancelled by concurrent transactions on its item, before giving up. */
const CONFLICT_MAX_ROUNDS = 6;

/** {@link StateStore} on one DynamoDB table; see the item design at the top of this file. */
export class DynamoStateStore implements StateStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #now: () => number;
  readonly #queryPageSize: number | undefined;
  readonly #counter = new DynamoRequestCounter();

  constructor(options: DynamoStateStoreOptions) {
    this.#doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.#table = options.tableName;
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

  async createProcess(record: ProcessRecord): Promise<boolean> {
    const item = {
      ...processKey(record),
      tenant: record.tenant,
      project: record.project,
      processId: record.processId,
      createdAt: record.createdAt,
      recipe: record.recipe,
      engine: record.engine,
      role: record.role,
      allowedTools: record.allowedTools,
      allowedPacks: record.allowedPacks,
      excludedTools: record.excludedTools,
      allowedToolsAdd: record.allowedToolsAdd,
      ...(record.allowedToolsAddAt === undefined ? {} : { allowedToolsAddAt: record.allowedToolsAddAt }),
      allowedToolsKeep: record.allowedToolsKeep,
      allowedToolsDefer: record.allowedToolsDefer,
      allowedToolsDropFirst: record.allowedToolsDropFirst,
      models: record.models,
      clientTools: record.clientTools,
      // Always a map, so touch/remove can address `activatedTools.name` without creating it.
      activatedTools: { ...record.activatedTools },
    };
    const outcome = await this.#conditionalRetried(() =>
      this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: item,
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
    if (outcome !== "retried") return outcome;
    // A retry found the id taken: by this very write when the SDK lost its first answer (then
    // the stored record is ours, `createdAt` included), or by another spawn.
    const stored = await this.getProcess(record);
    return stored !== null && isDeepStrictEqual(stored, record);
  }

  async getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    const { Item } = await this.#request(() =>
      this.#doc.send(new GetCommand({ TableName: this.#table, Key: processKey(key), ConsistentRead: true })),
    );
    return Item === undefined ? null : toProcessRecord(Item);
  }

  /**
   * One BatchGetItem (two and more only past 100 markers, or for keys DynamoDB left unprocessed);
   * consistent reads, so a write that answered before is seen.
   */
  async getProcessAndGenerations(
    key: ProcessKey,
    markers: readonly string[],
  ): Promise<ProcessWithGenerations> {
    const items = await this.#batchGet([processKey(key), ...markers.map(generationKey)]);
    const processItem = items.get(itemId(processKey(key)));
    return {
      process: processItem === undefined ? null : toProcessRecord(processItem),
      generations: markers.map((marker) => generationOf(items.get(itemId(generationKey(marker))))),
    };
  }

  /** `ADD` creates the attribute at 0 first, so the first bump answers 1. */
  async bumpGeneration(marker: string): Promise<number> {
    const out = await this.#request(() =>
      this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: generationKey(marker),
          UpdateExpression: "ADD #g :one",
          ExpressionAttributeNames: { "#g": "generation" },
          ExpressionAttributeValues: { ":one": 1 },
          ReturnValues: "UPDATED_NEW",
        }),
      ),
    );
    return Number(out.Attributes?.generation);
  }

  /** One BatchGetItem per 100 markers (plus retry rounds for unprocessed keys); none for no markers. */
  async getGenerations(markers: readonly string[]): Promise<number[]> {
    if (markers.length === 0) return [];
    const items = await this.#batchGet(markers.map(generationKey));
    return markers.map((marker) => generationOf(items.get(itemId(generationKey(marker)))));
  }

  /**
   * One UpdateItem per 100 names (a turn touches a handful), each atomic on its own; with no
   * names, one GetItem answers whether the process exists.
   */
  async touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    const unique = [...new Set(names)];
    if (unique.length === 0) {
      const { Item } = await this.#request(() =>
        this.#doc.send(
          new GetCommand({
            TableName: this.#table,
            Key: processKey(key),
            ProjectionExpression: "pk",
            ConsistentRead: true,
          }),
        ),
      );
      return Item !== undefined;
    }
    for (const chunk of chunks(unique, MAX_NAMES_PER_UPDATE)) {
      const names = placeholders("#n", chunk);
      const applied = await this.#conditional(() =>
        this.#doc.send(
          new UpdateCommand({
            TableName: this.#table,
            Key: processKey(key),
            UpdateExpression: `SET ${Object.keys(names)
              .map((n) => `activatedTools.${n} = :at`)
              .join(", ")}`,
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ":at": at },
          }),
        ),
      );
      if (!applied) return false;
    }
    return true;
  }

  async removeActivatedTools(key: ProcessKey, names: readonly string[]): Promise<void> {
    for (const chunk of chunks([...new Set(names)], MAX_NAMES_PER_UPDATE)) {
      const placeholderNames = placeholders("#n", chunk);
      // The condition keeps UpdateItem from creating a bare item for an unknown process.
      await this.#conditional(() =>
        this.#doc.send(
          new UpdateCommand({
            TableName: this.#table,
            Key: processKey(key),
            UpdateExpression: `REMOVE ${Object.keys(placeholderNames)
              .map((n) => `activatedTools.${n}`)
              .join(", ")}`,
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeNames: placeholderNames,
          }),
        ),
      );
    }
  }

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
   */
  async addToolUsage(key: ToolUsageKey, delta: ToolUsageDelta): Promise<void> {
    const itemKey = usageKey(key);
    const counters = { ":c": delta.calls ?? 0, ":d": delta.discoveryHits ?? 0 };
    const names = { "#calls": "calls", "#hits": "discoveryHits" };
    const advanced = await this.#writeOnce({
      TableName: this.#table,
      Key: itemKey,
      UpdateExpression: "ADD #calls :c, #hits :d SET #last = :at, #role = :role, #tool = :tool",
      ConditionExpression: "attribute_not_exists(#last) OR #last <= :at",
      ExpressionAttributeNames: { ...names, "#last": "lastUsedAt", "#role": "role", "#tool": "tool" },
      ExpressionAttributeValues: { ...counters, ":at": delta.at, ":role": key.role, ":tool": key.tool },
    });
    if (advanced) return;
    await this.#writeOnce({
      TableName: this.#table,
      Key: itemKey,
      UpdateExpression: "ADD #calls :c, #hits :d",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: counters,
    });
  }

  async listToolUsage(tenant: string, project: string, role?: string): Promise<ToolUsageRow[]> {
    const rows: ToolUsageRow[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.#request(() =>
        this.#doc.send(
          new QueryCommand({
            TableName: this.#table,
            KeyConditionExpression:
              role === undefined ? "pk = :pk" : "pk = :pk AND begins_with(sk, :rolePrefix)",
            ExpressionAttributeValues: {
              ":pk": `USAGE#${keyPart(tenant)}#${keyPart(project)}`,
              ...(role === undefined ? {} : { ":rolePrefix": `${keyPart(role)}#` }),
            },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
            Limit: this.#queryPageSize,
          }),
        ),
      );
      for (const item of page.Items ?? []) {
        rows.push({
          role: String(item.role),
          tool: String(item.tool),
          calls: Number(item.calls ?? 0),
          discoveryHits: Number(item.discoveryHits ?? 0),
          lastUsedAt: Number(item.lastUsedAt ?? 0),
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    // The sort key orders `role#tool` as one string; the port promises role, then tool.
    return rows.sort((a, b) => compareStrings(a.role, b.role) || compareStrings(a.tool, b.tool));
  }

  /** "Latest" is by `observedAt`: a stale observation that arrives late does not win. */
  async putObservedToolLimit(limit: ObservedToolLimit): Promise<void> {
    await this.#conditional(() =>
      this.#doc.send(
        new PutCommand({
          TableName: this.#table,
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
    const items = await this.#batchGet(unique.map(limitKey));
    return unique.flatMap((key) => {
      const item = items.get(itemId(limitKey(key)));
      return item === undefined
        ? []
        : [
            {
              key: String(item.limitKey),
              model: String(item.model),
              maxTools: Number(item.maxTools),
              observedAt: Number(item.observedAt),
            },
          ];
    });
  }

  /**
   * DynamoDB's TTL deletes expired items lazily (within days), so the condition itself treats
   * an expired marker as absent rather than relying on deletion.
   */
  async markOnce(marker: string, ttlSeconds: number): Promise<boolean> {
    const nowMs = this.#now();
    const key = { pk: "ONCE", sk: keyPart(marker) };
    // Whose marker it is, so a retry that finds it set can tell its own lost write from another's.
    const holder = randomUUID();
    const outcome = await this.#conditionalRetried(() =>
      this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: { ...key, holder, [stateTableTtlAttribute]: onceExpiresAt(nowMs, ttlSeconds) },
          ConditionExpression: "attribute_not_exists(pk) OR #exp <= :now",
          ExpressionAttributeNames: { "#exp": stateTableTtlAttribute },
          ExpressionAttributeValues: { ":now": Math.floor(nowMs / 1000) },
        }),
      ),
    );
    if (outcome !== "retried") return outcome;
    const { Item } = await this.#request(() =>
      this.#doc.send(new GetCommand({ TableName: this.#table, Key: key, ConsistentRead: true })),
    );
    return Item?.holder === holder;
  }

  /**
   * Consistent reads of these items by key (`itemId` → item; absent items are missing): one
   * BatchGetItem per 100 keys, and retry rounds with backoff for keys DynamoDB left unprocessed.
   */
  async #batchGet(keys: readonly ItemKey[]): Promise<Map<string, Record<string, unknown>>> {
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
        const out = await this.#request(() =>
          this.#doc.send(
            new BatchGetCommand({
              RequestItems: { [this.#table]: { Keys: requestKeys, ConsistentRead: true } },
            }),
          ),
        );
        for (const item of out.Responses?.[this.#table] ?? []) {
          found.set(itemId({ pk: String(item.pk), sk: String(item.sk) }), item);
        }
        pending = out.UnprocessedKeys?.[this.#table]?.Keys ?? [];
      }
    }
    return found;
  }

  /** Sends one command and counts the HTTP attempts the SDK made for it. */
  #request<O extends { $metadata: { attempts?: number } }>(send: () => Promise<O>): Promise<O> {
    return this.#counter.send(send);
  }

  /**
   * Applies one update exactly once: a transaction of one item with a token of its own, which
   * the SDK's retries resend unchanged. `false` when its condition failed. A transaction that
   * DynamoDB cancelled for a concurrent one on the same item was not applied, so it is sent
   * again (with a new token) after a short backoff, a bounded number of times.
   */
  async #writeOnce(
    update: NonNullable<TransactWriteCommandInput["TransactItems"]>[number]["Update"],
  ): Promise<boolean> {
    for (let round = 0; ; round++) {
      try {
        await this.#request(() =>
          this.#doc.send(
            new TransactWriteCommand({
              ClientRequestToken: randomUUID(),
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
   * As {@link #conditional}, but `"retried"` when the condition failed on a retry of the SDK:
   * then the first attempt may have been applied and its answer lost, and the caller decides.
   */
  async #conditionalRetried(
    send: () => Promise<{ $metadata: { attempts?: number } }>,
  ): Promise<boolean | "retried"> {
    try {
      await this.#request(send);
      return true;
    } catch (error) {
      if (errorName(error) !== "ConditionalCheckFailedException") throw error;
      return attemptsOf(error) > 1 ? "retried" : false;
    }
  }

  /** `false` when the request's condition failed (an expected outcome, not an error). */
  async #conditional(send: () => Promise<{ $metadata: { attempts?: number } }>): Promise<boolean> {
    try {
      await this.#request(send);
      return true;
    } catch (error) {
      if (errorName(error) === "ConditionalCheckFailedException") return false;
      throw error;
    }
  }
}

/**
 * Epoch seconds (the unit DynamoDB's TTL reads), rounded up so a marker never opens early:
 * it holds for at least `ttlSeconds` and at most one second longer.
 */
function onceExpiresAt(nowMs: number, ttlSeconds: number): number {
  return Math.ceil((nowMs + ttlSeconds * 1000) / 1000);
}

/** Escapes one part of a key (see the top of this file); shared with the secret store's items. */
export function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll("#", "%23");
}

/** A type, not an interface: the SDK takes keys as plain records. */
type ItemKey = { readonly pk: string; readonly sk: string };

/** One string per item key, for finding a batch read's answers. */
function itemId(key: ItemKey): string {
  return `${key.pk}\n${key.sk}`;
}

function generationKey(marker: string): ItemKey {
  return { pk: `GEN#${keyPart(marker)}`, sk: "GEN" };
}

function generationOf(item: Record<string, unknown> | undefined): number {
  return item === undefined ? 0 : Number(item.generation ?? 0);
}

/** `ENDPOINT#`: items of the earlier per-model layout (sort key `{model}`) are never read as these. */
function limitKey(key: string): ItemKey {
  return { pk: "LIMIT", sk: `ENDPOINT#${keyPart(key)}` };
}

function processKey(key: ProcessKey): { pk: string; sk: string } {
  return { pk: `PROC#${keyPart(key.tenant)}#${keyPart(key.project)}`, sk: keyPart(key.processId) };
}

function usageKey(key: ToolUsageKey): { pk: string; sk: string } {
  return {
    pk: `USAGE#${keyPart(key.tenant)}#${keyPart(key.project)}`,
    sk: `${keyPart(key.role)}#${keyPart(key.tool)}`,
  };
}

function toProcessRecord(item: Record<string, unknown>): ProcessRecord {
  const strings = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
  return {
    tenant: String(item.tenant),
    project: String(item.project),
    processId: String(item.processId),
    createdAt: String(item.createdAt),
    recipe: typeof item.recipe === "string" ? item.recipe : null,
    engine: typeof item.engine === "string" ? item.engine : null,
    role: String(item.role),
    allowedTools: strings(item.allowedTools),
    // Absent on records spawned before packs were kept by reference.
    allowedPacks: strings(item.allowedPacks),
    excludedTools: strings(item.excludedTools),
    allowedToolsAdd: strings(item.allowedToolsAdd),
    ...(typeof item.allowedToolsAddAt === "string" ? { allowedToolsAddAt: item.allowedToolsAddAt } : {}),
    allowedToolsKeep: strings(item.allowedToolsKeep),
    allowedToolsDefer: strings(item.allowedToolsDefer),
    allowedToolsDropFirst: strings(item.allowedToolsDropFirst),
    models: strings(item.models),
    clientTools: (item.clientTools ?? []) as ProcessRecord["clientTools"],
    activatedTools: (item.activatedTools ?? {}) as ProcessRecord["activatedTools"],
  };
}

/** `{ "#n0": names[0], ... }` for use as ExpressionAttributeNames. */
function placeholders(prefix: string, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name, i) => [`${prefix}${i}`, name]));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
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
