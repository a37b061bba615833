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
  const controller = new AbortController();
  let callerEnded = false;
  const onCallerAbort = () => {
    callerEnded = true;
    controller.abort(caller.reason);
  };
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError")),
    timeoutMs,
  );
  if (caller.aborted) onCallerAbort();
  else caller.addEventListener("abort", onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    callerEnded: () => callerEnded,
    done: () => {
      clearTimeout(timer);
      caller.removeEventListener("abort", onCallerAbort);
    },
  };
}

/** `promise`, or a rejection with `signal.reason` as soon as `signal` aborts (at once when it already has). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
