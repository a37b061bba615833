import { StoreUnavailableError } from "../errors";
import type { FireOnceStore } from "../ports/fire-once-store";
import type { Logger } from "../ports/logger";
import type { HttpFetch } from "../ports/tool-runtime";
import type { PhantomCandidate, PhantomReport, PhantomSink } from "./empty-response";

/** The longest a post may take before it is given up (and logged). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5_000;

export interface DiagnosticWebhookOptions {
  /** Where phantoms are posted (a setting of the platform, not of a tenant). */
  readonly url: string;
  readonly fetch: HttpFetch;
  /** The dedup gate, shared by every instance. */
  readonly state: FireOnceStore;
  /** The same tenant and candidate are posted at most once within this window. */
  readonly windowSeconds: number;
  readonly logger: Logger;
  readonly timeoutMs?: number;
  /** Epoch milliseconds. */
  readonly now?: () => number;
}

/**
 * The phantom sink (spec §13.2 "Fook only for the phantom and through a dedup gate"): a JSON
 * post to a webhook, at most once per tenant and candidate within the window (`markOnce`, so
 * across instances). It runs beside the answer: `notify` never waits and never throws; a failed
 * post is one WARN `llm.diagnostic_sink_failed`.
 */
export class DiagnosticWebhook implements PhantomSink {
  readonly #pending = new Set<Promise<void>>();
  readonly #now: () => number;

  constructor(private readonly options: DiagnosticWebhookOptions) {
    this.#now = options.now ?? (() => Date.now());
  }

  /** Starts the gate and the post in the background. */
  notify(report: PhantomReport): void {
    const task = this.#deliver(report).catch((error: unknown) => {
      this.options.logger.warn("llm.diagnostic_sink_failed", {
        tenant: report.tenant,
        requestId: report.requestId,
        error: error instanceof Error ? error.message : String(error),
      });
    });
    this.#pending.add(task);
    void task.finally(() => this.#pending.delete(task));
  }

  /** Resolves once every post started so far has finished: for tests and a graceful stop. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async #deliver(report: PhantomReport): Promise<void> {
    const fresh: PhantomCandidate[] = [];
    for (const candidate of report.candidates) {
      const marker = `llm.diagnostic.sink/${report.tenant}/${candidate.name}`;
      let first: boolean;
      try {
        first = await this.options.state.markOnce(marker, this.options.windowSeconds);
      } catch (error) {
        // Without the gate's answer a second post beats a lost one.
        if (!(error instanceof StoreUnavailableError)) throw error;
        first = true;
      }
      if (first) fresh.push(candidate);
    }
    if (fresh.length === 0) return;
    const response = await this.options.fetch(this.options.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        event: "llm.diagnostic",
        kind: "phantom",
        tenant: report.tenant,
        project: report.project,
        requestId: report.requestId,
        candidates: fresh,
        at: new Date(this.#now()).toISOString(),
      }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS),
    });
    // The body is not needed; reading it frees the connection.
    await response.text();
    if (!response.ok) throw new Error(`the webhook answered HTTP ${response.status}`);
  }
}
