import { write } from "node:fs";

/** Bytes a pipe takes in one piece (POSIX's minimum; Linux's value). */
const PIPE_BUF = 4096;

/**
 * How long a line waits for others to go out with it. One write per request — a job for the
 * thread pool, a system call, the reader woken — cost the MCP `tools/call` route more CPU than its
 * log line itself (issue 39); lines of the next few milliseconds share one write instead.
 */
export const LOG_LINGER_MS = 25;

/**
 * Log lines for a file descriptor (the local server's stdout or stderr when it is a pipe), written
 * from libuv's thread pool rather than on the thread that serves requests. A pipe's writes are
 * synchronous in Node: one line per request, each a system call, and a reader that lags (a log
 * shipper, a test runner on a loaded machine) stops the serving thread until it has read. Here the
 * lines of {@link LOG_LINGER_MS} (or a pipe's piece, whichever fills first) go out together, one
 * write at a time, in order; when the reader lags, at most `maxPendingBytes` wait, and lines
 * beyond are dropped and counted in a `log.dropped` line once the writes catch up.
 */
export class AsyncLineSink {
  private pending: string[] = [];
  private pendingBytes = 0;
  private dropped = 0;
  private writing = false;
  /** The pump waiting for more lines (`lingerMs`), or for the next turn (a pipe's piece is queued). */
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly fd: number,
    private readonly maxPendingBytes = 4 * 1024 * 1024,
    private readonly lingerMs = LOG_LINGER_MS,
  ) {}

  /** Queues one line (without its newline): written within `lingerMs`, never on the caller's turn. */
  write(line: string): void {
    if (this.pendingBytes >= this.maxPendingBytes) {
      this.dropped += 1;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length + 1;
    // A write under way sends what is queued meanwhile as soon as it is done.
    if (this.writing || this.immediate !== undefined) return;
    if (this.pendingBytes >= PIPE_BUF) {
      // A pipe's piece is waiting: nothing to wait for.
      this.cancelTimer();
      this.immediate = setImmediate(() => this.pumpNow());
    } else this.linger();
  }

  /** Runs the pump `lingerMs` from the first line waiting, unless it is due already. */
  private linger(): void {
    // Unreferenced: a server that stops calls `settled`, which writes what waits at once.
    this.timer ??= setTimeout(() => this.pumpNow(), this.lingerMs).unref();
  }

  /** Resolves once every line queued so far is written, or after `timeoutMs` (a reader that is gone). */
  settled(timeoutMs: number): Promise<void> {
    if (!this.writing && (this.timer !== undefined || this.immediate !== undefined)) this.pumpNow();
    if (!this.writing && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Runs the pump now, whatever was waiting to run it. */
  private pumpNow(): void {
    this.cancelTimer();
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.immediate = undefined;
    this.pump();
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private pump(): void {
    if (this.writing) return;
    if (this.dropped > 0) {
      this.pending.push(JSON.stringify({ level: "WARN", event: "log.dropped", lines: this.dropped }));
      this.dropped = 0;
    }
    if (this.pending.length === 0) {
      for (const done of this.idle.splice(0)) done();
      return;
    }
    // Whole lines up to PIPE_BUF per write: the kernel writes each in one piece, so a line never
    // interleaves with what another writer (console.log) sends meanwhile.
    let bytes = 0;
    let count = 0;
    for (const line of this.pending) {
      const next = Buffer.byteLength(line) + 1;
      if (count > 0 && bytes + next > PIPE_BUF) break;
      bytes += next;
      count += 1;
    }
    const lines = this.pending.splice(0, count);
    for (const line of lines) this.pendingBytes -= line.length + 1;
    this.writing = true;
    this.writeAll(Buffer.from(`${lines.join("\n")}\n`));
  }

  private writeAll(buffer: Buffer): void {
    write(this.fd, buffer, 0, buffer.length, null, (error, written) => {
      if (error?.code === "EAGAIN") {
        // A descriptor in non-blocking mode whose pipe is full: try again shortly.
        setTimeout(() => this.writeAll(buffer), 10).unref();
        return;
      }
      if (!error && written < buffer.length) return this.writeAll(buffer.subarray(written));
      // Written, or the reader is gone (EPIPE): nothing more to do with these lines. What came
      // meanwhile waits as a new line would (a write lasts about as long as a request here: going
      // on at once would make one write per request again), unless it fills a piece or a stop waits.
      this.writing = false;
      if (this.pending.length === 0 || this.pendingBytes >= PIPE_BUF || this.idle.length > 0) this.pump();
      else this.linger();
    });
  }
}
