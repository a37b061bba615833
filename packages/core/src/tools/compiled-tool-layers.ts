import { type GenerationStamp, layerMarker } from "../cascade/generations";
import { mapWithConcurrency } from "../concurrency";
import type { ServerToolConfig } from "../config/schema";
import type { FieldError } from "../errors";
import { isErrorCode, VanceError } from "../errors";
import { COMPILED_PREFIX, layerKeyPrefix, TOOL_DOCUMENTS_DIR, toolNameFromPath } from "../ids";
import type { Logger } from "../ports/logger";
import {
  isNotModified,
  listAllObjects,
  type ObjectAudit,
  type ObjectMeta,
  type ObjectStore,
} from "../ports/object-store";
import { loadLazyEngines } from "../tool-types/lazy-engines";
import { parseToolDocument, type ToolDocumentResult } from "../tool-types/parse";
import type { ToolTypeRegistry } from "../tool-types/registry";

/**
 * Where compiled layer indexes live in the documents store: outside every layer's keys (a tenant
 * id never starts with `_`), so no listing, cascade read or bucket event takes one for a document.
 */

/** The object key of one layer's compiled tool index. */
export function compiledLayerKey(tenant: string, project: string): string {
  return `${COMPILED_PREFIX}${tenant}/${project}/server-tools.json`;
}

/** Bumped whenever the stored shape or the meaning of a compiled result changes. */
const FORMAT = 1;

/** One listed tool document of a layer and, when it was read, what parsing its version gave. */
export interface CompiledEntry {
  readonly meta: ObjectMeta;
  /** Absent for a document the builder never read (shadowed, or its path no tool's). */
  readonly compiled?: { readonly result: ToolDocumentResult; readonly audit: ObjectAudit | null };
}

/**
 * A layer's `server-tools/` listing as read under `stamp`, with the parsed, validated result of
 * each document version (by ETag) the builder had.
 */
export interface CompiledLayer {
  readonly stamp: GenerationStamp;
  readonly entries: readonly CompiledEntry[];
}

/** The outcome of reading a compiled index: the layer, or why there is none (`etag` for a conditional rewrite). */
export type CompiledRead =
  | { readonly status: "found"; readonly layer: CompiledLayer; readonly etag: string }
  | { readonly status: "missing" }
  | { readonly status: "unusable"; readonly etag: string; readonly reason: string };

/** Counters for `/v1/metrics`-style reporting. */
export interface CompiledLayerStats {
  readonly reads: number;
  readonly found: number;
  readonly missing: number;
  readonly unusable: number;
  readonly writes: number;
  /** Writes the store refused because another instance wrote the index in between. */
  readonly conflicts: number;
}

/** One entry as stored: short field names, since a 5,000-tool layer stores 5,000 of them. */
interface StoredEntry {
  readonly k: string;
  readonly e: string;
  readonly s: number;
  /** The parsed configuration (a valid document). */
  readonly c?: ServerToolConfig;
  /** The validation error (an invalid document). */
  readonly x?: {
    readonly code: string;
    readonly status: number;
    readonly message: string;
    readonly errors: readonly FieldError[];
  };
  readonly a?: ObjectAudit | null;
}

interface StoredIndex {
  readonly format: number;
  readonly fingerprint: string;
  readonly tenant: string;
  readonly project: string;
  readonly generation: number;
  readonly at: number;
  readonly entries: readonly StoredEntry[];
}

/**
 * Compiled layer indexes (issue 24): one object per (tenant, layer) holding the layer's tool
 * listing and its parsed, validated documents, so a cold instance answers a large project's first
 * listing with one GET per layer instead of one GET and one parse per document. An index is a
 * cache, never the truth: the listing it holds is taken only while its generation is the layer's
 * current one (`DocumentCascade.seedListing`), and its parsed results are keyed by each
 * document's ETag, so a stale index still saves the parsing of every unchanged document. A
 * missing, foreign-format or corrupt index is reported as such and rebuilt by its reader.
 * Writes are conditional on the index version read, so two builders never interleave.
 */
export class CompiledToolLayers {
  #reads = 0;
  #found = 0;
  #missing = 0;
  #unusable = 0;
  #writes = 0;
  #conflicts = 0;

  /**
   * @param fingerprint what a compiled result depends on beside the document (the registered
   * tool types): an index built under another fingerprint is not used.
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly fingerprint: string,
  ) {}

  get stats(): CompiledLayerStats {
    return {
      reads: this.#reads,
      found: this.#found,
      missing: this.#missing,
      unusable: this.#unusable,
      writes: this.#writes,
      conflicts: this.#conflicts,
    };
  }

  /** One GET: the layer's compiled index, or why there is none. */
  async read(tenant: string, project: string): Promise<CompiledRead> {
    this.#reads++;
    const object = await this.store.get(compiledLayerKey(tenant, project));
    if (object === null || "notModified" in object) {
      this.#missing++;
      return { status: "missing" };
    }
    const decoded = this.#decode(object.body, tenant, project);
    if (typeof decoded === "string") {
      this.#unusable++;
      return { status: "unusable", etag: object.etag, reason: decoded };
    }
    this.#found++;
    return { status: "found", layer: decoded, etag: object.etag };
  }

