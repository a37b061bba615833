import { MIB, stringBytes } from "../cache/byte-cache";
import type { CacheReport } from "../cache/cache-registry";
import { TenantByteCache } from "../cache/tenant-byte-cache";
import type { ServerToolConfig } from "../config/schema";
import { VanceError } from "../errors";
import { type Logger, silentLogger } from "../ports/logger";
import type { ToolTypeRegistry } from "../tool-types/registry";
import type { SourceContext, SourceList, SourceTool, ToolSourcing } from "../tool-types/tool-type";

/** What a remote-backed tool document's source offers right now. */
export interface SourcedTools {
  /** The last list that loaded, or null when none ever did (or the source cannot be opened). */
  readonly list: SourceList | null;
  /** True when a list is shown but the latest attempt to refresh it failed or is still running. */
  readonly stale: boolean;
  /** Why there is no list, or why the last refresh failed; null when the list is current. */
  readonly problem: VanceError | null;
  /**
   * What the source answers, as a key: equal while its list, its problem and its staleness are
   * (a reload that answers an equal list keeps it), different after any change, on this instance.
   */
  readonly version: string;
}

/** A value derived from a source's answer, with what it weighs beside the list (its entry counts it). */
export interface SourceDerived<T> {
  readonly value: T;
  readonly bytes: number;
}

/** How long a loaded list serves before it is loaded again (API.md: 60 s). */
export const DEFAULT_SOURCE_TTL_MS = 60_000;
/** How long a listing waits for a source to load before it answers with what it knows. */
export const DEFAULT_SOURCE_WAIT_MS = 2_000;
/** After a failed load, how long listings answer from the last known list without trying again. */
export const DEFAULT_SOURCE_RETRY_MS = 5_000;
/** Bytes of source lists one instance keeps by default, across tenants (`VANCE_CACHE_SOURCES_MB`). */
export const DEFAULT_SOURCE_CACHE_BYTES = 512 * MIB;
/** What an entry costs before its list is loaded, and beyond its list's bytes after. */
const ENTRY_BYTES = 256;
/** A load's own upper bound; the source's `timeoutMs` usually ends it sooner. */
const LOAD_LIMIT_MS = 120_000;

export interface ToolSourcesOptions {
  readonly types: Pick<ToolTypeRegistry, "find">;
  /** The context a tool document of `tenant`/`project` opens its source with. */
  readonly context: (tenant: string, project: string) => SourceContext;
  readonly now?: () => number;
  readonly logger?: Logger;
  readonly ttlMs?: number;
  readonly waitMs?: number;
  readonly retryMs?: number;
  /**
   * Bytes of source lists kept per instance (least recently used go first); each tenant holds at
   * most `tenantShare` of them, so one tenant's packs cannot push another's lists out.
   */
  readonly maxBytes?: number;
  /** The part of `maxBytes` one tenant may hold; a quarter by default. */
  readonly tenantShare?: number;
}

/** One source's state in this instance. */
interface Entry {
  list: SourceList | null;
  /** What the list weighs (its `bytes`, or an estimate of its tools' text). */
  bytes: number;
  loadedAt: number;
  failedAt: number;
  problem: VanceError | null;
  loading: Promise<void> | null;
  /** Changes (from one counter of the instance) whenever `list` or `problem` changes. */
  revision: number;
  /** What `expanded` derived from the answer of one `SourcedTools.version`. */
  derived: { readonly version: string; readonly value: unknown; readonly bytes: number } | null;
}

/**
 * `ToolSources`: the tools that remote-backed documents (MCP servers, OpenAPI documents) offer,
 * cached per instance by the tool document and the source's key (the server document's ETag, the
 * spec's URL) for a time-to-live, and loaded again early when the source says its list changed.
 * A listing never waits long on a remote: it waits at most `waitMs` for a load, and otherwise
 * answers with the last known list, flagged stale (or none before the first success). After a
 * failure, listings answer at once for `retryMs` before the next attempt.
 */
export class ToolSources {
  private readonly entries: TenantByteCache<Entry>;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly ttlMs: number;
  private readonly waitMs: number;
  private readonly retryMs: number;
  #revisions = 0;

