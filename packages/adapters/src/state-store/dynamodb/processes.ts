import { isDeepStrictEqual } from "node:util";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import {
  type LiveProcesses,
  MemoStats,
  type ProcessKey,
  type ProcessRecord,
  type ProcessStore,
  type ProcessWithGenerations,
} from "@vance/core";
import { stateTableTtlAttribute } from "../table";
import { generationKey, generationOf } from "./generations";
import {
  chunks,
  type DynamoStateTable,
  type ItemKey,
  itemId,
  keyPart,
  MAX_NAMES_PER_UPDATE,
  placeholders,
} from "./shared";

/** Versions are random in [1, 2^48): a record stored again under a taken id is told apart. */
const VERSION_RANGE = 2 ** 48 - 1;

/** Names (allow sets, lists) of the parsed records kept; the oldest go past it. */
const PARSED_RECORD_NAMES = 200_000;

/**
 * What a turn reads of a record whose version this instance has parsed: the version, the
 * activations and the expiry (the parts a record's requests change).
 */
const VERSION_AND_ACTIVATIONS = ["generation", "recordVersion", "activatedTools", "idleExpiresAt"] as const;

type StoredFields = Omit<ProcessRecord, "activatedTools" | "expiresAt">;

/**
 * Process records, items `PROC#{tenant}#{project}` / `{processId}`: the record's fields, a
 * `recordVersion` written with them, `activatedTools` a map name → epoch ms (created empty at
 * spawn), and its idle expiry as `idleExpiresAt` (epoch ms) and the table's TTL attribute (epoch
 * seconds: DynamoDB deletes the item within days after). Each record that expires has a live
 * entry `LIVE#{tenant}` / `{project}#{processId}` with the same expiry, so a tenant's live
 * processes are counted with one Query of its own partition (every project), never a scan; its
 * TTL removes it too. A record's fields but its activations are written once, at spawn: once this instance has
 * parsed a version, a turn reads only the version and the activations (a projection), and the
 * whole item again only when the version differs. Items stored before versions are read whole.
 */
export class DynamoProcessStore implements ProcessStore {
  /** Parsed, deep-frozen records by item id, with their version and their names' count. */
  readonly #parsed = new Map<string, { version: number; fields: StoredFields; names: number }>();
  #parsedNames = 0;
  /** {@link #parsed}'s reads and extent, listed in `/v1/metrics` (`processes.parsed`). */
  readonly #stats: MemoStats;

  constructor(
    private readonly table: DynamoStateTable,
    stats: MemoStats = new MemoStats(),
  ) {
    this.#stats = stats;
  }

