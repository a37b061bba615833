/**
 * Starts a Lambda entry once per instance, at cold start. When that fails (a missing or bad
 * setting, a file missing from the bundle) the cause is logged as one JSON line and the entry
 * serves `failed(error)` instead: every event fails the same clear way, and logs why, rather
 * than Lambda retrying the start on each event or a half-built service failing later.
 */
export async function startFunction<H>(
  name: string,
  start: () => Promise<H> | H,
  failed: (error: Error, log: () => void) => H,
): Promise<H> {
  try {
    return await start();
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const log = () =>
      console.error(
        JSON.stringify({
          level: "ERROR",
          event: "function.start_failed",
          function: name,
          error: error.message,
        }),
      );
    log();
    return failed(error, log);
  }
}

/** A non-HTTP entry's stand-in after a failed start: each event logs the cause and rethrows it. */
export function failEveryEvent(error: Error, log: () => void): () => Promise<never> {
  return async () => {
    log();
    throw error;
  };
}
