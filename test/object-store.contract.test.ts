import { randomUUID } from "node:crypto";
import { existsSync, readlinkSync } from "node:fs";
import {
  type FileHandle,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  utimes,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { FsObjectStore, InvalidObjectKeyError } from "@vance/adapters";
import { createS3Client, S3ObjectStore } from "@vance/adapters/aws";
import { CountingObjectStore, MemoryObjectStore } from "@vance/adapters/testing";
import { type GetResult, type ObjectStore, type StoredObject, StoreUnavailableError } from "@vance/core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";

/** The clock of every store's audit times: a test moves it instead of waiting for time to pass. */
const clock = { ms: Date.now() };
const now = () => clock.ms;

/** Builds a fresh, empty store for one test and knows how to clean it up. */
type StoreFactory = () => Promise<{ store: ObjectStore; dispose: () => Promise<void> }>;

function expectObject(result: GetResult): StoredObject {
  expect(result).not.toBeNull();
  if (result === null || "notModified" in result)
    throw new Error(`expected an object, got ${JSON.stringify(result)}`);
  return result;
}

async function putOk(store: ObjectStore, key: string, body: string, contentType?: string): Promise<string> {
  const result = await store.put(key, body, contentType === undefined ? {} : { contentType });
  if (!result.ok) throw new Error(`put ${key} failed: ${result.reason}`);
  return result.etag;
}

async function listAll(store: ObjectStore, prefix: string, limit?: number) {
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, {
      ...(limit !== undefined && { limit }),
      ...(cursor && { cursor }),
    });
    pages.push(page);
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

function withStore(factory: StoreFactory): () => ObjectStore {
  let current: { store: ObjectStore; dispose: () => Promise<void> } | undefined;
  beforeEach(async () => {
    current = await factory();
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("store used outside a test");
    return current.store;
  };
}

/** The behaviour every ObjectStore adapter must share. */
function objectStoreContract(name: string, factory: StoreFactory): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const store = withStore(factory);

    it("answers null for a key that was never written", async () => {
      expect(await store().get("t1/p1/server-tools/missing.yaml")).toBeNull();
    });

    it("returns the written body, the put's etag and the content type", async () => {
      const etag = await putOk(store(), "t1/p1/server-tools/a.yaml", "name: a\n", "application/yaml");
      expect(etag).toMatch(/^".+"$/);
      const object = expectObject(await store().get("t1/p1/server-tools/a.yaml"));
      expect(object).toEqual({
        key: "t1/p1/server-tools/a.yaml",
        body: "name: a\n",
        etag,
        contentType: "application/yaml",
        audit: {
          createdAt: expect.any(String),
          createdBy: null,
          updatedAt: expect.any(String),
          updatedBy: null,
        },
      });
    });

    it("keeps who wrote an object and when: a replacement keeps createdAt and createdBy, a delete forgets them", async () => {
      const key = "t1/p1/server-tools/audited.yaml";
      const created = await store().put(key, "v: 1", { author: "alice@example.com", ifNoneMatch: "*" });
      expect(created).toMatchObject({
        ok: true,
        audit: { createdBy: "alice@example.com", updatedBy: "alice@example.com" },
      });
      const first = expectObject(await store().get(key)).audit!;
      expect(first.updatedBy).toBe("alice@example.com");
      expect(first.createdBy).toBe("alice@example.com");
      expect(Date.parse(first.createdAt!)).not.toBeNaN();
      expect(first.updatedAt).toBe(first.createdAt);

      clock.ms += 1000;
      const replaced = await store().put(key, "v: 2", { author: "bob ü" });
      expect(replaced).toMatchObject({
        ok: true,
        audit: { createdAt: first.createdAt, createdBy: "alice@example.com", updatedBy: "bob ü" },
      });
      const second = expectObject(await store().get(key)).audit!;
      expect(second.createdAt).toBe(first.createdAt);
      expect(second.createdBy).toBe("alice@example.com");
      expect(second.updatedBy).toBe("bob ü");
      expect(Date.parse(second.updatedAt!)).toBeGreaterThan(Date.parse(first.updatedAt!));

      const anonymous = await store().put(key, "v: 3");
      expect(anonymous).toMatchObject({
        ok: true,
        audit: { createdAt: first.createdAt, createdBy: "alice@example.com", updatedBy: null },
      });
      await store().delete(key);
      clock.ms += 1000;
      await store().put(key, "v: 4", { author: "carol" });
      const again = expectObject(await store().get(key)).audit!;
      expect(Date.parse(again.createdAt!)).toBeGreaterThan(Date.parse(first.createdAt!));
      expect(again.createdBy).toBe("carol");
    });

    it("changes the etag when an object is overwritten", async () => {
      const first = await putOk(store(), "doc.md", "# one", "text/markdown");
      const second = await putOk(store(), "doc.md", "# two", "text/markdown");
      expect(second).not.toBe(first);
      const object = expectObject(await store().get("doc.md"));
      expect(object.body).toBe("# two");
      expect(object.etag).toBe(second);
    });

    it("pages through 25 keys 10 at a time, in order, with the etags get returns", async () => {
      const keys = Array.from({ length: 25 }, (_, i) => `docs/k${String(i).padStart(2, "0")}.md`);
      for (const key of [...keys].reverse()) await putOk(store(), key, `body of ${key}`, "text/markdown");
      await putOk(store(), "other/k00.md", "outside the prefix", "text/markdown");

      const pages = await listAll(store(), "docs/", 10);
      expect(pages.map((page) => page.items.length)).toEqual([10, 10, 5]);
      expect(pages.at(-1)?.cursor).toBeUndefined();
      const items = pages.flatMap((page) => page.items);
      expect(items.map((item) => item.key)).toEqual(keys);
      for (const item of items) {
        const object = expectObject(await store().get(item.key));
        expect(item.etag).toBe(object.etag);
        expect(item.size).toBe(Buffer.byteLength(object.body, "utf8"));
      }
    });

    it("lists only keys under the prefix", async () => {
      for (const key of ["a/x", "a/y", "ab/z", "b/x"]) {
        await putOk(store(), key, key, "text/plain");
      }
      const keysOf = async (prefix: string) => (await store().list(prefix)).items.map((item) => item.key);
      expect(await keysOf("a/")).toEqual(["a/x", "a/y"]);
      expect(await keysOf("a")).toEqual(["a/x", "a/y", "ab/z"]);
      expect(await keysOf("b/")).toEqual(["b/x"]);
      expect(await store().list("c/")).toEqual({ items: [], cursor: undefined });
    });

    it("forgets a deleted object in get and list", async () => {
      await putOk(store(), "t/p/scripts/s.js", "export default 1;", "application/javascript");
      await putOk(store(), "t/p/scripts/keep.js", "export default 2;", "application/javascript");
      expect(await store().delete("t/p/scripts/s.js")).toEqual({ ok: true });
      expect(await store().get("t/p/scripts/s.js")).toBeNull();
      expect((await store().list("t/p/")).items.map((item) => item.key)).toEqual(["t/p/scripts/keep.js"]);
    });

    it("answers not_found when deleting an absent key", async () => {
      expect(await store().delete("t/p/nothing.yaml")).toEqual({ ok: false, reason: "not_found" });
    });

    it("answers notModified for the current etag and the object for a stale one", async () => {
      const stale = await putOk(store(), "c.json", '{"v":1}', "application/json");
      const current = await putOk(store(), "c.json", '{"v":2}', "application/json");
      expect(await store().get("c.json", { ifNoneMatch: current })).toEqual({ notModified: true });
      expect(expectObject(await store().get("c.json", { ifNoneMatch: stale })).body).toBe('{"v":2}');
    });

    it("keeps UTF-8 bodies intact (umlauts, emoji, CJK)", async () => {
      const body = "description: Grüße aus Köln — ñandú 中文 🎉🚀👩‍💻\n";
      const etag = await putOk(store(), "t/p/server-tools/ümlaut.yaml", body, "application/yaml");
      const object = expectObject(await store().get("t/p/server-tools/ümlaut.yaml"));
      expect(object.body).toBe(body);
      const [item] = (await store().list("t/p/server-tools/")).items;
      expect(item).toEqual({
        key: "t/p/server-tools/ümlaut.yaml",
        etag,
        size: Buffer.byteLength(body, "utf8"),
      });
    });
  });
}

