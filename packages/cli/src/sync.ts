import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { contentTypeForPath, documentPathProblem, type FieldError } from "@vance/core";
import { ApiError, answered, type CliApi, dataOf, documentPathSerializer } from "./api";

const T = "/v1/tenants/{tenant}/projects/{project}";

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
  /**
   * Documents changed (or deleted) on the server since this folder's last pull or push, or stored
   * there but never pulled here: without `--force` the push sends nothing when there is one.
   */
  readonly conflicts: FailedDocument[];
  /** The conflict the push stopped at (without `--force`); the documents after it were not sent. */
  stopped: FailedDocument | null;
  readonly notSent: string[];
}

/** Answers that mean "someone else changed it": the push stops there unless forced. */
const CONFLICT_STATUSES = new Set([409, 412]);

/** Folders of a configuration repository that hold no documents: installed packages. */
const NOT_DOCUMENTS = new Set(["node_modules"]);

/**
 * Why `path` is not a document a folder laid out like a layer holds, or null: documents live in
 * sub-folders (`server-tools/x.yaml`, `documents/guide.md`); files at the top (a README, a
 * `package.json`) and installed packages are the repository's own, never the layer's.
 */
export function folderPathProblem(path: string): string | null {
  const segments = path.split("/");
  if (segments.length < 2)
    return "a file at the folder's top is the repository's own, not a document of the layer";
  if (NOT_DOCUMENTS.has(segments[0]!)) return `'${segments[0]}/' holds installed packages, not documents`;
  return null;
}

/** The documents of a folder laid out like a layer (see `folderPathProblem`), dot-files left out, sorted by path. */
export function folderDocuments(dir: string): LocalDocument[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`'${dir}' is not a folder`);
  const found: LocalDocument[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder).sort()) {
      if (entry.startsWith(".")) continue;
      const file = join(folder, entry);
      const path = relative(dir, file).split(sep).join("/");
      if (statSync(file).isDirectory()) {
        if (!NOT_DOCUMENTS.has(path)) walk(file);
      } else if (folderPathProblem(path) === null) found.push({ path, file });
    }
  };
  walk(dir);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The file, at a folder's top, where pull and push keep the ETags they last saw. */
export const STATE_FILE = ".vance-tools.json";

interface StateFile {
  readonly version: 1;
  /** `{url} {tenant}/{project}` → document path → the ETag last pulled or pushed. */
  readonly layers: Record<string, Record<string, string>>;
}

/**
 * What a folder last pulled from or pushed to each layer: the ETag of every document, so a push
 * can tell a document a colleague changed on the server since from one only changed here.
 */
export class SyncState {
  private constructor(
    private readonly file: string,
    private readonly state: StateFile,
    private readonly key: string,
  ) {}

  /** The state of `dir` for the layer `key` (see `LayerSync.key`); empty when the folder has none. */
  static load(dir: string, key: string): SyncState {
    const file = join(dir, STATE_FILE);
    let state: StateFile = { version: 1, layers: {} };
    if (existsSync(file)) {
      try {
        const parsed = JSON.parse(readFileSync(file, "utf8")) as StateFile;
        if (parsed.version === 1 && typeof parsed.layers === "object" && parsed.layers !== null)
          state = parsed;
      } catch {
        throw new Error(`${file} is not the JSON vance-tools writes; delete it to start afresh (then pull)`);
      }
    }
    state.layers[key] ??= {};
    return new SyncState(file, state, key);
  }

  /** The ETag last seen for `path`, if any. */
  etag(path: string): string | undefined {
    return this.state.layers[this.key]![path];
  }

  record(path: string, etag: string | null): void {
    if (etag) this.state.layers[this.key]![path] = etag;
  }

  save(): void {
    writeFileSync(this.file, `${JSON.stringify(this.state, null, 2)}\n`);
  }
}

/** The content type a document is sent with: the stores' own rule, by extension. */
export const contentTypeOf = contentTypeForPath;

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The path of a project (`T` in API.md) as the URL spells it; `_tenant` addresses the tenant layer. */
function projectPath(tenant: string, project: string): string {
  return `/v1/tenants/${encodeURIComponent(tenant)}/projects/${encodeURIComponent(project)}`;
}

/** Reads and writes the documents of one layer (`T/documents`) through `@vance/client`. */
export class LayerSync {
  constructor(
    private readonly client: CliApi,
    private readonly tenant: string,
    private readonly project: string,
  ) {}

  /** The layer's key in a folder's `SyncState`: the server and the layer's path. */
  get key(): string {
    return `${this.client.url} ${projectPath(this.tenant, this.project)}`;
  }

  private document(path: string) {
    return { path: { tenant: this.tenant, project: this.project, path } };
  }

  /** The layer's own documents (`GET T/documents`), under `prefix`. */
  list(prefix = "") {
    return dataOf(
      this.client.api.GET(`${T}/documents`, {
        params: {
          path: { tenant: this.tenant, project: this.project },
          query: prefix === "" ? {} : { prefix },
        },
      }),
    );
  }

