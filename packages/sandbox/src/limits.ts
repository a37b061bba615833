/** Resource limits applied to every script run. */
export interface SandboxLimits {
  /** QuickJS heap limit for one run, in bytes. */
  memoryBytes: number;
  /** QuickJS stack limit, in bytes; at most {@link MAX_STACK_BYTES}. */
  maxStackBytes: number;
  /**
   * Statement budget: how many times QuickJS may poll the interrupt handler. It polls about
   * every 10 000 bytecode branches or calls, about 2 400 times per second of a tight loop here.
   */
  maxInterrupts: number;
}

/**
 * QuickJS's interpreter recurses on the native stack of the thread that runs it; each script
 * worker is started with a native stack sized from this limit, so QuickJS's own check trips first.
 */
export const MAX_STACK_BYTES = 4 * 1024 * 1024;

/**
 * Defaults: 32 MiB heap, 1 MiB stack (a 2,000-frame recursion fits), and a statement budget above what a tight loop reaches
 * within the 30 s maximum `timeoutMs`, so that the wall clock normally fires first.
 */
export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 32 * 1024 * 1024,
  maxStackBytes: 1024 * 1024,
  maxInterrupts: 100_000,
});

/**
 * Merges partial limits over a base and rejects values QuickJS cannot enforce safely.
 * Invalid limits are a programming error, so this throws a `RangeError`.
 */
export function resolveLimits(base: SandboxLimits, override?: Partial<SandboxLimits>): SandboxLimits {
  const limits = { ...base, ...override };
  if (!Number.isSafeInteger(limits.memoryBytes) || limits.memoryBytes < 1024 * 1024) {
    throw new RangeError(`memoryBytes must be an integer of at least 1 MiB, got ${limits.memoryBytes}`);
  }
  if (
    !Number.isSafeInteger(limits.maxStackBytes) ||
    limits.maxStackBytes < 16 * 1024 ||
    limits.maxStackBytes > MAX_STACK_BYTES
  ) {
    throw new RangeError(
      `maxStackBytes must be an integer between 16 KiB and ${MAX_STACK_BYTES} bytes, got ${limits.maxStackBytes}`,
    );
  }
  if (!Number.isSafeInteger(limits.maxInterrupts) || limits.maxInterrupts < 1) {
    throw new RangeError(`maxInterrupts must be a positive integer, got ${limits.maxInterrupts}`);
  }
  return limits;
}
