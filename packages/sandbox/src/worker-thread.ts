import type { Worker } from "node:worker_threads";
import type { Logger } from "@vance/core";
import type { ThreadPriority } from "./thread-priority";

let priorityReported = false;

/**
 * Logs, once per process, that a worker thread could not lower its CPU priority (an unsupported
 * platform, a sandbox that forbids it): the server still works, its serving thread just competes
 * with scripts and parses as an equal.
 */
export function reportPriority(priority: ThreadPriority | undefined, logger: Logger | undefined): void {
  if (!priority?.problem || priorityReported) return;
  priorityReported = true;
  logger?.warn("sandbox.worker_priority_unchanged", { nice: priority.nice, reason: priority.problem });
}

/**
 * One worker thread's life, as both pools keep it: its messages go to one listener at a time, it
 * is ready once it says so, and its end (terminated, crashed or exited) is reported once.
 */
export class WorkerThread<M extends { readonly kind: string; readonly priority?: ThreadPriority }> {
  /** False once terminated or crashed: it takes no more work. */
  alive = true;
  protected onMessage: ((message: M) => void) | undefined;
  protected onExit: ((reason: string) => void) | undefined;

  constructor(
    protected readonly thread: Worker,
    /** What the reasons call it ("the sandbox thread"). */
    what: string,
  ) {
    thread.on("message", (message: M) => this.onMessage?.(message));
    thread.on("error", (error) => this.died(`${what} failed: ${error.message}`));
    thread.on("exit", (code) => this.died(`${what} exited (code ${code})`));
  }

  /**
   * Resolves with the thread's priority once it posted `{ kind: "ready" }`; rejects if it ended
   * before.
   */
  protected ready(): Promise<ThreadPriority | undefined> {
    return new Promise((resolve, reject) => {
      this.onMessage = (message) => {
        if (message.kind !== "ready") return;
        this.onMessage = undefined;
        this.onExit = undefined;
        // An idle thread must not keep the process alive; a starting or running one does.
        this.thread.unref();
        resolve(message.priority);
      };
      this.onExit = (reason) => reject(new Error(reason));
    });
  }

  /** Stops the thread at once, whatever it is doing. */
  terminate(): void {
    if (!this.alive) return;
    this.alive = false;
    void this.thread.terminate();
  }

  private died(reason: string): void {
    const wasAlive = this.alive;
    this.alive = false;
    if (wasAlive) this.onExit?.(reason);
  }
}
