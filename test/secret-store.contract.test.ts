import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { SecretDecryptionError } from "@vance/adapters";
import { createDynamoClient, DynamoSecretStore, ensureStateTable, secretKey } from "@vance/adapters/aws";
import { SqliteSecretStore, SqliteStateStore } from "@vance/adapters/sqlite";
import type { SecretStore } from "@vance/core";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const START = Date.UTC(2025, 0, 1, 12, 0, 0);
const KEY = new Uint8Array(randomBytes(32));

/** Access below the port: the stored bytes, as an operator (or an attacker with the database) sees them. */
interface RawSecrets {
  ciphertext(tenant: string, name: string): Promise<Uint8Array | undefined>;
  /** Writes a stored item/row with these bytes, as if copied there by someone with database access. */
  plant(tenant: string, name: string, ciphertext: Uint8Array): Promise<void>;
  /** Another store over the same data, with another key. */
  withKey(key: Uint8Array): SecretStore;
}

type StoreFactory = (
  now: () => number,
) => Promise<{ store: SecretStore; raw: RawSecrets; close: () => Promise<void> }>;

/** The one contract every SecretStore implementation must pass. */
function secretStoreContract(name: string, factory: StoreFactory): void {
  describe(`SecretStore contract: ${name}`, () => {
    let store: SecretStore;
    let raw: RawSecrets;
    let close: () => Promise<void>;
    let nowMs = START;
    let sequence = 0;
    /** Every test works on its own tenants, so one store serves the suite. */
    const tenant = () => `tenant-${++sequence}`;

    beforeAll(async () => {
      ({ store, raw, close } = await factory(() => nowMs));
    });
    afterAll(async () => {
      await close?.();
    });

    it("returns what was put, multi-byte text and an 8 KiB value included", async () => {
      const t = tenant();
      await store.put(t, "API_TOKEN", "tök€n-🔑-1");
      await store.put(t, "BIG", "x".repeat(8192));
      expect(await store.get(t, "API_TOKEN")).toBe("tök€n-🔑-1");
      expect(await store.get(t, "BIG")).toBe("x".repeat(8192));
      expect(await store.get(t, "NEVER_SET")).toBeUndefined();
    });

    it("overwrites a secret: the latest value and write time win, still one entry", async () => {
      const t = tenant();
      nowMs = START;
      await store.put(t, "KEY", "first");
      nowMs = START + 60_000;
      await store.put(t, "KEY", "second");
      expect(await store.get(t, "KEY")).toBe("second");
      expect(await store.list(t)).toEqual([
        { name: "KEY", updatedAt: new Date(START + 60_000).toISOString() },
      ]);
    });

    it("deletes: true once, then false, and the value is gone", async () => {
      const t = tenant();
      await store.put(t, "GONE", "v");
      expect(await store.delete(t, "GONE")).toBe(true);
      expect(await store.get(t, "GONE")).toBeUndefined();
      expect(await store.delete(t, "GONE")).toBe(false);
      expect(await store.delete(t, "NEVER_SET")).toBe(false);
      expect(await store.list(t)).toEqual([]);
    });

    it("lists names and write times sorted by name, never values", async () => {
      const t = tenant();
      nowMs = START;
      for (const secret of ["ZETA", "ALPHA", "MID_1"]) await store.put(t, secret, `value-of-${secret}`);
      const listed = await store.list(t);
      expect(listed).toEqual(
        ["ALPHA", "MID_1", "ZETA"].map((n) => ({ name: n, updatedAt: new Date(START).toISOString() })),
      );
      expect(JSON.stringify(listed)).not.toContain("value-of");
      expect(await store.list(tenant())).toEqual([]);
    });

    it("isolates tenants: the same name holds separate values, and deleting one leaves the other", async () => {
      const [a, b] = [tenant(), tenant()];
      await store.put(a, "SHARED_NAME", "value-a");
      await store.put(b, "SHARED_NAME", "value-b");
      expect(await store.get(a, "SHARED_NAME")).toBe("value-a");
      expect(await store.get(b, "SHARED_NAME")).toBe("value-b");
      expect(await store.get(tenant(), "SHARED_NAME")).toBeUndefined();
      await store.delete(a, "SHARED_NAME");
      expect(await store.get(b, "SHARED_NAME")).toBe("value-b");
      expect((await store.list(a)).map((e) => e.name)).toEqual([]);
    });

    it("stores ciphertext: not the plaintext, a fresh IV per write, 29 bytes of overhead", async () => {
      const t = tenant();
      const plaintext = "sk-live-PLAINTEXT-MARKER";
      await store.put(t, "SEALED", plaintext);
      const first = await raw.ciphertext(t, "SEALED");
      expect(first).toBeDefined();
      const bytes = Buffer.from(first!);
      expect(bytes.includes(Buffer.from(plaintext))).toBe(false);
      expect(bytes.includes(Buffer.from("PLAINTEXT"))).toBe(false);
      expect(bytes.length).toBe(1 + 12 + 16 + Buffer.byteLength(plaintext));
      await store.put(t, "SEALED", plaintext);
      expect(Buffer.from((await raw.ciphertext(t, "SEALED"))!).equals(bytes)).toBe(false);
    });

    // A moved ciphertext is a fault of the store, not a missing secret: get throws, and the
    // invocation fails as an internal error instead of silently calling out without it.
    it("a ciphertext copied to another tenant or another name does not decrypt (get throws)", async () => {
      const [a, b] = [tenant(), tenant()];
      await store.put(a, "STOLEN", "a's value");
      const sealed = (await raw.ciphertext(a, "STOLEN"))!;
      await raw.plant(b, "STOLEN", sealed);
      await raw.plant(a, "OTHER_NAME", sealed);
      await expect(store.get(b, "STOLEN")).rejects.toBeInstanceOf(SecretDecryptionError);
      await expect(store.get(a, "OTHER_NAME")).rejects.toBeInstanceOf(SecretDecryptionError);
      expect(await store.get(a, "STOLEN")).toBe("a's value");
    });

    it("a flipped byte or another key does not decrypt, and the error names no value", async () => {
      const t = tenant();
      await store.put(t, "INTACT", "the-intact-value");
      const sealed = Buffer.from((await raw.ciphertext(t, "INTACT"))!);
      sealed[sealed.length - 1]! ^= 1;
      await raw.plant(t, "TAMPERED", sealed);
      await expect(store.get(t, "TAMPERED")).rejects.toThrow(SecretDecryptionError);
      const otherKey = raw.withKey(new Uint8Array(randomBytes(32)));
      const error = await otherKey.get(t, "INTACT").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SecretDecryptionError);
      expect(String((error as Error).message)).not.toContain("the-intact-value");
    });

    it("does not confuse tenants and names that only differ in where a '#' or '%23' sits", async () => {
      const suffix = ++sequence;
      const hash = `t${suffix}#x`;
      const plain = `t${suffix}`;
      const escaped = `t${suffix}%23x`;
      await store.put(hash, "N", "hash-tenant");
      await store.put(plain, "x#N", "hash-name");
      await store.put(escaped, "N", "escaped-tenant");
      expect(await store.get(hash, "N")).toBe("hash-tenant");
      expect(await store.get(plain, "x#N")).toBe("hash-name");
      expect(await store.get(escaped, "N")).toBe("escaped-tenant");
      expect((await store.list(plain)).map((e) => e.name)).toEqual(["x#N"]);
      expect((await store.list(hash)).map((e) => e.name)).toEqual(["N"]);
    });
  });
}