/** S3's listing order, which s3rver does not reproduce. */
function keyOrderContract(name: string, factory: StoreFactory): void {
  describe(`ObjectStore key order: ${name} (memory and fs only — s3rver walks its directories and lists "a/b" before "a-c"; S3 orders by UTF-8 bytes)`, () => {
    const store = withStore(factory);

    it("lists keys in UTF-8 byte order across directory boundaries, also when paging", async () => {
      // "-" (0x2d) < "." (0x2e) < "/" (0x2f) < "z"; "\uffff" is 3 UTF-8 bytes, "😀" 4 (a surrogate pair in UTF-16).
      const expected = ["o/a-c", "o/a.d", "o/a/b", "o/a/z", "o/az", "o/\uffff", "o/😀"];
      for (const key of [...expected].reverse()) await putOk(store(), key, key);
      const keysOf = (pages: Awaited<ReturnType<typeof listAll>>) =>
        pages.flatMap((page) => page.items.map((i) => i.key));
      expect(keysOf(await listAll(store(), "o/"))).toEqual(expected);
      expect(keysOf(await listAll(store(), "o/", 2))).toEqual(expected);
    });
  });

  describe(`ObjectStore delimited listing: ${name} (memory and fs only — s3rver 3.7 leaves out a folder that holds only folders, and pages its objects without its folders; the S3 adapter's Delimiter is tested with a stubbed client)`, () => {
    const store = withStore(factory);

    it("lists one level with a delimiter: objects there, and the folders below it once each, paged together", async () => {
      for (const key of ["t/a/x.md", "t/a/y/z.md", "t/b/x.md", "t/c.md", "t/d/e/f.md", "u/x.md"]) {
        await putOk(store(), key, key, "text/markdown");
      }
      const one = await store().list("t/", { delimiter: "/" });
      expect(one.items.map((item) => item.key)).toEqual(["t/c.md"]);
      expect(one.folders).toEqual(["t/a/", "t/b/", "t/d/"]);
      expect(one.cursor).toBeUndefined();
      const first = await store().list("t/", { delimiter: "/", limit: 2 });
      expect([first.folders, first.items.map((item) => item.key)]).toEqual([["t/a/", "t/b/"], []]);
      const second = await store().list("t/", { delimiter: "/", limit: 2, cursor: first.cursor! });
      expect([second.folders, second.items.map((item) => item.key)]).toEqual([["t/d/"], ["t/c.md"]]);
      expect(second.cursor).toBeUndefined();
      expect((await store().list("t/a/", { delimiter: "/" })).folders).toEqual(["t/a/y/"]);
    });
  });
}

