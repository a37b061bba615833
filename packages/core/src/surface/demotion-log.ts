import { CountedLru } from "../cache/counted-lru";
import { StoreUnavailableError } from "../errors";
import type { FireOnceStore } from "../ports/fire-once-store";
import type { Logger } from "../ports/logger";
import type { ProcessKey } from "../ports/process-store";
import type { TriageResult } from "./tool-triage";

/**
 * How long an outcome counts as logged. A process whose demotions stand for longer gets the line
 * again once a day: a reminder in the logs, not one line per turn.
 */
export const DEMOTION_LOG_TTL_SECONDS = 86_400;

/** Outcomes an instance remembers; one more costs one `markOnce` request, never a second line. */
const REMEMBERED_OUTCOMES = 10_000;

/** One manifest's demotions: what the budget allowed and which families it moved. */
export interface DemotionOutcome {
  readonly maxTools: number | null;
  readonly limit: number | null;
  readonly demoted: number;
  readonly families: TriageResult["demotedUnits"];
  /** Every demoted tool's name, in demotion order: the TRACE line's. */
  readonly tools: readonly string[];
  /**
   * The outcome's key ({@link demotionOutcomeKey}), when the caller keeps it: the surface computes
   * it once per classification and keeps it on the classification's memo — the outcome's text
   * runs to hundreds of families at 5,000 tools, the same every turn that changed nothing, and
   * writing and hashing it again on every turn was a fifth of a warm manifest's own work.
   * Computed here without it.
   */
  readonly key?: string;
}

export interface DemotionLogOptions {
  readonly logger: Logger;
  /** Shares the logged outcomes between instances; without it each instance logs on its own. */
  readonly state?: FireOnceStore;
  readonly ttlSeconds?: number;
}

/**
 * The `budget.demoted` INFO line (spec §14.3: every demotion is logged, with families and
 * counts) and its TRACE line `budget.demoted.tools` (every tool's name, in demotion order),
 * written once per process and outcome instead of every turn: an engine asks for the
 * manifest every turn, and the same cut each time says nothing new. A changed outcome (an
 * activation, a new limit, another skill) is logged again.
 *
 * Across instances a `markOnce` marker (process + a hash of the outcome) decides who writes the
 * line. Each instance remembers the outcomes it has seen, so a warm instance costs no request for
 * a known outcome: the state store is asked only when an outcome is new to this instance.
 */
export class DemotionLog {
  private readonly seen: CountedLru<string, true>;
  private readonly ttlSeconds: number;

  constructor(private readonly options: DemotionLogOptions) {
    this.ttlSeconds = options.ttlSeconds ?? DEMOTION_LOG_TTL_SECONDS;
    // A day's TTL needs no millisecond clock: refreshed once a second, not a timer every few turns.
    this.seen = new CountedLru({
      max: REMEMBERED_OUTCOMES,
      ttl: this.ttlSeconds * 1000,
      ttlResolution: 1000,
    });
  }

  /** Logs `outcome` for the process unless this process's same outcome was logged already. */
  async record(process: ProcessKey, outcome: DemotionOutcome): Promise<void> {
    const outcomeKey = outcome.key ?? demotionOutcomeKey(outcome);
    const key = `${process.tenant}/${process.project}/${process.processId}/${outcomeKey}`;
    if (this.seen.has(key)) return;
    // Remembered before the request: a concurrent manifest of the same outcome asks no second time.
    this.seen.set(key, true);
    const marker = `budget.demoted/${key}`;
    let first: boolean;
    try {
      first = this.options.state ? await this.options.state.markOnce(marker, this.ttlSeconds) : true;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      // A log gate must not fail the manifest: without an answer, a second line beats a lost one.
      this.seen.delete(key);
      first = true;
    }
    if (!first) return;
    this.options.logger.info("budget.demoted", {
      processId: process.processId,
      maxTools: outcome.maxTools,
      limit: outcome.limit,
      demoted: outcome.demoted,
      families: outcome.families,
    });
    this.options.logger.trace?.("budget.demoted.tools", {
      processId: process.processId,
      tools: outcome.tools,
    });
  }
}

/** The demoted families as one line, e.g. `pack gmail 20, pack jira 15` (after `128/127: `). */
export function demotedFamiliesLine(families: DemotionOutcome["families"]): string {
  return families.map((unit) => `${unit.triageClass} ${unit.family} ${unit.tools}`).join(", ");
}

/**
 * An outcome's key: a hash of what its line says — the budget and the demoted families, e.g.
 * `128/127: pack gmail 20, pack jira 15` —, so equal outcomes have equal keys (the marker's
 * last segment, as before).
 */
export function demotionOutcomeKey(
  outcome: Pick<DemotionOutcome, "maxTools" | "limit" | "families">,
): string {
  return hash(`${outcome.maxTools}/${outcome.limit}: ${demotedFamiliesLine(outcome.families)}`);
}

/** cyrb53 (a 53-bit string hash, public domain), base 36: a short marker for a long outcome. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