function sqliteRaw(db: Database.Database): RawSecrets {
  return {
    async ciphertext(tenant, name) {
      const row = db
        .prepare("SELECT ciphertext FROM secrets WHERE tenant = ? AND name = ?")
        .get(tenant, name) as { ciphertext: Buffer } | undefined;
      return row?.ciphertext;
    },
    async plant(tenant, name, ciphertext) {
      db.prepare(
        `INSERT INTO secrets (tenant, name, ciphertext, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET ciphertext = excluded.ciphertext`,
      ).run(tenant, name, Buffer.from(ciphertext), new Date(START).toISOString());
    },
    withKey: (key) => new SqliteSecretStore(db, { key }),
  };
}

secretStoreContract("SqliteSecretStore in memory", async (now) => {
  const db = new Database(":memory:");
  const store = new SqliteSecretStore(db, { key: KEY, now });
  return {
    store,
    raw: sqliteRaw(db),
    close: async () => {
      db.close();
    },
  };
});

const sqliteDir = mkdtempSync(join(tmpdir(), "vance-secrets-"));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));

secretStoreContract("SqliteSecretStore in a file", async (now) => {
  const file = join(sqliteDir, "contract.sqlite");
  const store = new SqliteSecretStore(file, { key: KEY, now });
  // A second connection, as an operator with the file would read it.
  const db = new Database(file);
  return {
    store,
    raw: sqliteRaw(db),
    close: async () => {
      db.close();
      store.close();
    },
  };
});

