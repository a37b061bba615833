import type { GenerationStamp } from "../cascade/generations";
import type { ServerToolConfig } from "../config/schema";
import type { FieldError } from "../errors";
import { isErrorCode, VanceError } from "../errors";
import { COMPILED_PREFIX } from "../ids";
import type { ObjectAudit, ObjectMeta, ObjectStore } from "../ports/object-store";
import type { ToolDocumentResult } from "../tool-types/parse";

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
  const audit = a === undefined || a === null ? null : isAudit(a) ? a : undefined;
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

function isAudit(value: unknown): value is ObjectAudit {
  return (
    isRecord(value) &&
    (value.createdAt === null || typeof value.createdAt === "string") &&
    (value.updatedAt === null || typeof value.updatedAt === "string") &&
    (value.updatedBy === null || typeof value.updatedBy === "string")
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
