/**
 * Where the service keeps what it compiles from documents (a layer's tool index, an OpenAPI
 * document's operation list): `_compiled/{tenant}/{layer}/…` in the documents store. `_compiled`
 * is no tenant id, so no document's key starts with it; listings and bucket events pass over it.
 */
export const COMPILED_PREFIX = "_compiled/";

/** Whether an object key is one of the service's compiled objects (not a document). */
export function isCompiledKey(key: string): boolean {
  return key.startsWith(COMPILED_PREFIX);
}

/**
 * The key prefix of one layer's documents in the documents store: `{tenant}/{layerProject}/`
 * (`_tenant` for the tenant layer). The one spelling of it: every key a layer's document has is
 * this prefix and the document's path.
 */
export function layerKeyPrefix(tenant: string, layerProject: string): string {
  return `${tenant}/${layerProject}/`;
}

/** The object key of a document of one layer: `{tenant}/{layerProject}/{path}` (unvalidated). */
export function layerDocumentKey(tenant: string, layerProject: string, path: string): string {
  return `${layerKeyPrefix(tenant, layerProject)}${path}`;
}

/**
 * A documents-store key split into its tenant, layer project and document path, or null when
 * it has fewer than three segments or an empty path. Ids are not validated here.
 */
export function parseLayerDocumentKey(
  key: string,
): { readonly tenant: string; readonly layerProject: string; readonly path: string } | null {
  const first = key.indexOf("/");
  const second = first < 0 ? -1 : key.indexOf("/", first + 1);
  if (second < 0 || second === key.length - 1) return null;
  return {
    tenant: key.slice(0, first),
    layerProject: key.slice(first + 1, second),
    path: key.slice(second + 1),
  };
}
