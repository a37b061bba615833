import { randomBytes } from "node:crypto";
import type { BigIntStats, Dirent } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  unlink,
} from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import {
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type ObjectAudit,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  STORE_META_SUFFIX,
  STORE_TEMP_SUFFIX,
} from "@vance/core";
import { contentTypeForKey, MAX_LIST_PAGE_SIZE, pageOfKeys, resolvePageLimit, splitFolders } from "./keys";

/**
 * Suffix of in-flight temp files; `list` skips them, no key segment may end with it (the
 * document path rule refuses it too), and the store removes leftovers when it starts.
 */
const TEMP_SUFFIX = STORE_TEMP_SUFFIX;
/** How often `put` retries when a concurrent `delete` pruned the directory it just created. */
const MKDIR_ATTEMPTS = 5;

export interface FsObjectStoreOptions {
  /** Default and maximum page size of `list`; 1000 (the cap) unless given. */
  readonly pageSize?: number;
  /** The clock of the audit times (`createdAt`, `updatedAt`); `Date.now` unless given (tests). */
  readonly now?: () => number;
}

/** Thrown for a key (or list prefix) that cannot name a file safely under the root directory. */
export class InvalidObjectKeyError extends Error {
  readonly code = "invalid_object_key";
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`);
    this.name = "InvalidObjectKeyError";
  }
}

/**
 * `ObjectStore` over a directory: the embedded default. Key `a/b/c.yaml` is the file
 * `rootDir/a/b/c.yaml`. Writes go to a temp file in the same directory and are renamed into
 * place, so a reader sees the old bytes or the new bytes, never a mix.
 *
 * The ETag is derived from `stat` (inode, mtime in ns, size), so `list` never reads content.
 * Every write sets the file's mtime to a value strictly above the previous write's of this
 * process: ext4 reuses a just-freed inode at once, so inode + a coarse clock alone could repeat
 * an old ETag (A → B → A') and let a stale `ifMatch` through.
 *
 * Durability: the temp file is fsynced before the rename and its directory after it, so a
 * write that answered survives a crash. Temp files a crash left behind (older than this process)
 * are removed when the store is constructed (every call waits for that sweep), and listings
 * never show temp files.
 *
 * Unlike S3, a directory cannot hold a file and a folder of one name: a put of `a/b.md` while
 * `a` is stored, or of `a` while `a/…` is, answers `{ ok: false, reason: "path_conflict" }`.
 *
 * Audit fields live in a sidecar file `{name}.vance-meta` (JSON: the content's ETag, `createdAt`,
 * `updatedAt`, `updatedBy`), written before the content is renamed into place and read with it; a
 * sidecar whose ETag is not the content's (the file was replaced by hand, or a crash fell between
 * the two renames) is disregarded, and the file's mtime is its `updatedAt`. Listings never show
 * sidecars, and no key segment may end with the suffix.
 *
 * Content type is not stored: it is inferred from the key's extension (`contentTypeForKey`),
 * and `PutOptions.contentType` is ignored. Conditional writes are serialised per key by an
 * in-process mutex; two processes writing the same directory are not coordinated (one's start
 * may also sweep the other's in-flight temp files).
 */
export class FsObjectStore implements ObjectStore {
  readonly #root: string;
  readonly #pageSize: number;
  readonly #locks = new KeyedMutex();
  readonly #swept: Promise<number>;
  readonly #now: () => number;

  constructor(rootDir: string, options: FsObjectStoreOptions = {}) {
    this.#root = resolve(rootDir);
    this.#pageSize = resolvePageLimit(options.pageSize, MAX_LIST_PAGE_SIZE);
    this.#now = options.now ?? (() => Date.now());
    this.#swept = sweepTempFiles(this.#root, this.#root);
  }

  /** How many temp files of interrupted writes the start-up sweep removed, once it is done. */
  get swept(): Promise<number> {
    return this.#swept;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const path = this.#pathOf(key);
    await this.#swept;
    let handle: FileHandle;
    try {
      handle = await open(path, "r");
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      // The fd pins the inode, and files are only ever replaced by rename, so these stats
      // describe exactly the bytes read below.
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile()) return null;
      const etag = etagOf(stats);
      if (options?.ifNoneMatch !== undefined && options.ifNoneMatch === etag) return { notModified: true };
      const body = await handle.readFile("utf8");
      return {
        key,
        body,
        etag,
        contentType: contentTypeForKey(key),
        audit: await auditOf(path, etag, stats),
      };
    } finally {
      await handle.close();
    }
  }

  async put(key: string, body: string, options?: PutOptions): Promise<PutResult> {
    const path = this.#pathOf(key);
    await this.#swept;
    return this.#locks.run(key, async () => {
      if (await isDirectory(path)) return { ok: false, reason: "path_conflict" };
      const current = await statFile(path);
      if (options?.ifNoneMatch === "*" && current) return { ok: false, reason: "precondition_failed" };
      if (options?.ifMatch !== undefined && (!current || etagOf(current) !== options.ifMatch)) {
        return { ok: false, reason: "precondition_failed" };
      }
      const at = new Date(this.#now()).toISOString();
      // A replacement keeps the creation its sidecar recorded (unknown for a file made by hand).
      const created = current
        ? await readSidecar(path)
        : { createdAt: at, createdBy: options?.author ?? null };
      const audit: ObjectAudit = {
        createdAt: created?.createdAt ?? null,
        createdBy: created?.createdBy ?? null,
        updatedAt: at,
        updatedBy: options?.author ?? null,
      };
      const etag = await this.#writeAtomically(path, body, audit);
      return etag === null ? { ok: false, reason: "path_conflict" } : { ok: true, etag, audit };
    });
  }

  async delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    const path = this.#pathOf(key);
    await this.#swept;
    return this.#locks.run(key, async () => {
      const current = await statFile(path);
      if (!current) return { ok: false, reason: "not_found" };
      if (options?.ifMatch !== undefined && etagOf(current) !== options.ifMatch) {
        return { ok: false, reason: "precondition_failed" };
      }
      try {
        await unlink(path);
      } catch (error) {
        if (isMissing(error)) return { ok: false, reason: "not_found" };
        throw error;
      }
      await unlink(sidecarPath(path)).catch((error: unknown) => {
        if (!isMissing(error)) throw error;
      });
      await syncDirectory(dirname(path));
      await this.#pruneEmptyDirectories(dirname(path));
      return { ok: true };
    });
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const { directorySegments, namePrefix } = this.#splitPrefix(prefix);
    await this.#swept;
    const keys: string[] = [];
    const delimited = options?.delimiter === "/";
    // Delimited, one directory is read: its sub-directories are the folders (`a/b/`).
    await this.#collectKeys(directorySegments, namePrefix, keys, delimited);
    const { keys: page, folders, cursor } = splitFolders(pageOfKeys(keys, options, this.#pageSize));
    const stats = await Promise.all(page.map((key) => statFile(join(this.#root, key))));
    const items: ObjectMeta[] = [];
    page.forEach((key, index) => {
      const entry = stats[index];
      // Deleted between readdir and stat: leave it out rather than report a ghost.
      if (entry) items.push({ key, etag: etagOf(entry), size: Number(entry.size) });
    });
    return delimited ? { items, folders, cursor } : { items, cursor };
  }

  /**
   * Writes through a temp file and a rename, the sidecar with `audit` beside it; the ETag, or
   * `null` when a file or folder is in the way.
   */
  async #writeAtomically(path: string, body: string, audit: ObjectAudit): Promise<string | null> {
    const tempPath = `${path}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`;
    const sidecarTemp = `${sidecarPath(path)}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`;
    const handle = await this.#createTempFile(tempPath);
    if (handle === null) return null;
    try {
      await handle.writeFile(body, "utf8");
      const mtimeNs = nextMtimeNs();
      const seconds = Number(mtimeNs) / 1e9;
      await handle.utimes(seconds, seconds);
      // The bytes and the mtime (part of the ETag) reach the disk before the name points at them.
      await handle.sync();
      // rename keeps inode, mtime and size, so the temp file's stats are the final ETag.
      const stats = await handle.stat({ bigint: true });
      await handle.close();
      const etag = etagOf(stats);
      await writeSynced(sidecarTemp, JSON.stringify({ etag, ...audit }));
      try {
        await rename(tempPath, path);
      } catch (error) {
        // A folder took the name since the check (or a racing writer made one): not ours to replace.
        if (!isErrno(error, "EISDIR") && !isErrno(error, "ENOTDIR")) throw error;
        await unlink(tempPath).catch(() => {});
        await unlink(sidecarTemp).catch(() => {});
        return null;
      }
      await rename(sidecarTemp, sidecarPath(path));
      // The renames themselves are durable only once the directory entries are.
      await syncDirectory(dirname(path));
      return etag;
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(tempPath).catch(() => {});
      await unlink(sidecarTemp).catch(() => {});
      throw error;
    }
  }

  /** Opens a fresh temp file, creating its directories; `null` when a file sits on its path. */
  async #createTempFile(tempPath: string): Promise<FileHandle | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dirname(tempPath), { recursive: true });
        return await open(tempPath, "wx");
      } catch (error) {
        // mkdir answers EEXIST when the parent itself is a file, ENOTDIR when an ancestor is.
        if (
          isErrno(error, "ENOTDIR") ||
          (isErrno(error, "EEXIST") && !(await isDirectory(dirname(tempPath))))
        )
          return null;
        // A concurrent delete of a sibling prunes empty directories, possibly one that
        // mkdir just created or was about to descend into: create the path again.
        if (!isErrno(error, "ENOENT") || attempt >= MKDIR_ATTEMPTS) throw error;
      }
    }
  }

  async #pruneEmptyDirectories(directory: string): Promise<void> {
    let current = directory;
    while (current !== this.#root && current.startsWith(this.#root)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (or already gone): stop climbing
      }
      current = dirname(current);
    }
  }

  async #collectKeys(
    directorySegments: readonly string[],
    namePrefix: string,
    into: string[],
    foldersOnly = false,
  ): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(join(this.#root, ...directorySegments), { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    await Promise.all(
      entries.map(async (entry) => {
        if (!entry.name.startsWith(namePrefix) || entry.name.endsWith(TEMP_SUFFIX)) return;
        if (entry.name.endsWith(STORE_META_SUFFIX)) return;
        if (entry.isDirectory() && foldersOnly) into.push(`${[...directorySegments, entry.name].join("/")}/`);
        else if (entry.isDirectory()) await this.#collectKeys([...directorySegments, entry.name], "", into);
        else if (entry.isFile()) into.push([...directorySegments, entry.name].join("/"));
      }),
    );
  }

  #pathOf(key: string): string {
    return join(this.#root, ...parseSegments(key, key, false));
  }

  #splitPrefix(prefix: string): { directorySegments: string[]; namePrefix: string } {
    if (prefix === "") return { directorySegments: [], namePrefix: "" };
    const segments = parseSegments(prefix, prefix, true);
    const namePrefix = segments.pop() ?? "";
    return { directorySegments: segments, namePrefix };
  }
}

/**
 * Splits a key into path segments, rejecting anything that could leave the root or collide
 * with temp files. A list prefix may end in "/" or a partial name, so its last segment may be empty.
 */
function parseSegments(value: string, key: string, isPrefix: boolean): string[] {
  if (value === "") throw new InvalidObjectKeyError(key, "empty");
  if (value.startsWith("/")) throw new InvalidObjectKeyError(key, "leading '/'");
  if (value.includes("\\")) throw new InvalidObjectKeyError(key, "backslash");
  if (value.includes("\0")) throw new InvalidObjectKeyError(key, "NUL character");
  const segments = value.split("/");
  segments.forEach((segment, index) => {
    const isLast = index === segments.length - 1;
    if (segment === "" && !(isPrefix && isLast)) throw new InvalidObjectKeyError(key, "empty path segment");
    if (segment === "." || segment === "..") throw new InvalidObjectKeyError(key, `'${segment}' segment`);
    if (segment.endsWith(TEMP_SUFFIX))
      throw new InvalidObjectKeyError(key, `segment ends with ${TEMP_SUFFIX}`);
    if (segment.endsWith(STORE_META_SUFFIX))
      throw new InvalidObjectKeyError(key, `segment ends with ${STORE_META_SUFFIX}`);
  });
  return segments;
}

let lastMtimeNs = 0n;

/**
 * The mtime for the next write: strictly increasing across all stores of this process, and at
 * least 1 µs apart so the float seconds that `utimes` takes still map to distinct nanoseconds.
 */
function nextMtimeNs(): bigint {
  const now = BigInt(Date.now()) * 1_000_000n;
  lastMtimeNs = now > lastMtimeNs + 1000n ? now : lastMtimeNs + 1000n;
  return lastMtimeNs;
}

/** Quoted like S3's ETags; derived from stat so it needs no read of the content. */
function etagOf(stats: BigIntStats): string {
  return `"${stats.ino.toString(36)}-${stats.mtimeNs.toString(36)}-${stats.size.toString(36)}"`;
}

/**
 * When this process started: a temp file older than that belongs to a write no one will finish.
 * Younger ones may be in flight in another store over the same directory (the API and the
 * catalog sync each open one), so the sweep leaves them alone.
 */
const PROCESS_STARTED_MS = performance.timeOrigin;

/**
 * Removes the temp files interrupted writes left under `directory` (and the folders that held
 * only them); best effort, so an unreadable corner never keeps the store from starting.
 */
async function sweepTempFiles(root: string, directory: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch {
    return 0;
  }
  let removed = 0;
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) removed += await sweepTempFiles(root, path);
    else if (entry.isFile() && entry.name.endsWith(TEMP_SUFFIX) && (await isOrphan(path))) {
      removed += await unlink(path).then(
        () => 1,
        () => 0,
      );
    }
  }
  if (removed > 0 && directory !== root) await rmdir(directory).catch(() => {}); // only if now empty
  return removed;
}

/** The sidecar file holding a document's audit fields. */
function sidecarPath(path: string): string {
  return `${path}${STORE_META_SUFFIX}`;
}

/** The audit fields a sidecar holds, or null when there is none (or it does not parse). */
async function readSidecar(path: string): Promise<(ObjectAudit & { etag: string }) | null> {
  let text: string;
  try {
    text = await readFile(sidecarPath(path), "utf8");
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<Record<keyof ObjectAudit | "etag", unknown>>;
    const stringOrNull = (value: unknown) => (typeof value === "string" ? value : null);
    if (typeof parsed.etag !== "string") return null;
    return {
      etag: parsed.etag,
      createdAt: stringOrNull(parsed.createdAt),
      createdBy: stringOrNull(parsed.createdBy),
      updatedAt: stringOrNull(parsed.updatedAt),
      updatedBy: stringOrNull(parsed.updatedBy),
    };
  } catch {
    return null;
  }
}

/** The document's audit fields: its sidecar's when it describes these bytes, else only the mtime. */
async function auditOf(path: string, etag: string, stats: BigIntStats): Promise<ObjectAudit> {
  const sidecar = await readSidecar(path);
  if (sidecar?.etag === etag) {
    const { createdAt, createdBy, updatedAt, updatedBy } = sidecar;
    return { createdAt, createdBy, updatedAt, updatedBy };
  }
  return {
    createdAt: null,
    createdBy: null,
    updatedAt: new Date(Number(stats.mtimeNs / 1_000_000n)).toISOString(),
    updatedBy: null,
  };
}

/** Writes a small file and fsyncs it (a temp file, renamed into place by the caller). */
async function writeSynced(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx");
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a directory, so a rename or unlink in it is on disk; a no-op where the OS refuses it. */
async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(directory, "r");
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!isErrno(error, "EINVAL") && !isErrno(error, "EPERM") && !isErrno(error, "EISDIR")) throw error;
  } finally {
    await handle.close();
  }
}

async function isOrphan(tempPath: string): Promise<boolean> {
  try {
    return (await lstat(tempPath)).mtimeMs < PROCESS_STARTED_MS;
  } catch {
    return false;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Stats of a regular file, or `null` when nothing (or a directory) is there. */
async function statFile(path: string): Promise<BigIntStats | null> {
  try {
    const stats = await lstat(path, { bigint: true });
    return stats.isFile() ? stats : null;
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}

/** ENOENT, or ENOTDIR when a path segment is a file (key `a/b` exists, `a/b/c` asked). */
function isMissing(error: unknown): boolean {
  return isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR");
}

/** Runs tasks one at a time per key, in call order. */
class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolveDone) => {
      release = resolveDone;
    });
    const tail = previous.then(() => done);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