/** If-Match / If-None-Match semantics, which s3rver does not implement (so S3 cannot run them here). */
function conditionalWriteContract(name: string, factory: StoreFactory): void {
  describe(`ObjectStore conditional writes: ${name} (memory and fs only — s3rver ignores If-Match / If-None-Match, DESIGN.md §5)`, () => {
    const store = withStore(factory);

    it("creates with ifNoneMatch '*' only when the key is absent, and changes nothing otherwise", async () => {
      const created = await store().put("t/p/server-tools/x.yaml", "v: 1", { ifNoneMatch: "*" });
      expect(created.ok).toBe(true);
      const again = await store().put("t/p/server-tools/x.yaml", "v: 2", { ifNoneMatch: "*" });
      expect(again).toEqual({ ok: false, reason: "precondition_failed" });
      const object = expectObject(await store().get("t/p/server-tools/x.yaml"));
      expect(object.body).toBe("v: 1");
      expect(created.ok && object.etag).toBe(created.ok && created.etag);
    });

    it("rejects a stale ifMatch and accepts the current one", async () => {
      const v1 = await putOk(store(), "k.yaml", "v: 1");
      const v2 = await putOk(store(), "k.yaml", "v: 2");
      expect(await store().put("k.yaml", "v: lost", { ifMatch: v1 })).toEqual({
        ok: false,
        reason: "precondition_failed",
      });
      expect(expectObject(await store().get("k.yaml")).body).toBe("v: 2");

      const v3 = await store().put("k.yaml", "v: 3", { ifMatch: v2 });
      expect(v3.ok).toBe(true);
      const object = expectObject(await store().get("k.yaml"));
      expect(object.body).toBe("v: 3");
      expect(v3.ok && object.etag).toBe(v3.ok && v3.etag);
    });

    it("rejects ifMatch on an absent key without creating it", async () => {
      expect(await store().put("absent.yaml", "v: 1", { ifMatch: '"whatever"' })).toEqual({
        ok: false,
        reason: "precondition_failed",
      });
      expect(await store().get("absent.yaml")).toBeNull();
    });

    it("changes the etag even when identical bytes are rewritten, so an old etag stays stale", async () => {
      const first = await putOk(store(), "same.yaml", "v: 1");
      await putOk(store(), "same.yaml", "v: 2");
      const third = await putOk(store(), "same.yaml", "v: 1");
      expect(third).not.toBe(first);
      expect((await store().put("same.yaml", "v: 4", { ifMatch: first })).ok).toBe(false);
    });

    it("deletes with ifMatch only when the etag is current", async () => {
      const v1 = await putOk(store(), "d.yaml", "v: 1");
      const v2 = await putOk(store(), "d.yaml", "v: 2");
      expect(await store().delete("d.yaml", { ifMatch: v1 })).toEqual({
        ok: false,
        reason: "precondition_failed",
      });
      expect(expectObject(await store().get("d.yaml")).body).toBe("v: 2");
      expect(await store().delete("d.yaml", { ifMatch: v2 })).toEqual({ ok: true });
      expect(await store().get("d.yaml")).toBeNull();
      expect(await store().delete("d.yaml", { ifMatch: v2 })).toEqual({ ok: false, reason: "not_found" });
    });
  });
}

