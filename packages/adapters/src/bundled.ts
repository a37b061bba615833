import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { type BundledDocuments, type CatalogDocument, catalogDocumentsFromBundled } from "@vance/core";
import { contentTypeForKey } from "./object-store/keys";

/** Reads the bundled documents under `dir` (only `server-tools/`, `documents/`, `scripts/`) once, at start-up. */
export function loadBundledDocuments(
  dir: string,
  folders = ["server-tools", "documents", "scripts"],
): BundledDocuments {
  const documents = new Map<string, { body: string; contentType: string | undefined }>();
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        documents.set(relative(dir, full).split(sep).join("/"), {
          body: readFileSync(full, "utf8"),
          contentType: contentTypeForKey(entry.name),
        });
      }
    }
  };
  for (const folder of folders) {
    try {
      walk(join(dir, folder));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return documents;
}

/** The bundled model catalog's documents under `dir` (its `catalog/` folder), with paths as in the bucket (`model/…`). */
export function loadBundledCatalog(dir: string): CatalogDocument[] {
  return catalogDocumentsFromBundled(loadBundledDocuments(dir, ["catalog"]));
}