  /**
   * Stores the layer's index, replacing exactly the version read before (`previousEtag`, null:
   * only if none exists). False when another writer came first: its index stands.
   */
  async write(
    tenant: string,
    project: string,
    layer: CompiledLayer,
    previousEtag: string | null,
  ): Promise<boolean> {
    const stored: StoredIndex = {
      format: FORMAT,
      fingerprint: this.fingerprint,
      tenant,
      project,
      generation: layer.stamp.generation,
      at: layer.stamp.at,
      entries: layer.entries.map(encodeEntry),
    };
    const result = await this.store.put(compiledLayerKey(tenant, project), JSON.stringify(stored), {
      contentType: "application/json",
      ...(previousEtag === null ? { ifNoneMatch: "*" } : { ifMatch: previousEtag }),
    });
    if (result.ok) this.#writes++;
    else this.#conflicts++;
    return result.ok;
  }

  /** The stored index as a layer, or why it cannot be used. */
  #decode(body: string, tenant: string, project: string): CompiledLayer | string {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return "not JSON";
    }
    if (!isRecord(value)) return "not an object";
    if (value.format !== FORMAT) return `format ${String(value.format)}, not ${FORMAT}`;
    if (value.fingerprint !== this.fingerprint) return "built under other tool types";
    if (value.tenant !== tenant || value.project !== project) return "built for another layer";
    if (!Number.isSafeInteger(value.generation) || typeof value.at !== "number") return "no generation stamp";
    if (!Array.isArray(value.entries)) return "no entries";
    const prefix = `${tenant}/${project}/`;
    const entries: CompiledEntry[] = [];
    for (const raw of value.entries as unknown[]) {
      const entry = decodeEntry(raw, prefix);
      if (entry === null) return "a malformed entry";
      entries.push(entry);
    }
    return { stamp: { generation: value.generation as number, at: value.at }, entries };
  }
}

/**
 * What a compiled result depends on beside its document: the release and the registered tool
 * types. The API and the bucket-event function build it alike, so each uses the other's index.
 */
export function compiledToolsFingerprint(version: string, types: ToolTypeRegistry): string {
  return `${version}\n${types.ids().join(",")}`;
}

/** GETs in flight at once when a rebuild reads the documents its previous index lacks. */
const REBUILD_FETCH_CONCURRENCY = 16;

/** What one rebuild did. */
export type RebuildOutcome =
  /** A new index under the layer's current generation was stored. */
  | "written"
  /** The stored index is already of this generation or a later one: nothing written. */
  | "current"
  /** The layer's generation moved past the one asked for: the later change's rebuild covers it. */
  | "superseded"
  /** Another builder wrote the index in between, twice: its index stands. */
  | "conflict";

export interface CompiledLayerBuilderOptions {
  readonly store: ObjectStore;
  readonly layers: CompiledToolLayers;
  /** The registry the service validates against (the one `layers`' fingerprint names). */
  readonly types: ToolTypeRegistry;
  /** The marker's current generation, read from the state store (one request). */
  readonly generation: (marker: string) => Promise<number>;
  /** Epoch milliseconds: the index's stamp, which the safety net ages. */
  readonly now?: () => number;
  readonly logger?: Logger;
  /**
   * How long a scheduled rebuild waits before it starts (default 0: the next macrotask), so a
   * burst of writes into one layer — a push of many documents — makes one rebuild, not one each.
   * `settled` starts waiting rebuilds at once.
   */
  readonly delayMs?: number;
}

/** Counters of the rebuilds on write and by event. */
export interface CompiledLayerBuilderStats {
  readonly scheduled: number;
  readonly written: number;
  readonly current: number;
  readonly superseded: number;
  readonly conflicts: number;
  readonly failed: number;
}

/**
 * Rebuilds a layer's compiled index from the store, after a change: what every write through the
 * API schedules (`schedule`, off the write's answer) and what the bucket-event function runs for
 * a layer it bumped (`rebuild`). The generation is read before the layer is listed, so the index
 * never claims a generation its listing is older than. Results are taken from the stored index
 * by ETag, so only the documents changed since are read and parsed: a write into a 5,000-tool
 * layer costs one index GET, one LIST (pages of 1,000), the changed document's GET and one PUT.
 * Scheduled rebuilds of one layer wait `delayMs` and coalesce: while one waits or runs, any
 * number of writes make one more run after it, so a push of many documents into a layer rebuilds
 * about once per delay and rebuild, not once per document. A failed rebuild is logged, never a
 * write's error: the index is a cache, and the next cold reader rebuilds one it finds stale.
 */
