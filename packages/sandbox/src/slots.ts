/** Why a slot was not granted. */
export type SlotRefusal = "busy" | "cancelled";

/** How a caller asks for a slot. */
export interface SlotRequest {
  /** Nested runs never wait: a caller that holds a slot while waiting for one could deadlock. */
  readonly wait: boolean;
  /** Longest wait in the queue before the answer is `busy`. */
  readonly waitMs: number;
  readonly signal?: AbortSignal | undefined;
}

interface Waiter {
  grant(): void;
}

/**
 * A counting semaphore with a bounded FIFO queue: at most `limit` holders, at most `maxQueued`
 * waiters; a full queue, or a wait longer than asked for, answers `busy` at once.
 */
export class Slots {
  private held = 0;
  private readonly queue: Waiter[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxQueued: number,
  ) {}

  /** A release function once a slot is held, or why none was granted. */
  acquire(request: SlotRequest): Promise<(() => void) | SlotRefusal> {
    if (request.signal?.aborted) return Promise.resolve("cancelled");
    if (this.held < this.limit) {
      this.held += 1;
      return Promise.resolve(this.releaser());
    }
    if (!request.wait || this.queue.length >= this.maxQueued) return Promise.resolve("busy");
    return new Promise((resolve) => {
      const leave = (answer: SlotRefusal) => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      const onAbort = () => leave("cancelled");
      const timer = setTimeout(() => leave("busy"), request.waitMs);
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          request.signal?.removeEventListener("abort", onAbort);
          resolve(this.releaser());
        },
      };
      request.signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** Holders and waiters, for stats. */
  counts(): { held: number; queued: number } {
    return { held: this.held, queued: this.queue.length };
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // The slot passes straight to the next waiter: nobody can overtake the queue.
      if (next) next.grant();
      else this.held -= 1;
    };
  }
}