  constructor(private readonly options: ToolSourcesOptions) {
    this.now = options.now ?? (() => Date.now());
    this.logger = options.logger ?? silentLogger;
    this.entries = new TenantByteCache<Entry>({
      maxBytes: options.maxBytes ?? DEFAULT_SOURCE_CACHE_BYTES,
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      sizeOf: (entry) => ENTRY_BYTES + entry.bytes + (entry.derived?.bytes ?? 0),
      name: "sources.lists",
      logger: this.logger,
      now: this.now,
    });
    this.ttlMs = options.ttlMs ?? DEFAULT_SOURCE_TTL_MS;
    this.waitMs = options.waitMs ?? DEFAULT_SOURCE_WAIT_MS;
    this.retryMs = options.retryMs ?? DEFAULT_SOURCE_RETRY_MS;
  }

  /** Source lists by tenant, document and source, bounded by bytes with a share per tenant. */
  cacheReports(): Record<string, CacheReport> {
    return { lists: this.entries.report() };
  }

  /** The bytes of source lists `tenant` holds on this instance. */
  bytesOf(tenant: string): number {
    return this.entries.bytesOf(tenant);
  }

  /** The type's sourcing, or undefined for a type whose tools are all in their documents. */
  sourcing(config: ServerToolConfig): ToolSourcing | undefined {
    return this.options.types.find(config.type)?.sourcing;
  }

  /**
   * The source tools of a tool document of `tenant`/`project`, identified by `documentKey` (its
   * layer, name and ETag): loaded when unknown, expired or changed, within `waitMs`.
   */
  async tools(
    tenant: string,
    project: string,
    documentKey: string,
    config: ServerToolConfig,
  ): Promise<SourcedTools> {
    return (await this.answer(tenant, project, documentKey, config)).sourced;
  }

  /**
   * `tools`, and what `derive` makes of them (a pack's sub-tools), kept on the source's entry
   * while the source answers the same `version`: derived once per answer, not per listing, and
   * gone with the entry. Not kept when the source has no entry (no sourcing, or it cannot be opened).
   */
  async expanded<T>(
    tenant: string,
    project: string,
    documentKey: string,
    config: ServerToolConfig,
    derive: (sourced: SourcedTools) => SourceDerived<T>,
  ): Promise<SourcedTools & { readonly value: T }> {
    const { sourced, entry, key } = await this.answer(tenant, project, documentKey, config);
    // One document key has one type, so one `derive` and one T per entry.
    // Object.assign, not `{ ...sourced, value }`: a spread then a new property costs V8 ~1 µs a call.
    if (entry?.derived?.version === sourced.version)
      return Object.assign({}, sourced, { value: entry.derived.value as T });
    const derived = derive(sourced);
    if (entry) {
      entry.derived = { version: sourced.version, value: derived.value, bytes: derived.bytes };
      // Accounted with what it derived now (if it is still kept).
      if (this.entries.peek(tenant, key) === entry) this.entries.set(tenant, key, entry);
    }
    return { ...sourced, value: derived.value };
  }

  private async answer(
    tenant: string,
    project: string,
    documentKey: string,
    config: ServerToolConfig,
  ): Promise<{ readonly sourced: SourcedTools; readonly entry: Entry | null; readonly key: string }> {
    const sourcing = this.sourcing(config);
    if (!sourcing) return { sourced: NO_SOURCE, entry: null, key: "" };
    let source: Awaited<ReturnType<ToolSourcing["open"]>>;
    try {
      source = await sourcing.open(config, config.parameters, this.options.context(tenant, project));
    } catch (error) {
      const problem = asVanceError(error, config.name);
      const version = `unopened\n${problem.code}\n${problem.message}`;
      return { sourced: { list: null, stale: false, problem, version }, entry: null, key: "" };
    }
    const key = `${documentKey}\n${source.key}`;
    let entry = this.entries.get(tenant, key);
    if (!entry) {
      entry = {
        list: null,
        bytes: 0,
        loadedAt: 0,
        failedAt: Number.NEGATIVE_INFINITY,
        problem: null,
        loading: null,
        revision: ++this.#revisions,
        derived: null,
      };
      this.entries.set(tenant, key, entry);
    }
    const now = this.now();
    const expired = !source.versioned && now - entry.loadedAt >= this.ttlMs;
    const due = entry.list === null || expired || entry.list.current?.() === false;
    // A versioned source fails the same way until its version changes (a spec too large or not
    // OpenAPI): it is tried again only after the TTL, not every retry pause.
    const retryMs = source.versioned ? Math.max(this.retryMs, this.ttlMs) : this.retryMs;
    if (due && !entry.loading && now - entry.failedAt >= retryMs) {
      const loading = entry;
      entry.loading = this.load(
        entry,
        () => source.load(AbortSignal.timeout(LOAD_LIMIT_MS)),
        config.name,
      ).then(() => {
        // Accounted at its list's bytes now (if it is still kept).
        if (this.entries.peek(tenant, key) === loading) this.entries.set(tenant, key, loading);
      });
    }
    if (due && entry.loading) await waitAtMost(entry.loading, this.waitMs);
    const current =
      entry.list !== null && !entry.loading && entry.problem === null && entry.list.current?.() !== false;
    const stale = entry.list !== null && !current;
    return {
      sourced: {
        list: entry.list,
        stale,
        problem: entry.problem,
        version: `${entry.revision}${stale ? "~" : ""}`,
      },
      entry,
      key,
    };
  }

