/**
 * The object store port: a flat key → text store with ETags and conditional writes.
 * S3 implements it in the cloud, a directory on disk in the embedded default.
 * One `list` call is one page, so port calls map 1:1 to storage requests.
 */

/**
 * Who wrote an object and when (ISO-8601), as the store keeps it beside the bytes — S3 in the
 * object's user metadata, the filesystem store in a sidecar file — so a read brings it along at
 * no extra request. Null where unknown: an object written behind the service's back has no
 * author and no creation time (its `updatedAt` falls back to the store's modification time).
 */
export interface ObjectAudit {
  readonly createdAt: string | null;
  /** The creating token's subject, kept across replacements; null when it had none, or unknown. */
  readonly createdBy: string | null;
  readonly updatedAt: string | null;
  /** The writing token's subject (`sub`); null when it had none. */
  readonly updatedBy: string | null;
}

/** An object as read from the store. `etag` is opaque and changes whenever the content changes (S3: an MD5 of it). */
export interface StoredObject {
  readonly key: string;
  readonly body: string;
  readonly etag: string;
  readonly contentType: string | undefined;
  /** Absent where the store keeps none (test doubles written without one). */
  readonly audit?: ObjectAudit;
}

/** One entry of a listing page. ETags come with the listing (as S3's ListObjectsV2 gives them). */
export interface ObjectMeta {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
}

export interface ListPage {
  readonly items: readonly ObjectMeta[];
  /**
   * With `delimiter`: the folders directly under the prefix on this page (`{prefix}{name}/`, S3's
   * CommonPrefixes), each once; the objects inside them are not in `items`.
   */
  readonly folders?: readonly string[];
  /** Present when another page follows; pass it back as `cursor`. */
  readonly cursor: string | undefined;
}

export interface GetOptions {
  /** Answer `{ notModified: true }` instead of the body when the object still has this ETag. */
  readonly ifNoneMatch?: string;
}

export interface PutOptions {
  readonly contentType?: string;
  /**
   * Who writes (a token's subject), kept as the object's `updatedBy`. A replacement keeps the
   * stored `createdAt` and `createdBy`; a creation sets them (`createdBy` to the author).
   */
  readonly author?: string;
  /** Write only when the stored object has exactly this ETag. */
  readonly ifMatch?: string;
  /** `"*"`: write only when no object exists under the key. */
  readonly ifNoneMatch?: "*";
}

export interface DeleteOptions {
  readonly ifMatch?: string;
}

export interface ListOptions {
  readonly cursor?: string;
  /**
   * `/`: list one level only, keys below the next `/` after the prefix grouped into `folders`.
   * A page holds at most `limit` entries, objects and folders together, in key order.
   */
  readonly delimiter?: "/";
  /** Page size; adapters cap it (S3: 1000). */
  readonly limit?: number;
}

/**
 * `path_conflict`: the store cannot hold this key beside a stored one — on a filesystem a file
 * cannot also be a folder (`a` stored, `a/b.md` written, or the other way round). S3 and the
 * memory store hold both and never answer it.
 */
export type PutResult =
  | { readonly ok: true; readonly etag: string; readonly audit?: ObjectAudit }
  | { readonly ok: false; readonly reason: "precondition_failed" | "path_conflict" };

export type DeleteResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "not_found" | "precondition_failed" };

export type GetResult = StoredObject | { readonly notModified: true } | null;

export interface ObjectStore {
  /** `null` when absent. */
  get(key: string, options?: GetOptions): Promise<GetResult>;
  put(key: string, body: string, options?: PutOptions): Promise<PutResult>;
  delete(key: string, options?: DeleteOptions): Promise<DeleteResult>;
  /** One page of keys starting with `prefix`, in ascending key order. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
}

/** Narrowing helper for `GetResult`. */
export function isNotModified(result: GetResult): result is { readonly notModified: true } {
  return result !== null && "notModified" in result;
}

/** Every object under `prefix`, all LIST pages followed, in key order. */
export async function listAllObjects(store: ObjectStore, prefix: string): Promise<ObjectMeta[]> {
  const items: ObjectMeta[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor === undefined ? {} : { cursor });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return items;
}

/** The names of the folders directly under `prefix` (`{prefix}{name}/`), all LIST pages followed, in key order. */
export async function listFolderNames(
  store: ObjectStore,
  prefix: string,
  max: number,
): Promise<{ names: string[]; truncated: boolean }> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, { delimiter: "/", ...(cursor === undefined ? {} : { cursor }) });
    for (const folder of page.folders ?? []) {
      if (names.length === max) return { names, truncated: true };
      names.push(folder.slice(prefix.length, -1));
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return { names, truncated: false };
}
