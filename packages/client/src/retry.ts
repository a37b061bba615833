/** When a request is sent again. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 3; 1 turns retries off). */
  readonly attempts?: number;
  /** The wait before a retry when the answer names no `Retry-After` (default 250 ms, doubled each time). */
  readonly baseDelayMs?: number;
  /** The longest wait before one retry, `Retry-After` included (default 5000 ms). */
  readonly maxDelayMs?: number;
  /** How to wait (tests count instead of sleeping). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * POST routes whose repetition changes nothing: a resolution, a report the service counts once
 * per `requestId`, and a limit that is learned again as the same number. Spawning and invoking
 * are never repeated: a second spawn is a second process, a second call a second side effect.
 */
const IDEMPOTENT_POSTS = [
  /\/recipes\/resolve$/,
  /\/diagnostics\/empty-response$/,
  /^\/v1\/models\/observed-limits$/,
];

const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Whether sending `request` twice has the effect of sending it once. */
export function isIdempotent(method: string, pathname: string): boolean {
  if (IDEMPOTENT_METHODS.has(method)) return true;
  return method === "POST" && IDEMPOTENT_POSTS.some((pattern) => pattern.test(pathname));
}

/**
 * Whether an answer is worth asking again: `busy` (429: the tenant's scripts were full and nothing
 * ran, so any request) and `store_unavailable` / a gateway's 502–504 (idempotent requests only).
 */
function retriable(status: number, idempotent: boolean): boolean {
  if (status === 429) return true;
  return idempotent && (status === 502 || status === 503 || status === 504);
}

/**
 * Whether a 429 says a quota is spent (`quota_exceeded`: processes per hour, live processes,
 * document bytes): asking again within seconds changes nothing, so the caller hears it at once.
 */
async function spentQuota(response: Response): Promise<boolean> {
  if (response.status !== 429) return false;
  try {
    const problem: unknown = await response.clone().json();
    return (
      typeof problem === "object" &&
      problem !== null &&
      "code" in problem &&
      problem.code === "quota_exceeded"
    );
  } catch {
    return false;
  }
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), if the answer names one. */
function retryAfterMs(response: Response, now: number): number | undefined {
  const value = response.headers.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `fetch` that retries where it is safe: idempotent requests after a network error, a 503 or a
 * gateway error, any request after 429 `busy` or `rate_limited` (never after `quota_exceeded`);
 * waits `Retry-After` (bounded) or a doubling delay.
 */
export function retryingFetch(
  fetchOnce: (request: Request) => Promise<Response>,
  policy: RetryPolicy = {},
): (request: Request) => Promise<Response> {
  const attempts = Math.max(1, policy.attempts ?? 3);
  const baseDelayMs = policy.baseDelayMs ?? 250;
  const maxDelayMs = policy.maxDelayMs ?? 5000;
  const sleep = policy.sleep ?? sleepFor;
  return async (request) => {
    const idempotent = isIdempotent(request.method, new URL(request.url).pathname);
    // The body can be read once: every attempt sends a copy of the untouched original.
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      let response: Response;
      try {
        response = await fetchOnce(last ? request : request.clone());
      } catch (error) {
        if (last || !idempotent || request.signal.aborted) throw error;
        await sleep(delay);
        continue;
      }
      if (last || !retriable(response.status, idempotent) || (await spentQuota(response))) return response;
      const wait = Math.min(maxDelayMs, retryAfterMs(response, Date.now()) ?? delay);
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}