export class CompiledLayerBuilder {
  readonly #options: CompiledLayerBuilderOptions;
  readonly #now: () => number;
  readonly #delayMs: number;
  /** Rebuilds running (or waiting to start) by layer key, and the layers changed again while theirs ran. */
  readonly #running = new Map<string, Promise<void>>();
  /** The start of each rebuild still waiting out the delay, by layer key. */
  readonly #waiting = new Map<
    string,
    { readonly timer: ReturnType<typeof setTimeout>; readonly start: () => void }
  >();
  readonly #again = new Set<string>();
  /** `settled` calls waiting: meanwhile no rebuild waits out the delay. */
  #flushing = 0;
  #scheduled = 0;
  #written = 0;
  #current = 0;
  #superseded = 0;
  #conflicts = 0;
  #failed = 0;

  constructor(options: CompiledLayerBuilderOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => Date.now());
    this.#delayMs = options.delayMs ?? 0;
  }

  get stats(): CompiledLayerBuilderStats {
    return {
      scheduled: this.#scheduled,
      written: this.#written,
      current: this.#current,
      superseded: this.#superseded,
      conflicts: this.#conflicts,
      failed: this.#failed,
    };
  }

  /**
   * After a change of the layer: rebuilds its index off the caller's path, after the delay.
   * Coalesced with a rebuild of the layer already waiting or running: every change meanwhile
   * makes one more run after it (after the delay again).
   */
  schedule(tenant: string, project: string): void {
    this.#scheduled++;
    const key = `${tenant}/${project}`;
    if (this.#running.has(key)) {
      this.#again.add(key);
      return;
    }
    const run = async () => {
      try {
        do {
          await this.#pause(key);
          this.#again.delete(key);
          await this.rebuild(tenant, project).catch(() => undefined);
        } while (this.#again.has(key));
      } finally {
        // In the same turn as the last check: a change arriving now starts a run of its own.
        this.#running.delete(key);
      }
    };
    this.#running.set(key, run());
  }

  /** The delay before a layer's next rebuild; none while `settled` waits. */
  #pause(key: string): Promise<void> {
    return new Promise((resolve) => {
      const start = () => {
        this.#waiting.delete(key);
        resolve();
      };
      if (this.#flushing > 0) start();
      else this.#waiting.set(key, { timer: setTimeout(start, this.#delayMs), start });
    });
  }

  /** `schedule` for a generation marker: a document layer's (`documents/{tenant}/{project}`), else nothing. */
  scheduleMarker(marker: string): void {
    const [kind, tenant, project, ...rest] = marker.split("/");
    if (kind === "documents" && tenant && project && rest.length === 0) this.schedule(tenant, project);
  }

  /** Starts every waiting rebuild now and resolves when all have finished (shutdown, tests). */
  async settled(): Promise<void> {
    this.#flushing++;
    try {
      while (this.#running.size > 0) {
        for (const { timer, start } of [...this.#waiting.values()]) {
          clearTimeout(timer);
          start();
        }
        await Promise.all([...this.#running.values()]);
      }
    } finally {
      this.#flushing--;
    }
  }

  /**
   * Rebuilds the layer's index now, under its current generation. With `unlessPast`, does
   * nothing once the generation has moved past it (a later change's rebuild follows). Throws
   * only what the store or state store threw, after logging it.
   */
  async rebuild(
    tenant: string,
    project: string,
    options: { readonly unlessPast?: number } = {},
  ): Promise<RebuildOutcome> {
    try {
      const outcome = await this.#rebuild(tenant, project, options.unlessPast);
      if (outcome === "written") this.#written++;
      else if (outcome === "current") this.#current++;
      else if (outcome === "superseded") this.#superseded++;
      else this.#conflicts++;
      return outcome;
    } catch (error) {
      this.#failed++;
      this.#options.logger?.warn("tool.compiled_layer_rebuild_failed", {
        tenant,
        project,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  async #rebuild(tenant: string, project: string, unlessPast: number | undefined): Promise<RebuildOutcome> {
    const { store, layers, types } = this.#options;
    // The stamp first, then the listing: every write the stamp's generation counts is listed.
    const at = this.#now();
    const generation = await this.#options.generation(layerMarker(tenant, project));
    if (unlessPast !== undefined && generation > unlessPast) return "superseded";
    const layerPrefix = layerKeyPrefix(tenant, project);
    const [previous, items] = await Promise.all([
      layers.read(tenant, project),
      listAllObjects(store, `${layerPrefix}${TOOL_DOCUMENTS_DIR}`),
    ]);
    if (previous.status === "found" && previous.layer.stamp.generation >= generation) return "current";
    // Parsing checks schemas (Ajv) and scripts (acorn): an entry whose engines are not loaded yet
    // (the document-events function loads none at start) would store "not loaded" as a document's
    // validation result, for every reader of the index.
    await loadLazyEngines();
    const known = new Map<string, CompiledEntry["compiled"]>();
    if (previous.status === "found") {
      for (const { meta, compiled } of previous.layer.entries)
        if (compiled) known.set(`${meta.key}\n${meta.etag}`, compiled);
    }
    const entries = await mapWithConcurrency(items, REBUILD_FETCH_CONCURRENCY, async (meta) => {
      const name = toolNameFromPath(meta.key.slice(layerPrefix.length));
      if (name === null) return { meta };
      const compiled = known.get(`${meta.key}\n${meta.etag}`);
      if (compiled) return { meta, compiled };
      const object = await store.get(meta.key);
      // Gone or replaced since the LIST: a later generation's rebuild (or reader) parses it.
      if (object === null || isNotModified(object) || object.etag !== meta.etag) return { meta };
      // Charged to the tenant, its large schemas compiled on the worker where there is one (a
      // document stored behind the API's back is parsed here first).
      const result = await types.environment.jsonSchemas.asTenantLargeOnWorker(tenant, () =>
        parseToolDocument(object.body, name, types),
      );
      return { meta, compiled: { result, audit: object.audit ?? null } };
    });
    const layer: CompiledLayer = { stamp: { generation, at }, entries };
    const previousEtag = previous.status === "missing" ? null : previous.etag;
    if (await layers.write(tenant, project, layer, previousEtag)) return "written";
    // Another builder came first: keep its index unless it is older than ours.
    const now = await layers.read(tenant, project);
    if (now.status === "found" && now.layer.stamp.generation >= generation) return "current";
    const retry = now.status === "missing" ? null : now.etag;
    return (await layers.write(tenant, project, layer, retry)) ? "written" : "conflict";
  }
}

function encodeEntry({ meta, compiled }: CompiledEntry): StoredEntry {
  const base = { k: meta.key, e: meta.etag, s: meta.size };
  if (!compiled) return base;
  const { result, audit } = compiled;
  if (result.ok) return { ...base, c: result.config, a: audit };
  const { code, status, message, errors } = result.error;
  return { ...base, x: { code, status, message, errors }, a: audit };
}

/** A stored entry, checked as far as using it needs; null when it is not one. */
function decodeEntry(raw: unknown, prefix: string): CompiledEntry | null {
  if (!isRecord(raw)) return null;
  const { k, e, s, c, x, a } = raw;
  if (typeof k !== "string" || !k.startsWith(prefix) || typeof e !== "string" || typeof s !== "number")
    return null;
  const meta = { key: k, etag: e, size: s };
  // An index written before `createdBy` existed answers it as unknown rather than being rebuilt.
  const audit =
    a === undefined || a === null ? null : isAudit(a) ? { ...a, createdBy: a.createdBy ?? null } : undefined;
  if (audit === undefined) return null;
  if (c !== undefined) {
    if (!isConfig(c)) return null;
    return { meta, compiled: { result: { ok: true, config: c }, audit } };
  }
  if (x !== undefined) {
    if (!isRecord(x) || !isErrorCode(x.code) || typeof x.message !== "string") return null;
    // The status is still written for older readers; this one derives it from the code.
    if (typeof x.status !== "number" || !Array.isArray(x.errors)) return null;
    const error = new VanceError(x.code, x.message, x.errors as FieldError[]);
    return { meta, compiled: { result: { ok: false, error }, audit } };
  }
  return { meta };
}

/** The fields every reader of a configuration relies on; the rest was validated when it was compiled. */
function isConfig(value: unknown): value is ServerToolConfig {
  return (
    isRecord(value) &&
    typeof value.name === "string" &&
    typeof value.type === "string" &&
    typeof value.description === "string" &&
    typeof value.enabled === "boolean" &&
    typeof value.primary === "boolean" &&
    Array.isArray(value.labels) &&
    Array.isArray(value.disabledSubTools) &&
    typeof value.defaultDeferred === "boolean" &&
    isRecord(value.parameters)
  );
}

function isAudit(value: unknown): value is Omit<ObjectAudit, "createdBy"> & { createdBy?: string | null } {
  return (
    isRecord(value) &&
    (value.createdAt === null || typeof value.createdAt === "string") &&
    (value.createdBy === undefined || value.createdBy === null || typeof value.createdBy === "string") &&
    (value.updatedAt === null || typeof value.updatedAt === "string") &&
    (value.updatedBy === null || typeof value.updatedBy === "string")
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