const memoryFactory: StoreFactory = async () => ({
  store: new MemoryObjectStore({ now }),
  dispose: async () => {},
});

const fsFactory: StoreFactory = async () => {
  const root = await mkdtemp(join(tmpdir(), "vance-fs-store-"));
  return {
    store: new FsObjectStore(root, { now }),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
};

function s3rverClient(): S3Client {
  return createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    forcePathStyle: true,
  });
}

/** One fresh bucket per suite; each test gets its own key prefix inside it. */
function s3Factory(): StoreFactory {
  const client = s3rverClient();
  const bucket = `contract-${randomUUID().slice(0, 8)}`;
  let created: Promise<unknown> | undefined;
  return async () => {
    created ??= client.send(new CreateBucketCommand({ Bucket: bucket }));
    await created;
    const store = new S3ObjectStore({ client, bucket, prefix: `test-${randomUUID().slice(0, 8)}`, now });
    return { store, dispose: async () => {} };
  };
}

objectStoreContract("MemoryObjectStore", memoryFactory);
objectStoreContract("FsObjectStore", fsFactory);
objectStoreContract("S3ObjectStore (s3rver)", s3Factory());
keyOrderContract("MemoryObjectStore", memoryFactory);
keyOrderContract("FsObjectStore", fsFactory);
conditionalWriteContract("MemoryObjectStore", memoryFactory);
conditionalWriteContract("FsObjectStore", fsFactory);

describe("MemoryObjectStore.fromRecord", () => {
  it("serves preloaded objects with content types from their extensions", async () => {
    const store = MemoryObjectStore.fromRecord({
      "server-tools/web_search.yaml": "type: rest\n",
      "documents/guide.md": "# Guide",
    });
    expect(expectObject(await store.get("server-tools/web_search.yaml")).contentType).toBe(
      "application/yaml",
    );
    expect(expectObject(await store.get("documents/guide.md")).contentType).toBe("text/markdown");
    expect((await store.list("")).items.map((item) => item.key)).toEqual([
      "documents/guide.md",
      "server-tools/web_search.yaml",
    ]);
  });
});

