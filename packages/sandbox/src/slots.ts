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

/** A slot refused, and whose limit refused it (the tenant's, or the pool's threads). */
export interface Refused {
  readonly refused: SlotRefusal;
  readonly whose: string;
}

/**
 * The fairness both worker pools keep: each tenant holds at most `perTenant` slots with a queue
 * of `queuedPerTenant`, and all of them together at most `threads` threads.
 */
export class TenantSlots {
  private readonly tenants = new Map<string, Slots>();
  private readonly threads: Slots;

  constructor(
    private readonly perTenant: number,
    private readonly queuedPerTenant: number,
    maxThreads: number,
    /** What a refusal of a thread names (`the sandbox`). */
    private readonly pool: string,
  ) {
    this.threads = new Slots(maxThreads, Number.POSITIVE_INFINITY);
  }

  /**
   * Runs `work` holding one of the tenant's slots (none for a `nested` run: its caller holds one)
   * and one thread; or answers why none was granted.
   */
  async run<T>(
    tenant: string,
    request: SlotRequest & { readonly nested?: boolean },
    work: () => Promise<T>,
  ): Promise<T | Refused> {
    const releaseTenant = request.nested ? () => undefined : await this.slotsOf(tenant).acquire(request);
    if (typeof releaseTenant === "string") return { refused: releaseTenant, whose: `tenant '${tenant}'` };
    try {
      const releaseThread = await this.threads.acquire(request);
      if (typeof releaseThread === "string") return { refused: releaseThread, whose: this.pool };
      try {
        return await work();
      } finally {
        releaseThread();
      }
    } finally {
      releaseTenant();
    }
  }

  /** Runs waiting for a slot, across tenants. */
  queued(): number {
    let queued = this.threads.counts().queued;
    for (const slots of this.tenants.values()) queued += slots.counts().queued;
    return queued;
  }

  private slotsOf(tenant: string): Slots {
    let slots = this.tenants.get(tenant);
    if (!slots) {
      slots = new Slots(this.perTenant, this.queuedPerTenant);
      this.tenants.set(tenant, slots);
    }
    return slots;
  }
}

/** Whether `run`'s answer is a refusal. */
export function isRefused(answer: unknown): answer is Refused {
  return typeof answer === "object" && answer !== null && "refused" in answer && "whose" in answer;
}