  /** A document's stored text and ETag. */
  async read(path: string): Promise<{ text: string; etag: string | null; layer: string | null }> {
    const { data, response } = await answered(
      this.client.api.GET(`${T}/documents/{path}`, {
        params: this.document(path),
        parseAs: "text",
        pathSerializer: documentPathSerializer,
      }),
    );
    return {
      text: data ?? "",
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
    const { data, response } = await answered(
      this.client.api.PUT(`${T}/documents/{path}`, {
        params: this.document(path),
        pathSerializer: documentPathSerializer,
        // The text goes as stored (YAML comments kept), with the type its extension says.
        body: text,
        bodySerializer: (body: string) => body,
        headers: {
          "content-type": contentType,
          ...(preconditions.ifMatch ? { "if-match": preconditions.ifMatch } : {}),
          ...(preconditions.ifNoneMatch ? { "if-none-match": preconditions.ifNoneMatch } : {}),
        },
      }),
    );
    return { created: response.status === 201, etag: response.headers.get("etag"), body: data };
  }

  /**
   * Uploads a folder's documents. First every document is compared with the stored one: the same
   * text (by hash) is left alone; one that changed on the server since `state` last saw it (its
   * ETag moved, it was deleted, or it was never pulled here) is a conflict, and then nothing is
   * sent unless `force`. Then a changed document is replaced under `If-Match` of the ETag just
   * read and a new one created under `If-None-Match: *`, so a write racing this push still stops
   * it there. `force` sends no preconditions and goes on past every failure.
   */
  async push(
    documents: readonly LocalDocument[],
    options: { force: boolean; state: SyncState; progress?: { update(label: string): void; tick(): void } },
  ): Promise<PushSummary> {
    const summary: PushSummary = {
      created: [],
      replaced: [],
      unchanged: [],
      failed: [],
      conflicts: [],
      stopped: null,
      notSent: [],
    };
    const { state } = options;
    const stored = new Map((await this.list()).documents.map((document) => [document.path, document.etag]));
    const toSend: { document: LocalDocument; text: string; ifMatch: string | undefined }[] = [];
    for (const document of documents) {
      const problem = documentPathProblem(document.path);
      if (problem) {
        summary.failed.push({ path: document.path, code: "invalid_id", message: problem, errors: [] });
        continue;
      }
      const text = readFileSync(document.file, "utf8");
      const seen = state.etag(document.path);
      if (!stored.has(document.path)) {
        if (seen !== undefined && !options.force) {
          summary.conflicts.push(
            conflict(document.path, "was deleted on the server since the last pull or push here"),
          );
        } else toSend.push({ document, text, ifMatch: undefined });
        continue;
      }
      const current = await this.read(document.path);
      if (sha256(current.text) === sha256(text)) {
        summary.unchanged.push(document.path);
        state.record(document.path, current.etag);
        continue;
      }
      if (!options.force && seen !== current.etag) {
        summary.conflicts.push(
          conflict(
            document.path,
            seen === undefined
              ? "is stored on the server but was never pulled here: pull first to see it"
              : "changed on the server since the last pull or push here: pull it to see the change",
          ),
        );
        continue;
      }
      toSend.push({ document, text, ifMatch: current.etag ?? undefined });
    }
    if (summary.conflicts.length > 0) {
      summary.notSent.push(...toSend.map((entry) => entry.document.path));
      return summary;
    }
    for (const [index, { document, text, ifMatch }] of toSend.entries()) {
      options.progress?.update(document.path);
      try {
        const preconditions = options.force ? {} : ifMatch ? { ifMatch } : { ifNoneMatch: "*" };
        const written = await this.write(document.path, text, preconditions);
        (written.created ? summary.created : summary.replaced).push(document.path);
        state.record(document.path, written.etag);
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
          summary.notSent.push(...toSend.slice(index + 1).map((rest) => rest.document.path));
          break;
        }
        summary.failed.push(failed);
      }
      options.progress?.tick();
    }
    return summary;
  }

  /**
   * Writes the layer's documents (under `prefix`) into `dir`, as stored, and records their ETags
   * in `state`; answers their paths. Only documents inside folders are written: a document at the
   * layer's top (anyone with `write` can store a `package.json` there) is left out and named, so a
   * pull never replaces the repository's own files.
   */
  async pull(
    dir: string,
    state: SyncState,
    prefix = "",
  ): Promise<{ layer: string; paths: string[]; leftOut: { path: string; reason: string }[] }> {
    const listing = await this.list(prefix);
    const paths: string[] = [];
    const leftOut: { path: string; reason: string }[] = [];
    for (const { path } of listing.documents) {
      // The server's own path rule: no '..', no absolute paths, so nothing lands outside `dir`.
      const problem = documentPathProblem(path);
      if (problem) throw new Error(`the server listed '${path}', which is no document path: ${problem}`);
      const outside = folderPathProblem(path);
      if (outside) {
        leftOut.push({ path, reason: outside });
        continue;
      }
      const { text, etag } = await this.read(path);
      const file = join(dir, ...path.split("/"));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      state.record(path, etag);
      paths.push(path);
    }
    return { layer: listing.layer, paths, leftOut };
  }
}

function conflict(path: string, why: string): FailedDocument {
  return { path, code: "changed_on_server", message: `${path} ${why} (--force overwrites)`, errors: [] };
}
