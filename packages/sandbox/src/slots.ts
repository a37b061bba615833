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
    const now = this.answerNow(request);
    return now === undefined ? this.wait(request) : Promise.resolve(now);
  }

  /**
   * {@link acquire}'s answer when it needs no wait (a free slot, or a refusal), else undefined:
   * the caller then waits with `wait`. Taking a free slot this way makes no promise.
   */
  answerNow(request: SlotRequest): (() => void) | SlotRefusal | undefined {
    if (request.signal?.aborted) return "cancelled";
    if (this.held < this.limit) {
      this.held += 1;
      return this.releaser();
    }
    if (!request.wait || this.queue.length >= this.maxQueued) return "busy";
    return undefined;
  }

  /** Waits in the queue for a slot: {@link acquire}'s answer after `answerNow` answered undefined. */
  wait(request: SlotRequest): Promise<(() => void) | SlotRefusal> {
    return new Promise((resolve) => {
      this.queue.push(new QueuedWaiter(this, request, resolve));
    });
  }

  /** Takes `waiter` out of the queue (it left: cancelled, or waited too long). */
  leave(waiter: Waiter): void {
    const index = this.queue.indexOf(waiter);
    if (index >= 0) this.queue.splice(index, 1);
  }

  /** Holders and waiters, for stats. */
  counts(): { held: number; queued: number } {
    return { held: this.held, queued: this.queue.length };
  }

  /** What releases one slot held (or passes it to the next waiter), once. */
  releaser(): () => void {
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

/**
 * One caller in a {@link Slots} queue: granted a slot, or leaving when its signal aborts or its
 * wait runs out. Its handlers are methods (it is the signal's listener; the timer is handed it),
 * not closures made per wait, which the bundles' `keepNames` renames one by one.
 */
class QueuedWaiter implements Waiter, EventListenerObject {
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    private readonly slots: Slots,
    private readonly request: SlotRequest,
    private readonly resolve: (answer: (() => void) | SlotRefusal) => void,
  ) {
    this.timer = setTimeout(waitedTooLong, request.waitMs, this);
    request.signal?.addEventListener("abort", this, { once: true });
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.leave("cancelled");
  }

  leave(answer: SlotRefusal): void {
    this.slots.leave(this);
    this.settle(answer);
  }

  grant(): void {
    this.settle(this.slots.releaser());
  }

  private settle(answer: (() => void) | SlotRefusal): void {
    clearTimeout(this.timer);
    this.request.signal?.removeEventListener("abort", this);
    this.resolve(answer);
  }
}

function waitedTooLong(waiter: QueuedWaiter): void {
  waiter.leave("busy");
}

/** A slot refused, and whose limit refused it (the tenant's, or the pool's threads). */
export interface Refused {
  readonly refused: SlotRefusal;
  readonly whose: string;
}

/** How a {@link TenantSlots} shares its threads. */
export interface TenantShares {
  /** Top-level runs of one tenant at once (nested runs hold none: they run under their root's). */
  readonly runsPerTenant: number;
  /** Top-level runs of one tenant waiting for a slot; beyond, `busy` at once. */
  readonly queuedPerTenant: number;
  /**
   * Threads one tenant holds at once, its nested runs included: its share of the pool, which
   * no nesting can exceed. Default: `runsPerTenant` (work that never nests).
   */
  readonly threadsPerTenant?: number;
  /** Threads of all tenants together. */
  readonly maxThreads: number;
  /** What a refusal of a thread names (`the sandbox`). */
  readonly pool: string;
}

/**
 * The fairness both worker pools keep: each tenant starts at most `runsPerTenant` top-level runs
 * with a queue of `queuedPerTenant`, holds at most `threadsPerTenant` threads whatever its runs
 * nest, and all tenants together at most `maxThreads` threads. A top-level run holds no thread
 * while it waits, so it may wait (up to its `waitMs`, for all three together); a nested run's
 * ancestors hold threads of the same share, so it never waits: waiting could deadlock a tenant
 * whose every thread is an ancestor waiting for a child.
 */
