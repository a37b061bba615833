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

  constructor(private readonly options: ToolSourcesOptions) {
    this.now = options.now ?? (() => Date.now());
    this.logger = options.logger ?? silentLogger;
    this.entries = new TenantByteCache<Entry>({
      maxBytes: options.maxBytes ?? DEFAULT_SOURCE_CACHE_BYTES,
      ...(options.tenantShare === undefined ? {} : { tenantShare: options.tenantShare }),
      sizeOf: (entry) => ENTRY_BYTES + entry.bytes,
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
    const sourcing = this.sourcing(config);
    if (!sourcing) return { list: null, stale: false, problem: null };
    let source: Awaited<ReturnType<ToolSourcing["open"]>>;
    try {
      source = await sourcing.open(config, config.parameters, this.options.context(tenant, project));
    } catch (error) {
      return { list: null, stale: false, problem: asVanceError(error, config.name) };
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
    return {
      list: entry.list,
      stale: entry.list !== null && !current,
      problem: entry.problem,
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
      entry.list = list;
      entry.bytes = bytes;
      entry.loadedAt = this.now();
      entry.problem = null;
    } catch (error) {
      entry.failedAt = this.now();
      entry.problem = asVanceError(error, name);
      this.logger.warn("tool.source_unavailable", { tool: name, message: entry.problem.message });
    } finally {
      entry.loading = null;
    }
  }
}

/** An estimate of a source list's heap when its loader did not say: its tools' text, as UTF-16. */
export function sourceListBytes(list: SourceList): number {
  let bytes = 0;
  for (const tool of list.tools) {
    bytes +=
      stringBytes(tool.sourceName) +
      stringBytes(tool.description) +
      stringBytes(JSON.stringify(tool.inputSchema));
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
