/**
 * Bounded, clearly reported failures of the AWS-backed stores (S3, DynamoDB): every request
 * of a client made by `createS3Client` / `createDynamoClient` gets per-attempt timeouts, a
 * bounded number of attempts and one total deadline, and a store that cannot be reached
 * surfaces as `StoreUnavailableError` (503 `store_unavailable`) instead of a transport error.
 * Nothing is cached about the outage: the next request simply tries again, so the service
 * recovers by itself when the store is back.
 */
import { StoreUnavailableError } from "@vance/core";

/** How long one store request may take, retries and backoff included, unless configured. */
export const DEFAULT_STORE_DEADLINE_MS = 3_000;
/** Attempts per request (the first one and two retries), as the SDK's standard mode. */
const MAX_ATTEMPTS = 3;
/** A TCP connect that takes longer is given up and retried; loopback and AWS connect in milliseconds. */
const MAX_CONNECT_MS = 1_000;

/** Client settings that bound each attempt, so a retry can still happen within the deadline. */
export function boundedClientConfig(deadlineMs: number) {
  return {
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: Math.min(MAX_CONNECT_MS, deadlineMs),
      // Per attempt: half the deadline leaves room for one retry of a stuck attempt. Without
      // throwOnRequestTimeout the SDK only logs a warning and keeps waiting.
      requestTimeout: Math.max(100, Math.ceil(deadlineMs / 2)),
      throwOnRequestTimeout: true,
    },
  };
}

/** The shape of the middleware stack's `add` this module uses (one step, untyped in- and output). */
interface InitializeStack {
  add(
    middleware: (
      next: (args: unknown) => Promise<unknown>,
      context: Record<string, unknown>,
    ) => (args: unknown) => Promise<unknown>,
    options: { step: "initialize"; name: string; priority: "high" },
  ): void;
}

/** The smithy context key under which the retry loop reads the request's abort signal. */
const SMITHY_CONTEXT = "__smithy_context";

/**
 * Adds the deadline and the error mapping to a client. Sits at the `initialize` step, outside
 * the retry loop, so the deadline covers every attempt and backoff; the deadline's signal is
 * handed to the retry loop (which stops retrying once it fires) through the smithy context.
 * An attempt in flight at the deadline ends by its own request timeout.
 */
export function addStoreFaultHandling(
  client: { readonly middlewareStack: object },
  store: string,
  deadlineMs: number,
): void {
  // Any SDK v3 client's stack; its typed overloads differ per client, the middleware does not.
  (client.middlewareStack as InitializeStack).add(
    (next, context) => async (args) => {
      const deadline = AbortSignal.timeout(deadlineMs);
      context[SMITHY_CONTEXT] ??= {};
      const smithy = context[SMITHY_CONTEXT] as { abortSignal?: AbortSignal };
      smithy.abortSignal =
        smithy.abortSignal === undefined ? deadline : AbortSignal.any([smithy.abortSignal, deadline]);
      let onDeadline = () => {};
      const expired = new Promise<never>((_, reject) => {
        onDeadline = () => reject(new StoreUnavailableError(store, `no answer within ${deadlineMs} ms`));
        deadline.addEventListener("abort", onDeadline, { once: true });
      });
      try {
        return await Promise.race([next(args), expired]);
      } catch (error) {
        throw asStoreFault(error, store, deadline.aborted);
      } finally {
        deadline.removeEventListener("abort", onDeadline);
      }
    },
    { step: "initialize", name: "vanceStoreFaults", priority: "high" },
  );
}

/**
 * `StoreUnavailableError` for failures that mean "the store is not there right now"
 * (connection refused or reset, DNS, timeouts, 5xx, throttling after the retries); anything
 * else — 404, 412, validation errors — is returned unchanged for the adapter to interpret.
 */
export function asStoreFault(error: unknown, store: string, deadlinePassed = false): unknown {
  if (error instanceof StoreUnavailableError) return error;
  if (deadlinePassed && nameOf(error) === "AbortError") {
    return new StoreUnavailableError(store, "no answer before the deadline");
  }
  const reason = unavailableReason(error, 0);
  return reason === null ? error : new StoreUnavailableError(store, reason);
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

const UNAVAILABLE_NAMES = new Set([
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "ServiceUnavailable",
  "SlowDown",
  "ThrottlingException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "InternalServerError",
]);

/** Why `error` means the store is unavailable, or `null`; looks through `cause` and `AggregateError`. */
function unavailableReason(error: unknown, depth: number): string | null {
  if (typeof error !== "object" || error === null || depth > 5) return null;
  const { code, name, $metadata, cause, errors } = error as {
    code?: unknown;
    name?: unknown;
    $metadata?: { httpStatusCode?: number };
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
  if (typeof name === "string" && UNAVAILABLE_NAMES.has(name)) return name;
  const status = $metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return `HTTP ${status}`;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const reason = unavailableReason(inner, depth + 1);
      if (reason !== null) return reason;
    }
  }
  return unavailableReason(cause, depth + 1);
}

function nameOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "name" in error
    ? String((error as { name: unknown }).name)
    : undefined;
}
