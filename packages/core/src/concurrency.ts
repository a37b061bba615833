/** Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A signal that aborts at a deadline or when its caller's does; `done` detaches it from the caller. */
export interface CallerBoundSignal {
  readonly signal: AbortSignal;
  /** True when the caller's signal, not the deadline, ended it. */
  readonly callerEnded: () => boolean;
  readonly done: () => void;
}

/**
 * Bounds work by its own timeout and by its caller's signal. Unlike `AbortSignal.any`, it
 * leaves nothing attached to the caller's (often long-lived) signal once `done` is called.
 */
export function boundByCaller(caller: AbortSignal, timeoutMs: number): CallerBoundSignal {
  return new CallerBound(caller, timeoutMs);
}

/**
 * {@link boundByCaller}'s signal. Its handlers are methods, not named closures: the bundles'
 * `keepNames` renames every named closure with `Object.defineProperty` (~0.7 µs each), and every
 * MCP and REST call made several.
 */
class CallerBound implements CallerBoundSignal, EventListenerObject {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  readonly #timer: ReturnType<typeof setTimeout>;
  #callerEnded = false;

  constructor(caller: AbortSignal, timeoutMs: number) {
    this.#caller = caller;
    const controller = this.#controller;
    this.#timer = setTimeout(
      () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError")),
      timeoutMs,
    );
    if (caller.aborted) this.handleEvent();
    else caller.addEventListener("abort", this, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The caller's signal aborted. */
  handleEvent(): void {
    this.#callerEnded = true;
    this.#controller.abort(this.#caller.reason);
  }

  callerEnded(): boolean {
    return this.#callerEnded;
  }

  done(): void {
    clearTimeout(this.#timer);
    this.#caller.removeEventListener("abort", this);
  }
}

/** `promise`, or a rejection with `signal.reason` as soon as `signal` aborts (at once when it already has). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // A listener object, whose method `keepNames` leaves alone (see `CallerBound`).
    const onAbort = {
      handleEvent() {
        reject(signal.reason);
      },
    };
    if (signal.aborted) onAbort.handleEvent();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
