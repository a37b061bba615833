import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { contentTypeForPath, documentPathProblem, type FieldError } from "@vance/core";
import { ApiClient, ApiError, encodePath } from "./client";

/** A document of a folder: its path in the layer and where it is on disk. */
export interface LocalDocument {
  readonly path: string;
  readonly file: string;
}

/** A document the server (or the path rule) refused. */
export interface FailedDocument {
  readonly path: string;
  readonly code: string;
  readonly message: string;
  readonly errors: readonly FieldError[];
}

export interface PushSummary {
  readonly created: string[];
  readonly replaced: string[];
  readonly unchanged: string[];
  readonly failed: FailedDocument[];
  /** The conflict the push stopped at (without `--force`); the documents after it were not sent. */
  stopped: FailedDocument | null;
  readonly notSent: string[];
}

export interface LayerDocuments {
  readonly layer: "project" | "tenant";
  readonly documents: readonly { readonly path: string; readonly etag: string; readonly size: number }[];
}

/** Answers that mean "someone else changed it": the push stops there unless forced. */
const CONFLICT_STATUSES = new Set([409, 412]);

/**
 * The documents of a folder laid out like a layer: every file inside a sub-folder
 * (`server-tools/x.yaml`, `documents/guide.md`), dot-files and files at the top (a README) left
 * out, sorted by path.
 */
export function folderDocuments(dir: string): LocalDocument[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`'${dir}' is not a folder`);
  const found: LocalDocument[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder).sort()) {
      if (entry.startsWith(".")) continue;
      const file = join(folder, entry);
      if (statSync(file).isDirectory()) walk(file);
      else if (folder !== dir) found.push({ path: relative(dir, file).split(sep).join("/"), file });
    }
  };
  walk(dir);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The content type a document is sent with: the stores' own rule, by extension. */
export const contentTypeOf = contentTypeForPath;

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Reads and writes the documents of one layer (`T/documents`). */
export class LayerSync {
  private readonly base: string;

  constructor(
    private readonly client: ApiClient,
    tenant: string,
    project: string,
  ) {
    this.base = ApiClient.projectPath(tenant, project);
  }

  /** The layer's own documents (`GET T/documents`), under `prefix`. */
  list(prefix = ""): Promise<LayerDocuments> {
    const query = prefix === "" ? "" : `?prefix=${encodeURIComponent(prefix)}`;
    return this.client.json<LayerDocuments>("GET", `${this.base}/documents${query}`);
  }

  /** A document's stored text and ETag. */
  async read(path: string): Promise<{ text: string; etag: string | null; layer: string | null }> {
    const response = await this.client.request("GET", `${this.base}/documents/${encodePath(path)}`);
    return {
      text: await response.text(),
      etag: response.headers.get("etag"),
      layer: response.headers.get("x-vance-layer"),
    };
  }

  /** Stores a document as sent; `created` is whether it was new. */
  async write(
    path: string,
    text: string,
    preconditions: { ifMatch?: string; ifNoneMatch?: string } = {},
    contentType: string = contentTypeOf(path),
  ): Promise<{ created: boolean; etag: string | null; body: unknown }> {
    const response = await this.client.request("PUT", `${this.base}/documents/${encodePath(path)}`, {
      body: text,
      contentType,
      headers: {
        ...(preconditions.ifMatch ? { "if-match": preconditions.ifMatch } : {}),
        ...(preconditions.ifNoneMatch ? { "if-none-match": preconditions.ifNoneMatch } : {}),
      },
    });
    return {
      created: response.status === 201,
      etag: response.headers.get("etag"),
      body: await response.json(),
    };
  }

  /**
   * Uploads a folder's documents. A document whose text hashes the same as the stored one is left
   * alone; a changed one is replaced under `If-Match` of the ETag just read, a new one created
   * under `If-None-Match: *`, so a document someone else wrote meanwhile is a conflict: the push
   * stops there. `force` sends no preconditions and goes on past every failure.
   */
  async push(
    documents: readonly LocalDocument[],
    options: { force: boolean; progress?: { update(label: string): void; tick(): void } },
  ): Promise<PushSummary> {
    const summary: PushSummary = {
      created: [],
      replaced: [],
      unchanged: [],
      failed: [],
      stopped: null,
      notSent: [],
    };
    const stored = new Set((await this.list()).documents.map((document) => document.path));
    for (const [index, document] of documents.entries()) {
      options.progress?.update(document.path);
      const problem = documentPathProblem(document.path);
      if (problem) {
        summary.failed.push({ path: document.path, code: "invalid_id", message: problem, errors: [] });
        options.progress?.tick();
        continue;
      }
      const text = readFileSync(document.file, "utf8");
      try {
        let ifMatch: string | undefined;
        if (stored.has(document.path)) {
          const current = await this.read(document.path);
          if (sha256(current.text) === sha256(text)) {
            summary.unchanged.push(document.path);
            options.progress?.tick();
            continue;
          }
          ifMatch = current.etag ?? undefined;
        }
        const preconditions = options.force ? {} : ifMatch ? { ifMatch } : { ifNoneMatch: "*" };
        const written = await this.write(document.path, text, preconditions);
        (written.created ? summary.created : summary.replaced).push(document.path);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        const failed = {
          path: document.path,
          code: error.code ?? "error",
          message: error.message,
          errors: error.errors,
        };
        if (!options.force && CONFLICT_STATUSES.has(error.status ?? 0)) {
          summary.stopped = failed;
          summary.notSent.push(...documents.slice(index + 1).map((rest) => rest.path));
          break;
        }
        summary.failed.push(failed);
      }
      options.progress?.tick();
    }
    return summary;
  }

  /** Writes the layer's documents (under `prefix`) into `dir`, as stored; answers their paths. */
  async pull(dir: string, prefix = ""): Promise<{ layer: string; paths: string[] }> {
    const listing = await this.list(prefix);
    const paths: string[] = [];
    for (const { path } of listing.documents) {
      // The server's own path rule: no '..', no absolute paths, so nothing lands outside `dir`.
      const problem = documentPathProblem(path);
      if (problem) throw new Error(`the server listed '${path}', which is no document path: ${problem}`);
      const { text } = await this.read(path);
      const file = join(dir, ...path.split("/"));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      paths.push(path);
    }
    return { layer: listing.layer, paths };
  }
}