  private async load(entry: Entry, load: () => Promise<SourceList>, name: string): Promise<void> {
    try {
      const list = await load();
      const bytes = list.bytes ?? sourceListBytes(list);
      const share = this.entries.tenantShareBytes;
      if (ENTRY_BYTES + bytes > share) {
        // Kept, it would take more than the tenant's share: refused like a failed load, so the
        // source is not read again on every listing (a versioned one only after the TTL).
        throw new VanceError(
          "source_unavailable",
          `the tool list of '${name}' takes about ${Math.ceil(bytes / MIB)} MiB, more than a tenant's share of the source cache (${Math.floor(share / MIB)} MiB; VANCE_CACHE_SOURCES_MB)`,
        );
      }
      // What the source offered but the type could not use (an operation without a usable schema …).
      if (list.notes?.length && list !== entry.list) {
        this.logger.info("tool.source_notes", { tool: name, notes: list.notes });
      }
      // A reload that answers what the last one did (the TTL passed, nothing changed upstream)
      // keeps the revision: what was derived from it, and the snapshots listing it, stay.
      if (entry.problem !== null || entry.list === null || !sameTools(entry.list, list))
        entry.revision = ++this.#revisions;
      entry.list = list;
      entry.bytes = bytes;
      entry.loadedAt = this.now();
      entry.problem = null;
    } catch (error) {
      entry.failedAt = this.now();
      const problem = asVanceError(error, name);
      if (entry.problem?.code !== problem.code || entry.problem.message !== problem.message)
        entry.revision = ++this.#revisions;
      entry.problem = problem;
      this.logger.warn("tool.source_unavailable", { tool: name, message: problem.message });
    } finally {
      entry.loading = null;
    }
  }
}

/** The answer of a document whose type has no source. */
const NO_SOURCE: SourcedTools = Object.freeze({ list: null, stale: false, problem: null, version: "none" });

/**
 * Whether two loads of a source answered the same tools and notes: compared as data, so a fresh
 * but equal list keeps what was derived from the last one (a value that is no plain data — a
 * function, a class instance — counts as changed).
 */
export function sameTools(a: SourceList, b: SourceList): boolean {
  return sameData(a.tools, b.tools) && sameData(a.notes ?? [], b.notes ?? []);
}

function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  for (const key of keys) if (!Object.hasOwn(right, key) || !sameData(left[key], right[key])) return false;
  return true;
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** An estimate of a source list's heap when its loader did not say: its tools' text, as UTF-16. */
export function sourceListBytes(list: SourceList): number {
  let bytes = 0;
  for (const tool of list.tools) {
    bytes +=
      stringBytes(tool.sourceName) +
      stringBytes(tool.description) +
      stringBytes(JSON.stringify(tool.inputSchema)) +
      // The schema's text, when the source keeps it beside the schema (`SourceTool.inputSchemaText`).
      (tool.inputSchemaText === undefined ? 0 : stringBytes(tool.inputSchemaText));
  }
  for (const note of list.notes ?? []) bytes += stringBytes(note);
  return bytes;
}

/** The source tool called `name` in `list`, if any. */
export function sourceToolNamed(list: SourceList | null, name: string): SourceTool | undefined {
  return list?.tools.find((tool) => tool.sourceName === name);
}

function asVanceError(error: unknown, name: string): VanceError {
  if (error instanceof VanceError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new VanceError("source_unavailable", `the source of '${name}' could not be read: ${message}`);
}

async function waitAtMost(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