describe("FsObjectStore on disk", () => {
  let root: string;
  let store: FsObjectStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "vance-fs-store-"));
    store = new FsObjectStore(join(root, "data"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("stores key a/b/c.yaml as the file a/b/c.yaml under the root", async () => {
    await putOk(store, "a/b/c.yaml", "name: c\n");
    expect(await readFile(join(root, "data", "a", "b", "c.yaml"), "utf8")).toBe("name: c\n");
  });

  it("rejects keys that could escape the root or are malformed, and writes nothing", async () => {
    const bad = [
      "../escape.yaml",
      "a/../../escape.yaml",
      "/etc/passwd",
      "a//b.yaml",
      "a\\b.yaml",
      "a/./b",
      "a/",
      "",
    ];
    for (const key of bad) {
      await expect(store.put(key, "x"), key).rejects.toBeInstanceOf(InvalidObjectKeyError);
      await expect(store.get(key), key).rejects.toBeInstanceOf(InvalidObjectKeyError);
      await expect(store.delete(key), key).rejects.toBeInstanceOf(InvalidObjectKeyError);
    }
    await expect(store.list("../")).rejects.toBeInstanceOf(InvalidObjectKeyError);
    expect(existsSync(join(root, "escape.yaml"))).toBe(false);
    expect(await readdir(root)).toEqual([]);
  });

  it("infers the content type from the extension, not from the put option", async () => {
    await store.put("t/p/c.json", "{}", { contentType: "text/plain" });
    await putOk(store, "t/p/s.js", "1");
    await putOk(store, "t/p/notes.txt", "n");
    expect(expectObject(await store.get("t/p/c.json")).contentType).toBe("application/json");
    expect(expectObject(await store.get("t/p/s.js")).contentType).toBe("application/javascript");
    expect(expectObject(await store.get("t/p/notes.txt")).contentType).toBe("text/plain");
  });

  it("leaves temp files of interrupted writes out of listings", async () => {
    await putOk(store, "t/p/a.yaml", "a");
    await writeFile(join(root, "data", "t", "p", "b.yaml.0123abcd.vance-tmp"), "half a wri");
    expect((await store.list("t/")).items.map((item) => item.key)).toEqual(["t/p/a.yaml"]);
  });

  it("removes temp files a crash left behind (older than this process) when it starts, and never lists them", async () => {
    const data = join(root, "data");
    await mkdir(join(data, "t", "p"), { recursive: true });
    await mkdir(join(data, "t", "q"), { recursive: true });
    await writeFile(join(data, "t", "p", "a.yaml"), "a");
    await writeFile(join(data, "t", "p", "b.yaml.0123abcd0123.vance-tmp"), "half a wri");
    await writeFile(join(data, "t", "q", "c.yaml.0123abcd0123.vance-tmp"), "half");
    await writeFile(join(data, "x.md.ffffffffffff.vance-tmp"), "");
    const crashed = new Date(performance.timeOrigin - 60_000);
    for (const path of [
      join(data, "t", "p", "b.yaml.0123abcd0123.vance-tmp"),
      join(data, "t", "q", "c.yaml.0123abcd0123.vance-tmp"),
      join(data, "x.md.ffffffffffff.vance-tmp"),
    ]) {
      await utimes(path, crashed, crashed);
    }
    // Younger than this process: possibly another store's write in flight, so it stays (unlisted).
    await writeFile(join(data, "t", "p", "d.yaml.456789abcdef.vance-tmp"), "in flight");

    const restarted = new FsObjectStore(data);
    expect((await restarted.list("")).items.map((item) => item.key)).toEqual(["t/p/a.yaml"]);
    expect(await restarted.swept).toBe(3);
    expect((await readdir(join(data, "t", "p"))).sort()).toEqual(["a.yaml", "d.yaml.456789abcdef.vance-tmp"]);
    // A folder that held only temp files goes with them.
    expect((await readdir(join(data, "t"))).sort()).toEqual(["p"]);
    expect(await readdir(data)).toEqual(["t"]);
  });

  it("answers path_conflict for a key below a stored file and for a key that is a folder, changing nothing", async () => {
    await putOk(store, "t/a", "file a");
    await putOk(store, "t/d/x.md", "in d");
    expect(await store.put("t/a/b.md", "x")).toEqual({ ok: false, reason: "path_conflict" });
    expect(await store.put("t/a/deeper/c.md", "x")).toEqual({ ok: false, reason: "path_conflict" });
    expect(await store.put("t/d", "x")).toEqual({ ok: false, reason: "path_conflict" });
    expect(await store.put("t/d", "x", { ifNoneMatch: "*" })).toEqual({ ok: false, reason: "path_conflict" });
    expect(expectObject(await store.get("t/a")).body).toBe("file a");
    expect((await store.list("t/")).items.map((item) => item.key)).toEqual(["t/a", "t/d/x.md"]);
    expect((await readdir(join(root, "data", "t", "d"))).sort()).toEqual(["x.md", "x.md.vance-meta"]);
    expect((await readdir(join(root, "data", "t"))).sort()).toEqual(["a", "a.vance-meta", "d"]);
  });

  it.skipIf(!existsSync("/proc/self/fd"))(
    "fsyncs the written file before the rename and its directory after it (Linux: paths from /proc)",
    async () => {
      const probe = await open(join(root, "probe"), "w");
      const prototype = Object.getPrototypeOf(probe) as FileHandle;
      await probe.close();
      const original = prototype.sync;
      const synced: string[] = [];
      const spy = vi.spyOn(prototype, "sync").mockImplementation(function (this: FileHandle) {
        synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
        return original.call(this);
      });
      try {
        await putOk(store, "t/p/durable.yaml", "v: 1");
      } finally {
        spy.mockRestore();
      }
      const directory = join(root, "data", "t", "p");
      // The content, then its audit sidecar, then the directory holding both renames.
      expect(synced).toHaveLength(3);
      expect(synced[0]).toMatch(new RegExp(`^${directory}/durable\\.yaml\\.[0-9a-f]+\\.vance-tmp$`));
      expect(synced[1]).toMatch(
        new RegExp(`^${directory}/durable\\.yaml\\.vance-meta\\.[0-9a-f]+\\.vance-tmp$`),
      );
      expect(synced[2]).toBe(directory);
    },
  );

  it("removes directories a delete leaves empty", async () => {
    await putOk(store, "t/p/deep/x.yaml", "x");
    await putOk(store, "t/keep.yaml", "k");
    await store.delete("t/p/deep/x.yaml");
    expect((await readdir(join(root, "data", "t"))).sort()).toEqual(["keep.yaml", "keep.yaml.vance-meta"]);
  });

  it("lets exactly one of 20 concurrent puts with the same ifMatch win, and stores its body whole", async () => {
    const base = await putOk(store, "t/p/race.yaml", "v: 0");
    const bodies = Array.from(
      { length: 20 },
      (_, i) => `writer: ${i}\n${String.fromCharCode(65 + i).repeat(256 * 1024)}`,
    );
    const results = await Promise.all(
      bodies.map((body) => store.put("t/p/race.yaml", body, { ifMatch: base })),
    );

    const winners = results.flatMap((result, index) => (result.ok ? [{ index, etag: result.etag }] : []));
    expect(winners).toHaveLength(1);
    expect(results.filter((result) => !result.ok)).toEqual(
      Array.from({ length: 19 }, () => ({ ok: false, reason: "precondition_failed" })),
    );
    const object = expectObject(await store.get("t/p/race.yaml"));
    expect(object.body).toBe(bodies[winners[0]!.index]);
    expect(object.etag).toBe(winners[0]!.etag);
    expect((await readdir(join(root, "data", "t", "p"))).sort()).toEqual([
      "race.yaml",
      "race.yaml.vance-meta",
    ]);
  });

  it("keeps concurrent creates of sibling keys and deletes in one directory from failing", async () => {
    for (let round = 0; round < 20; round++) {
      await putOk(store, "t/p/old.yaml", "old");
      const [deleted, created] = await Promise.all([
        store.delete("t/p/old.yaml"),
        store.put("t/p/new.yaml", "new"),
      ]);
      expect(deleted).toEqual({ ok: true });
      expect(created.ok).toBe(true);
      expect(expectObject(await store.get("t/p/new.yaml")).body).toBe("new");
      await store.delete("t/p/new.yaml");
    }
  });
});