secretStoreContract("DynamoSecretStore on DynamoDB Local", async (now) => {
  const client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
  const tableName = `secrets-${randomUUID()}`;
  await ensureStateTable(client, tableName);
  const store = new DynamoSecretStore({ client, tableName, key: KEY, now });
  const doc = DynamoDBDocumentClient.from(client);
  const raw: RawSecrets = {
    async ciphertext(tenant, name) {
      const { Item } = await doc.send(
        new GetCommand({ TableName: tableName, Key: secretKey(tenant, name), ConsistentRead: true }),
      );
      return Item?.ciphertext as Uint8Array | undefined;
    },
    async plant(tenant, name, ciphertext) {
      await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...secretKey(tenant, name),
            tenant,
            name,
            ciphertext,
            updatedAt: new Date(START).toISOString(),
          },
        }),
      );
    },
    withKey: (key) => new DynamoSecretStore({ client, tableName, key }),
  };
  return { store, raw, close: async () => client.destroy() };
});

describe("SqliteSecretStore beside the state store", () => {
  it("shares the state file and keeps secrets after it is reopened", async () => {
    const file = join(sqliteDir, "state.sqlite");
    const state = new SqliteStateStore(file);
    const secrets = new SqliteSecretStore(file, { key: KEY });
    await state.markOnce("m", 60);
    await secrets.put("acme", "API_KEY", "kept");
    secrets.close();
    state.close();

    const reopened = new SqliteSecretStore(file, { key: KEY });
    try {
      expect(await reopened.get("acme", "API_KEY")).toBe("kept");
    } finally {
      reopened.close();
    }
  });
});

describe("DynamoSecretStore requests", () => {
  let client: ReturnType<typeof createDynamoClient>;
  let store: DynamoSecretStore;

  beforeAll(async () => {
    client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
    const tableName = `secrets-${randomUUID()}`;
    await ensureStateTable(client, tableName);
    store = new DynamoSecretStore({ client, tableName, key: KEY, queryPageSize: 2 });
  });
  afterAll(() => client.destroy());

  async function requestsFor(operation: () => Promise<unknown>): Promise<number> {
    store.resetRequestCount();
    await operation();
    return store.requestCount;
  }

  it("sends one request per put, get and delete, found or not", async () => {
    expect(await requestsFor(() => store.put("acme", "ONE", "v"))).toBe(1);
    expect(await requestsFor(() => store.get("acme", "ONE"))).toBe(1);
    expect(await requestsFor(() => store.get("acme", "NONE"))).toBe(1);
    expect(await requestsFor(() => store.delete("acme", "ONE"))).toBe(1);
    expect(await requestsFor(() => store.delete("acme", "ONE"))).toBe(1);
  });

  it("follows list pages until the last one", async () => {
    for (const name of ["E", "D", "C", "B", "A"]) await store.put("paged", name, name);
    store.resetRequestCount();
    expect((await store.list("paged")).map((e) => e.name)).toEqual(["A", "B", "C", "D", "E"]);
    // Pages of 2: A+B, C+D, E.
    expect(store.requestCount).toBe(3);
  });
});
