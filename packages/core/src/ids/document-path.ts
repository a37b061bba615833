import { Errors } from "../errors";
import { ruleSchema } from "./rule-schema";

const PATH_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/**
 * Suffix of a store's in-flight temp files (the filesystem store writes `{name}.{random}.vance-tmp`
 * and renames it into place): no document path segment may end with it, so every store agrees.
 */
export const STORE_TEMP_SUFFIX = ".vance-tmp";
/**
 * Suffix of the filesystem store's sidecar files (`{name}.vance-meta`: who wrote the document and
 * when): no document path segment may end with it either.
 */
export const STORE_META_SUFFIX = ".vance-meta";
/** Top-level folders whose documents are validated on write; matched case-sensitively. */
const VALIDATED_FOLDERS = ["server-tools", "mcp-servers"] as const;
/** Document paths have at most this many characters. */
export const MAX_PATH_LENGTH = 512;

/**
 * Why `path` is not a relative document path whose segments are plain names (no `..`, no empty
 * segments, no leading `/`, no backslashes), or `null`.
 */
export function documentPathProblem(path: string): string | null {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH)
    return `a document path has 1 to ${MAX_PATH_LENGTH} characters`;
  const segments = path.split("/");
  for (const segment of segments) {
    if (!PATH_SEGMENT.test(segment) || segment.includes(".."))
      return "a relative document path such as documents/guide.md: plain names joined by '/', no '..', no empty segments";
    if (segment.endsWith(STORE_TEMP_SUFFIX))
      return `names ending in '${STORE_TEMP_SUFFIX}' are reserved for the store's unfinished writes`;
    if (segment.endsWith(STORE_META_SUFFIX))
      return `names ending in '${STORE_META_SUFFIX}' are reserved for the store's audit records`;
  }
  // On a case-insensitive filesystem `SERVER-TOOLS/x.yaml` is the file `server-tools/x.yaml`:
  // another casing of a validated folder would store a tool document unvalidated.
  const folder = segments[0]!;
  const special = VALIDATED_FOLDERS.find((name) => name === folder.toLowerCase());
  if (special !== undefined && special !== folder)
    return `'${folder}/' differs from the reserved folder '${special}/' only in case; use '${special}/'`;
  return null;
}

/** A document path inside the cascade. */
export const DocumentPathSchema = ruleSchema("document path", documentPathProblem);

/** Throws `invalid_id` unless `path` is a valid document path. */
export function assertDocumentPath(path: string): void {
  // The schema's rule, tested directly: `v.is` costs a few µs, and every cascade read asserts it.
  const problem = typeof path === "string" ? documentPathProblem(path) : "a document path is a string";
  if (problem !== null) throw Errors.invalidId("document path", path, problem);
}
