import { describe, expect, it } from "vitest";
import { CascadeRead } from "../cascade/cascade-read";
import type { ProcessRecord, ProcessWithGenerations } from "../ports/process-store";
import type { JsonSchemaValidator } from "../validation/json-schema-validator";
import { ProcessRecordCaches, ProcessRecords, storedProcessRecord } from "./process-records";

/**
 * Issue 38 §2: what a process record's allow set and its whole `allowedToolsAdd` are derived once
 * per stored version of the record, never per object — a record parsed again into a
 * fresh-but-equal object keeps them, a record stored anew under the id never gets the old ones.
 */

const NOW = Date.parse("2026-06-01T00:00:00Z");

function record(allowedTools: readonly string[], allowedToolsAdd: readonly string[] = []): ProcessRecord {
  return {
    tenant: "acme",
    project: "shop",
    processId: "p-1",
    createdAt: new Date(NOW).toISOString(),
    recipe: null,
    engine: null,
    role: "default",
    allowedTools,
    allowedPacks: [],
    excludedTools: [],
    allowedToolsAdd,
    allowedToolsKeep: [],
    allowedToolsDefer: [],
    allowedToolsDropFirst: [],
    models: [],
    clientTools: [],
    activatedTools: {},
    expiresAt: NOW + 60 * 60 * 1000,
  };
}

/** A deep-frozen copy, as a store hands out a record it parsed again from its text. */
function parsedAgain<T>(value: T): T {
  const copy = JSON.parse(JSON.stringify(value)) as T;
  const freeze = (inner: unknown): void => {
    if (typeof inner !== "object" || inner === null) return;
    for (const child of Object.values(inner)) freeze(child);
    Object.freeze(inner);
  };
  freeze(copy);
  return copy;
}

/** A store answering the stored record (parsed again on every read) with the version it was stored under. */
function storeOf(stored: { record: ProcessRecord; version: string | undefined }) {
  return {
    getProcessAndGenerations: async (): Promise<ProcessWithGenerations> => ({
      process: parsedAgain(stored.record),
      generations: [],
      ...(stored.version === undefined ? {} : { version: stored.version }),
    }),
    createProcess: async () => true,
    touchActivatedTools: async () => true,
    removeActivatedTools: async () => {},
    deleteProcess: async () => true,
    touchProcess: async () => true,
  };
}

function recordsOver(stored: { record: ProcessRecord; version: string | undefined }) {
  const caches = new ProcessRecordCaches();
  const records = new ProcessRecords({
    state: storeOf(stored),
    generations: {
      readAlong: async (_markers, read) => (await read()).value,
      read: async () => {},
      ensure: async () => {},
    },
    recipes: {
      resolve: async () => ({
        allowedTools: [],
        allowedPacks: [],
        excludedTools: [],
        warnings: [],
        stalePacks: [],
      }),
    },
    jsonSchemas: {} as JsonSchemaValidator,
    caches,
    now: () => NOW,
  });
  const turn = () => records.get("acme", "shop", "p-1", CascadeRead.begin());
  return { records, caches, turn };
}

describe("process record caches: kept by the record's version, not by its objects", () => {
  it("a record parsed again as a fresh-but-equal object answers its allow set from the cache", async () => {
    const names = Array.from({ length: 50 }, (_, i) => `tool_${i}`);
    const { records, caches, turn } = recordsOver({ record: record(names), version: "7" });
    const first = await turn();
    const second = await turn();
    expect(second).not.toBe(first);
    expect(second.allowedTools).not.toBe(first.allowedTools);
    expect(records.allowSet(first).has("tool_3")).toBe(true);
    expect(records.allowSet(second).has("tool_3")).toBe(true);
    expect(records.allowSet(second).has("tool_x")).toBe(false);
    // One allow set built for the version: the second record's reads found it.
    expect(caches.allowSetReport()).toMatchObject({ misses: 1, hits: 2, entries: 1 });
  });

  it("the whole allowedToolsAdd of a record parsed again is expanded once per version", async () => {
    const names = Array.from({ length: 50 }, (_, i) => `tool_${i}`);
    const stored = storedProcessRecord(record(names, names.slice(0, 20)));
    const { caches, turn } = recordsOver({ record: stored, version: "7" });
    const first = await turn();
    const second = await turn();
    expect(second.allowedToolsAdd).toEqual(names.slice(0, 20).sort());
    expect(second.allowedToolsAdd).toBe(first.allowedToolsAdd);
    expect(caches.allowedToolsAddReport()).toMatchObject({ misses: 1, hits: 1 });
  });

  it("a record stored anew under the same id (another version) never answers the old allow set", async () => {
    const stored = { record: record(["tool_a"]), version: "7" as string | undefined };
    const { records, turn } = recordsOver(stored);
    expect(records.allowSet(await turn()).has("tool_a")).toBe(true);
    stored.record = record(["tool_b"]);
    stored.version = "8";
    const changed = await turn();
    expect(records.allowSet(changed).has("tool_a")).toBe(false);
    expect(records.allowSet(changed).has("tool_b")).toBe(true);
  });

  it("a record without a version keeps nothing: each read builds its own allow set", async () => {
    const stored = { record: record(["tool_a"]), version: undefined };
    const { records, caches, turn } = recordsOver(stored);
    expect(records.allowSet(await turn()).has("tool_a")).toBe(true);
    stored.record = record(["tool_b"]);
    const changed = await turn();
    expect(records.allowSet(changed).has("tool_a")).toBe(false);
    expect(records.versionOf(changed)).toBeUndefined();
    expect(caches.allowSetReport()).toMatchObject({ misses: 0, hits: 0, entries: 0 });
  });
});