export class TenantSlots {
  private readonly runs = new Map<string, Slots>();
  private readonly shares = new Map<string, Slots>();
  private readonly threads: Slots;

  constructor(private readonly settings: TenantShares) {
    this.threads = new Slots(settings.maxThreads, Number.POSITIVE_INFINITY);
  }

  /**
   * Runs `work` holding one of the tenant's run slots (none for a `nested` run: it runs under its
   * root's), one thread of the tenant's share and one of the pool's; or answers why not.
   */
  async run<T>(
    tenant: string,
    request: SlotRequest & { readonly nested?: boolean },
    work: () => Promise<T>,
  ): Promise<T | Refused> {
    const nested = request.nested === true;
    const deadline = performance.now() + request.waitMs;
    // A slot free now is taken without an `await` (each costs a turn of the microtask queue).
    let releaseRun: (() => void) | SlotRefusal = releaseNothing;
    if (!nested) {
      const taken = take(this.slotsOf(this.runs, tenant, "runs"), nested, deadline, request.signal);
      releaseRun = taken instanceof Promise ? await taken : taken;
    }
    if (typeof releaseRun === "string") return { refused: releaseRun, whose: tenantNamed(tenant) };
    try {
      const share = take(this.slotsOf(this.shares, tenant, "share"), nested, deadline, request.signal);
      const releaseShare = share instanceof Promise ? await share : share;
      if (typeof releaseShare === "string") return { refused: releaseShare, whose: tenantNamed(tenant) };
      try {
        const thread = take(this.threads, nested, deadline, request.signal);
        const releaseThread = thread instanceof Promise ? await thread : thread;
        if (typeof releaseThread === "string") return { refused: releaseThread, whose: this.settings.pool };
        try {
          return await work();
        } finally {
          releaseThread();
        }
      } finally {
        releaseShare();
      }
    } finally {
      releaseRun();
    }
  }

  /** Runs waiting for a slot, across tenants. */
  queued(): number {
    let queued = this.threads.counts().queued;
    for (const slots of this.runs.values()) queued += slots.counts().queued;
    for (const slots of this.shares.values()) queued += slots.counts().queued;
    return queued;
  }

  /** Threads `tenant` holds now, its nested runs included. */
  held(tenant: string): number {
    return this.shares.get(tenant)?.counts().held ?? 0;
  }

  private slotsOf(map: Map<string, Slots>, tenant: string, kind: "runs" | "share"): Slots {
    let slots = map.get(tenant);
    if (!slots) {
      const { runsPerTenant, queuedPerTenant, threadsPerTenant = runsPerTenant } = this.settings;
      // Only top-level runs wait for the share, and they hold run slots: at most that many wait.
      slots =
        kind === "runs"
          ? new Slots(runsPerTenant, queuedPerTenant)
          : new Slots(threadsPerTenant, Number.POSITIVE_INFINITY);
      map.set(tenant, slots);
    }
    return slots;
  }
}

/**
 * One of a run's three slots, within what is left of its one wait for all three. A slot free now
 * is answered as it is (`await` of it costs one turn), not as a promise of it: most runs find
 * every slot free.
 */
function take(
  slots: Slots,
  nested: boolean,
  deadline: number,
  signal: AbortSignal | undefined,
): (() => void) | SlotRefusal | Promise<(() => void) | SlotRefusal> {
  const request: SlotRequest = { wait: !nested, waitMs: Math.max(0, deadline - performance.now()), signal };
  return slots.answerNow(request) ?? slots.wait(request);
}

function releaseNothing(): void {}

function tenantNamed(tenant: string): string {
  return `tenant '${tenant}'`;
}

/** Whether `run`'s answer is a refusal. */
export function isRefused(answer: unknown): answer is Refused {
  return typeof answer === "object" && answer !== null && "refused" in answer && "whose" in answer;
}