describe("S3ObjectStore against s3rver", () => {
  const client = s3rverClient();
  const bucket = `counting-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  });
  afterAll(() => client.destroy());

  it("sends one HTTP request per get, create (If-None-Match: *) and list page, and two per delete and per put that may replace (its HEAD keeps createdAt)", async () => {
    const store = new S3ObjectStore({ client, bucket, prefix: "count" });
    await putOk(store, "a.yaml", "a: 1", "application/yaml");
    await putOk(store, "b.yaml", "b: 1", "application/yaml");
    store.resetRequestCount();

    await store.get("a.yaml");
    expect(store.requestCount).toBe(1);
    await store.get("missing.yaml");
    expect(store.requestCount).toBe(2);
    const page = await store.list("", { limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.cursor).toBeDefined();
    expect(store.requestCount).toBe(3);
    await store.list("", { limit: 1, cursor: page.cursor });
    expect(store.requestCount).toBe(4);
    await putOk(store, "c.yaml", "c: 1", "application/yaml");
    expect(store.requestCount).toBe(6);
    expect((await store.put("d.yaml", "d: 1", { ifNoneMatch: "*" })).ok).toBe(true);
    expect(store.requestCount).toBe(7);
    await store.delete("c.yaml");
    expect(store.requestCount).toBe(9);
  });

  it("holds a key and keys below it side by side, unlike the filesystem store (no path_conflict on S3)", async () => {
    const store = new S3ObjectStore({ client, bucket, prefix: "nesting" });
    await putOk(store, "a", "file a");
    await putOk(store, "a/b.md", "below a");
    expect(expectObject(await store.get("a")).body).toBe("file a");
    // Sorted here: s3rver walks its directories and lists "a/b.md" first (see the key order suite).
    expect((await store.list("")).items.map((item) => item.key).sort()).toEqual(["a", "a/b.md"]);
  });

  it("keeps stores with different prefixes in one bucket apart", async () => {
    const left = new S3ObjectStore({ client, bucket, prefix: "left/" });
    const right = new S3ObjectStore({ client, bucket, prefix: "right" });
    await putOk(left, "doc.md", "left", "text/markdown");
    expect(await right.get("doc.md")).toBeNull();
    expect((await right.list("")).items).toEqual([]);
    expect((await left.list("")).items.map((item) => item.key)).toEqual(["doc.md"]);
    expect(await right.delete("doc.md")).toEqual({ ok: false, reason: "not_found" });
    expect(expectObject(await left.get("doc.md")).body).toBe("left");
  });
});

describe("S3ObjectStore error mapping (stubbed client)", () => {
  function failure(name: string, status: number): S3ServiceException {
    return new S3ServiceException({
      name,
      $fault: "client",
      $metadata: { httpStatusCode: status },
      message: name,
    });
  }

  /** A client whose `send` answers each command by its class, recording every input. */
  function stubbedClient(answers: Partial<Record<string, () => unknown>>) {
    const sent: { command: string; input: Record<string, unknown> }[] = [];
    const client = {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        const name = command.constructor.name;
        sent.push({ command: name, input: command.input });
        const answer = answers[name];
        if (!answer) throw new Error(`unexpected ${name}`);
        return answer();
      },
    };
    return { client: client as unknown as S3Client, sent };
  }

  it("sends Delimiter and answers CommonPrefixes as folders without its own prefix (stubbed client)", async () => {
    const { client, sent } = stubbedClient({
      [ListObjectsV2Command.name]: () => ({
        Contents: [{ Key: "p/t/c.md", ETag: '"e"', Size: 1 }],
        CommonPrefixes: [{ Prefix: "p/t/a/" }, { Prefix: "p/t/d/" }],
        IsTruncated: false,
      }),
    });
    const store = new S3ObjectStore({ client, bucket: "b", prefix: "p" });
    expect(await store.list("t/", { delimiter: "/" })).toEqual({
      items: [{ key: "t/c.md", etag: '"e"', size: 1 }],
      folders: ["t/a/", "t/d/"],
      cursor: undefined,
    });
    expect(sent[0]?.input).toMatchObject({ Prefix: "p/t/", Delimiter: "/" });
  });

  it("maps 412 PreconditionFailed on put to precondition_failed; the HEAD before only reads createdAt (stubbed client)", async () => {
    const { client, sent } = stubbedClient({
      [HeadObjectCommand.name]: () => ({
        ETag: '"newer"',
        Metadata: { "created-at": "2025-01-01T00:00:00.000Z" },
      }),
      [PutObjectCommand.name]: () => {
        throw failure("PreconditionFailed", 412);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b", prefix: "p" });
    expect(
      await store.put("k.yaml", "v", { ifMatch: '"old"', contentType: "application/yaml", author: "a/b c" }),
    ).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    expect(sent.map((entry) => entry.command)).toEqual([HeadObjectCommand.name, PutObjectCommand.name]);
    expect(sent[1]?.input).toMatchObject({
      Bucket: "b",
      Key: "p/k.yaml",
      IfMatch: '"old"',
      ContentType: "application/yaml",
      Metadata: { "created-at": "2025-01-01T00:00:00.000Z", "updated-by": "a%2Fb%20c" },
    });
  });

  it("a create the SDK resent after its first attempt was applied answers created, not 412; another writer's object still answers 412 (stubbed client)", async () => {
    const resent = (attempts: number): S3ServiceException => {
      const error = failure("PreconditionFailed", 412);
      error.$metadata.attempts = attempts;
      return error;
    };
    let attempts = 2;
    let stored: "ours" | "theirs" = "ours";
    const { client, sent } = stubbedClient({
      [PutObjectCommand.name]: () => {
        throw resent(attempts);
      },
      [HeadObjectCommand.name]: () => {
        const put = sent.findLast((entry) => entry.command === PutObjectCommand.name);
        const ours = (put!.input as { Metadata: Record<string, string> }).Metadata["write-token"];
        return { ETag: '"applied"', Metadata: { "write-token": stored === "ours" ? ours : "another-write" } };
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    // The first attempt landed (the stored token is this put's); the resend met its own object.
    expect(await store.put("k.yaml", "v", { ifNoneMatch: "*", author: "alice" })).toMatchObject({
      ok: true,
      etag: '"applied"',
      audit: { createdBy: "alice" },
    });
    expect(sent.map((entry) => entry.command)).toEqual([PutObjectCommand.name, HeadObjectCommand.name]);
    // Another write's object: 412, as before.
    stored = "theirs";
    expect(await store.put("k.yaml", "v", { ifNoneMatch: "*" })).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    // A refusal at the first attempt needs no HEAD: nothing of this put can be stored.
    attempts = 1;
    sent.length = 0;
    expect(await store.put("k.yaml", "v", { ifNoneMatch: "*" })).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    expect(sent.map((entry) => entry.command)).toEqual([PutObjectCommand.name]);
  });

  it("maps 409 ConditionalRequestConflict on put to precondition_failed (stubbed client)", async () => {
    const { client, sent } = stubbedClient({
      [PutObjectCommand.name]: () => {
        throw failure("ConditionalRequestConflict", 409);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    expect(await store.put("k.yaml", "v", { ifNoneMatch: "*" })).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    expect(sent[0]?.input).toMatchObject({ Key: "k.yaml", IfNoneMatch: "*" });
  });

  it("rethrows other S3 errors on put (stubbed client)", async () => {
    const { client } = stubbedClient({
      [HeadObjectCommand.name]: () => ({ ETag: '"x"' }),
      [PutObjectCommand.name]: () => {
        throw failure("AccessDenied", 403);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    await expect(store.put("k.yaml", "v", { ifMatch: '"x"' })).rejects.toMatchObject({
      name: "AccessDenied",
    });
  });

  it("maps 5xx answers and refused connections to StoreUnavailableError (stubbed client)", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    const { client } = stubbedClient({
      [HeadObjectCommand.name]: () => {
        throw failure("NotFound", 404);
      },
      [PutObjectCommand.name]: () => {
        throw failure("InternalError", 500);
      },
      [GetObjectCommand.name]: () => {
        throw refused;
      },
      [ListObjectsV2Command.name]: () => {
        throw failure("SlowDown", 503);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    await expect(store.put("k.yaml", "v")).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.get("k.yaml")).rejects.toMatchObject({ code: "store_unavailable", status: 503 });
    await expect(store.list("")).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("maps 412 on the conditional DELETE to precondition_failed and sends IfMatch (stubbed client)", async () => {
    const { client, sent } = stubbedClient({
      [HeadObjectCommand.name]: () => ({ ETag: '"v1"' }),
      [DeleteObjectCommand.name]: () => {
        throw failure("PreconditionFailed", 412);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    expect(await store.delete("k.yaml", { ifMatch: '"v1"' })).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    expect(sent.map((entry) => entry.command)).toEqual([HeadObjectCommand.name, DeleteObjectCommand.name]);
    expect(sent[1]?.input).toMatchObject({ Key: "k.yaml", IfMatch: '"v1"' });
  });

  it("answers precondition_failed without a DELETE when HEAD shows another etag (stubbed client)", async () => {
    const { client, sent } = stubbedClient({ [HeadObjectCommand.name]: () => ({ ETag: '"v2"' }) });
    const store = new S3ObjectStore({ client, bucket: "b" });
    expect(await store.delete("k.yaml", { ifMatch: '"v1"' })).toEqual({
      ok: false,
      reason: "precondition_failed",
    });
    expect(sent.map((entry) => entry.command)).toEqual([HeadObjectCommand.name]);
  });

  it("answers not_found when HEAD says 404 (stubbed client)", async () => {
    const { client, sent } = stubbedClient({
      [HeadObjectCommand.name]: () => {
        throw failure("NotFound", 404);
      },
    });
    const store = new S3ObjectStore({ client, bucket: "b" });
    expect(await store.delete("k.yaml")).toEqual({ ok: false, reason: "not_found" });
    expect(sent).toHaveLength(1);
  });
});

describe("CountingObjectStore", () => {
  it("counts calls per method and sees two GETs issued together", async () => {
    const store = new CountingObjectStore(MemoryObjectStore.fromRecord({ "a.yaml": "a", "b.yaml": "b" }));
    await Promise.all([store.get("a.yaml"), store.get("b.yaml")]);
    expect(store.maxInFlight).toBe(2);
    expect(store.counts).toEqual({ get: 2, put: 0, delete: 0, list: 0 });

    store.reset();
    await store.get("a.yaml");
    await store.get("b.yaml");
    await store.put("c.yaml", "c");
    await store.list("");
    await store.delete("c.yaml");
    expect(store.maxInFlight).toBe(1);
    expect(store.counts).toEqual({ get: 2, put: 1, delete: 1, list: 1 });
    expect(store.inFlight).toBe(0);
  });

  it("passes results and failures of the inner store through", async () => {
    const store = new CountingObjectStore(new FsObjectStore(join(tmpdir(), "vance-never-written")));
    expect(await store.get("absent.yaml")).toBeNull();
    await expect(store.get("../x")).rejects.toBeInstanceOf(InvalidObjectKeyError);
    expect(store.counts.get).toBe(2);
    expect(store.inFlight).toBe(0);
  });
});
