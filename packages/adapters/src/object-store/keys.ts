/**
 * Key and paging rules shared by the object store adapters (fs, S3 and the memory double):
 * content types by extension, page size limits, and the stateless "keys after this one" pages of
 * the stores that list by themselves. Key order is `compareStrings`, the order S3 lists in.
 */
import { compareStrings, contentTypeForPath, type ListOptions } from "@vance/core";

/** The largest page one `list` call returns, as S3's ListObjectsV2 caps `MaxKeys`. */
export const MAX_LIST_PAGE_SIZE = 1000;

/** Content type for a key, inferred from its extension (the rule is core's `contentTypeForPath`). */
export const contentTypeForKey = contentTypeForPath;

const CURSOR_PREFIX = "after:";

/** Cursor for the stateless "keys after this one" pagination of the fs and memory stores. */
function encodeCursor(lastKey: string): string {
  return `${CURSOR_PREFIX}${encodeURIComponent(lastKey)}`;
}

/** Inverse of `encodeCursor`; throws on a cursor this module did not make. */
function decodeCursor(cursor: string): string {
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

/**
 * One page of a listing over `keys` (in any order): the keys after the cursor, in key order, at
 * most the requested `limit` (capped at `pageSize`), and the cursor of the next page if any.
 */
export function pageOfKeys(
  keys: Iterable<string>,
  options: ListOptions | undefined,
  pageSize: number,
): { keys: string[]; cursor: string | undefined } {
  const limit = resolvePageLimit(options?.limit, pageSize);
  const after = options?.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const remaining = [...keys]
    .filter((key) => after === undefined || compareStrings(key, after) > 0)
    .sort(compareStrings);
  const page = remaining.slice(0, limit);
  const last = page.at(-1);
  return {
    keys: page,
    cursor: remaining.length > limit && last !== undefined ? encodeCursor(last) : undefined,
  };
}

/**
 * One page of a delimited listing over every key under `prefix` (in any order): keys below the
 * next `/` after the prefix become their folder (`{prefix}{name}/`), each once, paged with the
 * objects in key order. For the stores that hold every key (the memory double).
 */
export function delimitedPage(
  keys: Iterable<string>,
  prefix: string,
  options: ListOptions | undefined,
  pageSize: number,
): { keys: string[]; folders: string[]; cursor: string | undefined } {
  const entries = new Set<string>();
  for (const key of keys) {
    const slash = key.indexOf("/", prefix.length);
    entries.add(slash < 0 ? key : key.slice(0, slash + 1));
  }
  return splitFolders(pageOfKeys(entries, options, pageSize));
}

/** A page of keys and folder names (ending in `/`) as its objects and its folders. */
export function splitFolders(page: { keys: string[]; cursor: string | undefined }): {
  keys: string[];
  folders: string[];
  cursor: string | undefined;
} {
  return {
    keys: page.keys.filter((key) => !key.endsWith("/")),
    folders: page.keys.filter((key) => key.endsWith("/")),
    cursor: page.cursor,
  };
}
