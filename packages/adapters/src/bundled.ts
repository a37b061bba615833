import { readdirSync, readFileSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import type { BundledDocuments } from "@vance/core";

const CONTENT_TYPES: Record<string, string> = {
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".json": "application/json",
  ".js": "application/javascript",
  ".md": "text/markdown; charset=utf-8",
};

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
          contentType: CONTENT_TYPES[extname(entry.name)] ?? "text/plain; charset=utf-8",
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
