/** What a run printed with `console`: its last lines, and how many it printed in all. */
export interface ScriptLogs {
  readonly lines: readonly string[];
  readonly total: number;
}

/**
 * How much of a run's `console` output is kept: the last `lines` lines, each cut at `lineChars`
 * characters. The first `posted` lines also reach the main thread as they are printed, so a run
 * whose thread is terminated (a regex that ignores the deadline) still shows what it printed.
 */
export const LOG_LIMITS = Object.freeze({ lines: 50, lineChars: 500, posted: 1_000 });

/** The last lines of a run's output, in a ring of `LOG_LIMITS.lines`. */
export class LogTail {
  private readonly ring: string[] = [];
  private next = 0;
  /** Lines added in all, kept or not. */
  total = 0;

  /** Adds a line; answers it as kept (cut at `LOG_LIMITS.lineChars`). */
  add(line: string): string {
    const kept = line.length > LOG_LIMITS.lineChars ? `${line.slice(0, LOG_LIMITS.lineChars - 1)}…` : line;
    if (this.ring.length < LOG_LIMITS.lines) this.ring.push(kept);
    else this.ring[this.next] = kept;
    this.next = (this.next + 1) % LOG_LIMITS.lines;
    this.total += 1;
    return kept;
  }

  snapshot(): ScriptLogs {
    const lines =
      this.ring.length < LOG_LIMITS.lines
        ? [...this.ring]
        : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return { lines, total: this.total };
  }
}
