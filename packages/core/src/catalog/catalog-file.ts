import * as v from "valibot";
import type { BundledDocuments } from "../cascade/document-cascade";
import {
  type CatalogDocument,
  type CatalogError,
  type CompiledCatalog,
  CompiledCatalogSchema,
  catalogContent,
  compileCatalog,
} from "./model-catalog";

/**
 * `catalog.json` (spec §14.1), the compiled model catalog a handler reads with one GET: what it
 * is compiled from and when a sync has to rewrite it. Pure: documents in, text out; reading the
 * bundle and the bucket is the adapters' part.
 */

/** The compiled catalog's key in the catalog bucket. */
export const CATALOG_KEY = "catalog.json";
/** Where the catalog's YAML sources live in the bucket (and, after `catalog/`, in the bundle). */
export const CATALOG_MODEL_PREFIX = "model/";
const BUNDLED_PREFIX = "catalog/";

/**
 * The bundled catalog documents (loaded from `packages/defaults` with the `catalog` folder),
 * with their `catalog/` prefix stripped so their paths match the bucket layout `model/…`.
 */
export function catalogDocumentsFromBundled(bundled: BundledDocuments): CatalogDocument[] {
  const documents: CatalogDocument[] = [];
  for (const [path, { body }] of bundled) {
    if (path.startsWith(`${BUNDLED_PREFIX}${CATALOG_MODEL_PREFIX}`)) {
      documents.push({ path: path.slice(BUNDLED_PREFIX.length), body });
    }
  }
  return documents;
}

/** The catalog's sources: the bundled documents, each replaced by a bucket document at the same path. */
export function mergeCatalogSources(
  bundled: readonly CatalogDocument[],
  stored: Iterable<CatalogDocument>,
): CatalogDocument[] {
  const byPath = new Map<string, string>();
  for (const { path, body } of bundled) byPath.set(path, body);
  for (const { path, body } of stored) byPath.set(path, body);
  return [...byPath].map(([path, body]) => ({ path, body }));
}

/** A compiled `catalog.json`: the catalog, its text, its counts and the documents left out. */
export interface CatalogFile {
  readonly catalog: CompiledCatalog;
  /** The file's content, as written to the bucket. */
  readonly text: string;
  readonly providers: number;
  readonly models: number;
  /** Source documents that could not be compiled (left out of the catalog). */
  readonly errors: readonly CatalogError[];
}

/** Compiles the sources into `catalog.json`. */
export function compileCatalogFile(
  documents: readonly CatalogDocument[],
  compiledAt: string = new Date().toISOString(),
): CatalogFile {
  const { catalog, errors } = compileCatalog(documents, compiledAt);
  const providers = Object.values(catalog.providers);
  return {
    catalog,
    text: `${JSON.stringify(catalog, null, 2)}\n`,
    providers: providers.length,
    models: providers.reduce((sum, provider) => sum + Object.keys(provider.models).length, 0),
    errors,
  };
}

/** The compiled catalog in a `catalog.json` text, or null when the text is not one. */
export function parseCatalogFile(text: string): CompiledCatalog | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  const result = v.safeParse(CompiledCatalogSchema, data);
  return result.success ? result.output : null;
}

/**
 * Whether the stored `catalog.json` (null: none) already says what `catalog` says. `compiledAt`
 * does not count, so a quiet catalog is never rewritten and warm handlers keep their ETag.
 */
export function catalogFileCurrent(stored: string | null, catalog: CompiledCatalog): boolean {
  const current = stored === null ? null : parseCatalogFile(stored);
  return current !== null && catalogContent(current) === catalogContent(catalog);
}
