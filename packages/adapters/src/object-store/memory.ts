import type {
  DeleteOptions,
  DeleteResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectAudit,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
} from "@vance/core";
import { contentTypeForKey, delimitedPage, MAX_LIST_PAGE_SIZE, pageOfKeys, resolvePageLimit } from "./keys";

interface MemoryEntry {
  readonly body: string;
  readonly etag: string;
  readonly contentType: string;
  readonly size: number;
  readonly audit: ObjectAudit;
}

export interface MemoryObjectStoreOptions {
  /** Objects to start with, key → body (content types inferred from the extension). */
  readonly objects?: Readonly<Record<string, string>>;
  /** Default and maximum page size of `list`; 1000 (the cap) unless given. */
  readonly pageSize?: number;
  /** Epoch milliseconds, for the objects' audit times. */
  readonly now?: () => number;
}

const utf8 = new TextEncoder();
let storeSequence = 0;

/**
 * In-memory `ObjectStore` with the exact semantics of the port, conditional writes included:
 * a test double, exported only from `@vance/adapters/testing`.
 */
export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, MemoryEntry>();
  readonly #pageSize: number;
  /** Distinguishes stores so an ETag from one never matches in another. */
  readonly #storeId = (++storeSequence).toString(36);
  #writeSequence = 0;
  readonly #now: () => number;

  constructor(options: MemoryObjectStoreOptions = {}) {
    this.#pageSize = resolvePageLimit(options.pageSize, MAX_LIST_PAGE_SIZE);
    this.#now = options.now ?? (() => Date.now());
    for (const [key, body] of Object.entries(options.objects ?? {})) this.#write(key, body, {});
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
    return { key, body: entry.body, etag: entry.etag, contentType: entry.contentType, audit: entry.audit };
  }

  async put(key: string, body: string, options?: PutOptions): Promise<PutResult> {
    const current = this.#objects.get(key);
    if (options?.ifNoneMatch === "*" && current) return { ok: false, reason: "precondition_failed" };
    if (options?.ifMatch !== undefined && current?.etag !== options.ifMatch) {
      return { ok: false, reason: "precondition_failed" };
    }
    const written = this.#write(key, body, options ?? {});
    return { ok: true, etag: written.etag, audit: written.audit };
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
    const matching = [...this.#objects.keys()].filter((key) => key.startsWith(prefix));
    const meta = (key: string): ObjectMeta => {
      const entry = this.#objects.get(key)!;
      return { key, etag: entry.etag, size: entry.size };
    };
    if (options?.delimiter === "/") {
      const { keys, folders, cursor } = delimitedPage(matching, prefix, options, this.#pageSize);
      return { items: keys.map(meta), folders, cursor };
    }
    const { keys, cursor } = pageOfKeys(matching, options, this.#pageSize);
    return { items: keys.map(meta), cursor };
  }

  #write(key: string, body: string, options: PutOptions): MemoryEntry {
    const etag = `"m${this.#storeId}-${(++this.#writeSequence).toString(36)}"`;
    const at = new Date(this.#now()).toISOString();
    const entry = {
      body,
      etag,
      contentType: options.contentType ?? contentTypeForKey(key),
      size: utf8.encode(body).byteLength,
      audit: {
        createdAt: this.#objects.get(key)?.audit.createdAt ?? at,
        createdBy: this.#objects.has(key)
          ? this.#objects.get(key)!.audit.createdBy
          : (options.author ?? null),
        updatedAt: at,
        updatedBy: options.author ?? null,
      },
    };
    this.#objects.set(key, entry);
    return entry;
  }
}
