import type {
  DeleteOptions,
  DeleteResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
} from "@vance/core";

/** The largest page one `list` call returns, as S3's ListObjectsV2 caps `MaxKeys`. */
export const MAX_LIST_PAGE_SIZE = 1000;

/**
 * Content type for a key, inferred from its extension. The memory and fs stores use it when a
 * write names no content type, so both agree with what the bundled layer ships.
 */
export function contentTypeForKey(key: string): string {
  const dot = key.lastIndexOf(".");
  const extension = dot > key.lastIndexOf("/") ? key.slice(dot + 1).toLowerCase() : "";
  switch (extension) {
    case "yaml":
    case "yml":
      return "application/yaml";
    case "json":
      return "application/json";
    case "js":
      return "application/javascript";
    case "md":
      return "text/markdown";
    default:
      return "text/plain";
  }
}

/**
 * Orders keys as S3 does: by UTF-8 bytes, which is code point order. Plain `<` compares UTF-16
 * code units and would put astral characters (surrogates) before U+E000–U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xSurrogate = x >= 0xd800 && x <= 0xdfff;
      const ySurrogate = y >= 0xd800 && y <= 0xdfff;
      if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

const CURSOR_PREFIX = "after:";

/** Cursor for the stateless "keys after this one" pagination of the memory and fs stores. */
export function encodeCursor(lastKey: string): string {
  return `${CURSOR_PREFIX}${encodeURIComponent(lastKey)}`;
}

/** Inverse of `encodeCursor`; throws on a cursor this module did not make. */
export function decodeCursor(cursor: string): string {
  if (!cursor.startsWith(CURSOR_PREFIX)) throw new Error(`invalid list cursor: ${cursor}`);
  return decodeURIComponent(cursor.slice(CURSOR_PREFIX.length));
}

/** The page size to use: the requested `limit`, capped at `max`; `max` when none is given. */
export function resolvePageLimit(limit: number | undefined, max: number): number {
  if (limit === undefined) return max;
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`list limit must be a positive integer: ${limit}`);
  return Math.min(limit, max);
}

interface MemoryEntry {
  readonly body: string;
  readonly etag: string;
  readonly contentType: string;
  readonly size: number;
}

export interface MemoryObjectStoreOptions {
  /** Objects to start with, key → body (content types inferred from the extension). */
  readonly objects?: Readonly<Record<string, string>>;
  /** Default and maximum page size of `list`; 1000 (the cap) unless given. */
  readonly pageSize?: number;
}

const utf8 = new TextEncoder();
let storeSequence = 0;

/**
 * In-memory `ObjectStore` with the exact semantics of the port, conditional writes included.
 * Serves tests and the bundled read-only layer (see `fromRecord`).
 */
export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, MemoryEntry>();
  readonly #pageSize: number;
  /** Distinguishes stores so an ETag from one never matches in another. */
  readonly #storeId = (++storeSequence).toString(36);
  #writeSequence = 0;

  constructor(options: MemoryObjectStoreOptions = {}) {
    this.#pageSize = resolvePageLimit(options.pageSize, MAX_LIST_PAGE_SIZE);
    for (const [key, body] of Object.entries(options.objects ?? {})) this.#write(key, body, undefined);
  }

  /** A store preloaded with `objects` (key → body), e.g. the bundled defaults. */
  static fromRecord(objects: Readonly<Record<string, string>>): MemoryObjectStore {
    return new MemoryObjectStore({ objects });
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const entry = this.#objects.get(key);
    if (!entry) return null;
    if (options?.ifNoneMatch !== undefined && options.ifNoneMatch === entry.etag)
      return { notModified: true };
    return { key, body: entry.body, etag: entry.etag, contentType: entry.contentType };
  }

  async put(key: string, body: string, options?: PutOptions): Promise<PutResult> {
    const current = this.#objects.get(key);
    if (options?.ifNoneMatch === "*" && current) return { ok: false, reason: "precondition_failed" };
    if (options?.ifMatch !== undefined && current?.etag !== options.ifMatch) {
      return { ok: false, reason: "precondition_failed" };
    }
    return { ok: true, etag: this.#write(key, body, options?.contentType) };
  }

  async delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    const current = this.#objects.get(key);
    if (!current) return { ok: false, reason: "not_found" };
    if (options?.ifMatch !== undefined && current.etag !== options.ifMatch) {
      return { ok: false, reason: "precondition_failed" };
    }
    this.#objects.delete(key);
    return { ok: true };
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const limit = resolvePageLimit(options?.limit, this.#pageSize);
    const after = options?.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const keys = [...this.#objects.keys()]
      .filter((key) => key.startsWith(prefix) && (after === undefined || compareKeys(key, after) > 0))
      .sort(compareKeys);
    const page = keys.slice(0, limit);
    const items = page.map((key): ObjectMeta => {
      const entry = this.#objects.get(key)!;
      return { key, etag: entry.etag, size: entry.size };
    });
    const last = page.at(-1);
    return { items, cursor: keys.length > limit && last !== undefined ? encodeCursor(last) : undefined };
  }

  #write(key: string, body: string, contentType: string | undefined): string {
    const etag = `"m${this.#storeId}-${(++this.#writeSequence).toString(36)}"`;
    this.#objects.set(key, {
      body,
      etag,
      contentType: contentType ?? contentTypeForKey(key),
      size: utf8.encode(body).byteLength,
    });
    return etag;
  }
}