  async createProcess(record: ProcessRecord): Promise<boolean> {
    const { table } = this;
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
      recordVersion: 1 + Math.floor(Math.random() * VERSION_RANGE),
      ...expiryAttributes(record.expiresAt),
    };
    const outcome = await table.conditionalRetried(() =>
      table.doc.send(
        new PutCommand({
          TableName: table.name,
          Item: item,
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
    const created =
      outcome === "retried"
        ? // A retry found the id taken: by this very write when the SDK lost its first answer (then
          // the stored record is ours, `createdAt` included), or by another spawn.
          isDeepStrictEqual(await this.getProcess(record), record)
        : outcome;
    if (created && record.expiresAt !== undefined) await this.#putLiveEntry(record, record.expiresAt);
    return created;
  }

  /** Moves the record's expiry, then its live entry's (a record that is gone gets none). */
  async touchProcess(key: ProcessKey, expiresAt: number): Promise<boolean> {
    const { table } = this;
    const moved = await table.conditional(() =>
      table.doc.send(
        new UpdateCommand({
          TableName: table.name,
          Key: processKey(key),
          UpdateExpression: "SET #idle = :idle, #ttl = :ttl",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#idle": "idleExpiresAt", "#ttl": stateTableTtlAttribute },
          ExpressionAttributeValues: { ":idle": expiresAt, ":ttl": ttlSeconds(expiresAt) },
        }),
      ),
    );
    if (moved) await this.#putLiveEntry(key, expiresAt);
    return moved;
  }

  /** One consistent Query (paged) of the tenant's live entries; the expired ones are left to the TTL. */
  async countLiveProcesses(tenant: string, at: number): Promise<LiveProcesses> {
    const entries = await this.table.queryAll({
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": liveKey(tenant) },
    });
    let live = 0;
    let nextExpiry: number | null = null;
    for (const entry of entries) {
      const expiresAt = Number(entry.idleExpiresAt);
      if (!(expiresAt > at)) continue;
      live += 1;
      nextExpiry = nextExpiry === null ? expiresAt : Math.min(nextExpiry, expiresAt);
    }
    return { live, nextExpiry };
  }

  async #putLiveEntry(key: ProcessKey, expiresAt: number): Promise<void> {
    const { table } = this;
    await table.request(() =>
      table.doc.send(
        new PutCommand({
          TableName: table.name,
          Item: { ...liveEntryKey(key), ...expiryAttributes(expiresAt) },
        }),
      ),
    );
  }

  /**
   * One DeleteItem answering the old item: `true` when there was one. An SDK retry of a delete
   * that was applied answers `false`, so a caller counting live processes may count one too
   * many, never too few.
   */
  async deleteProcess(key: ProcessKey, liveAt?: number): Promise<boolean> {
    const { table } = this;
    const { Attributes } = await table.request(() =>
      table.doc.send(
        new DeleteCommand({ TableName: table.name, Key: processKey(key), ReturnValues: "ALL_OLD" }),
      ),
    );
    if (Attributes === undefined) return false;
    const expiresAt = Attributes.idleExpiresAt;
    if (expiresAt !== undefined) {
      await table.request(() =>
        table.doc.send(new DeleteCommand({ TableName: table.name, Key: liveEntryKey(key) })),
      );
    }
    return liveAt === undefined || typeof expiresAt !== "number" || expiresAt > liveAt;
  }

  async getProcess(key: ProcessKey): Promise<ProcessRecord | null> {
    const { table } = this;
    const { Item } = await table.request(() =>
      table.doc.send(new GetCommand({ TableName: table.name, Key: processKey(key), ConsistentRead: true })),
    );
    return Item === undefined ? null : toProcessRecord(Item);
  }

  /**
   * One BatchGetItem (two and more only past 100 markers, or for keys DynamoDB left unprocessed);
   * consistent reads, so a write that answered before is seen. A record whose version this
   * instance parsed before is read as its version and activations; a GetItem of the whole item
   * follows only when the version changed.
   */
  async getProcessAndGenerations(
    key: ProcessKey,
    markers: readonly string[],
  ): Promise<ProcessWithGenerations> {
    const id = itemId(processKey(key));
    const known = this.#parsed.get(id);
    const items = await this.table.batchGet(
      [processKey(key), ...markers.map(generationKey)],
      known ? VERSION_AND_ACTIVATIONS : undefined,
    );
    const generations = markers.map((marker) => generationOf(items.get(itemId(generationKey(marker)))));
    const item = items.get(id);
    if (item === undefined) return { process: null, generations };
    if (known && item.recordVersion === known.version) {
      this.#stats.hits++;
      return {
        process: { ...known.fields, activatedTools: activationsOf(item), ...expiryOf(item) },
        generations,
        version: String(known.version),
      };
    }
    this.#stats.misses++;
    const whole = known ? await this.#getWhole(key) : item;
    const process = this.#remember(id, whole);
    this.#stats.entries = this.#parsed.size;
    // An item stored before versions has none to name its fields by.
    const version = whole?.recordVersion;
    return typeof version === "number" && process !== null
      ? { process, generations, version: String(version) }
      : { process, generations };
  }

  /** The whole item, consistent; `undefined` when it is gone. */
  async #getWhole(key: ProcessKey): Promise<Record<string, unknown> | undefined> {
    const { table } = this;
    const { Item } = await table.request(() =>
      table.doc.send(new GetCommand({ TableName: table.name, Key: processKey(key), ConsistentRead: true })),
    );
    return Item;
  }

  /** The record of a whole item, kept parsed by its version (items without one are not kept). */
  #remember(id: string, item: Record<string, unknown> | undefined): ProcessRecord | null {
    if (item === undefined) return null;
    const record = toProcessRecord(item);
    const previous = this.#parsed.get(id);
    if (previous) {
      this.#parsedNames -= previous.names;
      this.#parsed.delete(id);
    }
    if (typeof item.recordVersion !== "number") return record;
    const { activatedTools, expiresAt, ...fields } = record;
    const names =
      fields.allowedTools.length + fields.allowedToolsAdd.length + fields.excludedTools.length + 1;
    if (names > PARSED_RECORD_NAMES) return record;
    // Deep-frozen: every turn shares it (the allow-set caches go by the version answered with it).
    this.#parsed.set(id, { version: item.recordVersion, fields: deepFreeze(fields), names });
    this.#parsedNames += names;
    for (const [oldId, entry] of this.#parsed) {
      if (this.#parsedNames <= PARSED_RECORD_NAMES) break;
      this.#parsed.delete(oldId);
      this.#parsedNames -= entry.names;
    }
    return { ...fields, activatedTools, ...(expiresAt === undefined ? {} : { expiresAt }) };
  }

  /**
   * One UpdateItem per 100 names (a turn touches a handful), each atomic on its own; with no
   * names, one GetItem answers whether the process exists.
   */
  async touchActivatedTools(key: ProcessKey, names: readonly string[], at: number): Promise<boolean> {
    const { table } = this;
    const unique = [...new Set(names)];
    if (unique.length === 0) {
      const { Item } = await table.request(() =>
        table.doc.send(
          new GetCommand({
            TableName: table.name,
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
      const applied = await table.conditional(() =>
        table.doc.send(
          new UpdateCommand({
            TableName: table.name,
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
    const { table } = this;
    for (const chunk of chunks([...new Set(names)], MAX_NAMES_PER_UPDATE)) {
      const placeholderNames = placeholders("#n", chunk);
      // The condition keeps UpdateItem from creating a bare item for an unknown process.
      await table.conditional(() =>
        table.doc.send(
          new UpdateCommand({
            TableName: table.name,
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
}

function processKey(key: ProcessKey): ItemKey {
  return { pk: `PROC#${keyPart(key.tenant)}#${keyPart(key.project)}`, sk: keyPart(key.processId) };
}

function liveKey(tenant: string): string {
  return `LIVE#${keyPart(tenant)}`;
}

/** A process's entry in its tenant's live partition (`countLiveProcesses`). */
function liveEntryKey(key: ProcessKey): ItemKey {
  return { pk: liveKey(key.tenant), sk: `${keyPart(key.project)}#${keyPart(key.processId)}` };
}

/** The expiry as stored: epoch ms, and the table's TTL attribute in epoch seconds. */
function expiryAttributes(expiresAt: number | undefined): Record<string, number> {
  return expiresAt === undefined
    ? {}
    : { idleExpiresAt: expiresAt, [stateTableTtlAttribute]: ttlSeconds(expiresAt) };
}

/** DynamoDB's TTL is in seconds; rounded up, so it never deletes a process before it expired. */
function ttlSeconds(expiresAt: number): number {
  return Math.ceil(expiresAt / 1000);
}

function expiryOf(item: Record<string, unknown>): Pick<ProcessRecord, "expiresAt"> {
  return typeof item.idleExpiresAt === "number" ? { expiresAt: item.idleExpiresAt } : {};
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
    activatedTools: activationsOf(item),
    ...expiryOf(item),
  };
}

function activationsOf(item: Record<string, unknown>): ProcessRecord["activatedTools"] {
  return (item.activatedTools ?? {}) as ProcessRecord["activatedTools"];
}

/** `value` with every object and array in it frozen: parsed fields shared between readers. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
