import { VanceError } from "../errors";
import type { ProcessStore } from "../ports/process-store";
import type { QuotaStore } from "../ports/quota-store";

/**
 * What one tenant may make the service store (issue 35): processes (an MCP session is one) per
 * hour and stored at once, and the bytes of its documents in all its layers together. Observed limits need no
 * quota of their own: one is stored only per (tenant, endpoint the catalog knows).
 */
export interface QuotaSettings {
  /** Processes a tenant may spawn in one clock hour (UTC), MCP sessions included. */
  readonly processesPerHour: number;
  /** Processes of a tenant stored at once (spawned and not deleted), MCP sessions' included. */
  readonly liveProcesses: number;
  /** The bytes (UTF-8) of a tenant's stored documents, every layer together. */
  readonly documentBytes: number;
}

export type QuotaName = keyof QuotaSettings;

export const DEFAULT_QUOTAS: QuotaSettings = {
  processesPerHour: 1000,
  liveProcesses: 10_000,
  documentBytes: 256 * 1024 * 1024,
};

/** The setting of each quota, named in its 429 so an operator knows what to raise. */
export const QUOTA_SETTINGS: Readonly<Record<QuotaName, string>> = {
  processesPerHour: "VANCE_QUOTA_PROCESSES_PER_HOUR",
  liveProcesses: "VANCE_QUOTA_LIVE_PROCESSES",
  documentBytes: "VANCE_QUOTA_DOCUMENT_MB",
};

const HOUR_MS = 60 * 60 * 1000;

/**
 * The per-tenant quotas over the state store's counters, checked where the capacity is handed
 * out (a spawn, a document write). Past one the caller gets 429 `quota_exceeded` naming it.
 */
export class TenantQuotas {
  readonly settings: QuotaSettings;
  /**
   * Per tenant, the earliest expiry among its live processes at its last recount: before then a
   * recount finds none expired (touches only move expiries later; ends give their place back
   * themselves), so a spawn refused meanwhile costs no second count. Forgotten past 10,000 tenants.
   */
  readonly #noExpiryBefore = new Map<string, number>();

  /**
   * @param processes where processes that expired idle are counted out of the live counter
   *   (`recountLiveProcesses`); without it only ends give a place back.
   */
  constructor(
    private readonly store: QuotaStore,
    settings: Partial<QuotaSettings> = {},
    private readonly now: () => number = () => Date.now(),
    private readonly processes?: Pick<ProcessStore, "countLiveProcesses">,
  ) {
    this.settings = { ...DEFAULT_QUOTAS, ...settings };
  }

  /**
   * Counts one process of `tenant`: one more stored, and one more in this hour; 429
   * `quota_exceeded` (nothing counted) when the tenant stores its quota of processes already or
   * spent the hour's. A process that is not stored after all is given back (`releaseProcess`).
   * At the live quota, the processes that expired idle are counted out first
   * (`recountLiveProcesses`).
   */
  async takeProcess(tenant: string): Promise<void> {
    const live = this.settings.liveProcesses;
    const taken =
      (await this.store.addToQuota(liveKey(tenant), 1, live)) ||
      ((await this.recountLiveProcesses(tenant)) && (await this.store.addToQuota(liveKey(tenant), 1, live)));
    if (!taken) {
      throw quotaExceeded(
        "liveProcesses",
        live,
        `tenant '${tenant}' has ${live} processes (MCP sessions included) that have not ended; end some (DELETE T/processes/{id}; an MCP session's id is its process's) before spawning more`,
      );
    }
    const limit = this.settings.processesPerHour;
    const windowStart = Math.floor(this.now() / HOUR_MS) * HOUR_MS;
    const end = windowStart + HOUR_MS;
    if (await this.store.addToQuota(`processes/${tenant}/${windowStart}`, 1, limit, end)) return;
    await this.releaseProcess(tenant);
    throw quotaExceeded(
      "processesPerHour",
      limit,
      `tenant '${tenant}' spawned ${limit} processes (MCP sessions included) this hour`,
      Math.max(1, Math.ceil((end - this.now()) / 1000)),
    );
  }

  /**
   * Takes the processes of `tenant` that expired idle out of its live counter: the store counts
   * the live ones, and the counter drops by what it counted beyond them. Answers whether it
   * dropped. A spawn between the count and the counter's read may be counted out with them (the
   * quota then lets that many more through once); a drop is never below the count. Skipped
   * while no live process can have expired since the last recount.
   */
  async recountLiveProcesses(tenant: string): Promise<boolean> {
    if (!this.processes) return false;
    const now = this.now();
    if ((this.#noExpiryBefore.get(tenant) ?? Number.NEGATIVE_INFINITY) > now) return false;
    const { live, nextExpiry } = await this.processes.countLiveProcesses(tenant, now);
    const counted = await this.store.getQuotaUsage(liveKey(tenant));
    if (this.#noExpiryBefore.size >= 10_000) this.#noExpiryBefore.clear();
    // With no expiry among them, a process spawned since may expire first: nothing is known.
    if (nextExpiry === null) this.#noExpiryBefore.delete(tenant);
    else this.#noExpiryBefore.set(tenant, nextExpiry);
    if (live >= counted) return false;
    await this.store.addToQuota(liveKey(tenant), live - counted, this.settings.liveProcesses);
    return true;
  }

  /** Gives back a process of `tenant` that ended (or was not stored after all): one fewer stored. */
  async releaseProcess(tenant: string): Promise<void> {
    await this.store.addToQuota(liveKey(tenant), -1, this.settings.liveProcesses);
  }

  /** The processes counted as stored for `tenant`. */
  liveProcessesOf(tenant: string): Promise<number> {
    return this.store.getQuotaUsage(liveKey(tenant));
  }

  /**
   * Grows `tenant`'s stored document bytes by `bytes` (≥ 0) before a write stores them; 429
   * `quota_exceeded` (nothing counted) when they would pass the quota.
   */
  async chargeDocumentBytes(tenant: string, bytes: number): Promise<void> {
    if (bytes <= 0) return;
    const limit = this.settings.documentBytes;
    if (await this.store.addToQuota(documentsKey(tenant), bytes, limit)) return;
    const used = await this.store.getQuotaUsage(documentsKey(tenant));
    throw quotaExceeded(
      "documentBytes",
      limit,
      `tenant '${tenant}' stores ${used} bytes of documents; ${bytes} more would pass its ${limit}`,
    );
  }

  /** Gives back bytes a write did not store after all, or a delete or smaller replacement freed. */
  async refundDocumentBytes(tenant: string, bytes: number): Promise<void> {
    if (bytes > 0) await this.store.addToQuota(documentsKey(tenant), -bytes, this.settings.documentBytes);
  }

  /** The bytes of documents counted for `tenant`. */
  documentBytesOf(tenant: string): Promise<number> {
    return this.store.getQuotaUsage(documentsKey(tenant));
  }
}

function liveKey(tenant: string): string {
  return `live-processes/${tenant}`;
}

function documentsKey(tenant: string): string {
  return `document-bytes/${tenant}`;
}

function quotaExceeded(
  quota: QuotaName,
  limit: number,
  detail: string,
  retryAfterSeconds?: number,
): VanceError {
  return new VanceError(
    "quota_exceeded",
    `${detail}: the quota '${quota}' (${QUOTA_SETTINGS[quota]}) is ${limit}`,
    [],
    {
      quota,
      limit,
      setting: QUOTA_SETTINGS[quota],
      ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
    },
  );
}
