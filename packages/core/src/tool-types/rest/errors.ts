import type { ToolOutcome } from "../../calls/built-in-tool";
import { BLOCKED_ADDRESS_ERROR_NAME, RESPONSE_TOO_LARGE_ERROR_NAME } from "../../net/network-policy";

/** A `rest` call's failure, as the tool answers it. */
export type RestFailure = Extract<ToolOutcome, { error: string }>;

/** How much of an upstream error body an `HttpError` quotes. */
const ERROR_BODY_CHARS = 200;

/**
 * `HttpError` for a non-2xx answer or a redirect (never followed). `body` must already be
 * scrubbed: it is cut here, and a cut secret would no longer be recognised.
 */
export function httpError(response: Response, body: string): RestFailure {
  const status = response.status;
  const label = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}`;
  if (response.type === "opaqueredirect" || (status >= 300 && status <= 399)) {
    const location = response.headers.get("location");
    return {
      error: "HttpError",
      message: `${label}: redirects are not followed${location ? ` (Location: ${location})` : ""}`,
      status,
    };
  }
  return { error: "HttpError", message: `${label}: ${body.slice(0, ERROR_BODY_CHARS)}`, status };
}

/** What a failed `fetch` of `method host` was: a refused address, an oversized response or a network error. */
export function fetchError(error: unknown, method: string, host: string): RestFailure {
  if (error instanceof Error && error.name === BLOCKED_ADDRESS_ERROR_NAME) {
    return { error: "BlockedAddress", message: error.message };
  }
  if (error instanceof Error && error.name === RESPONSE_TOO_LARGE_ERROR_NAME) {
    return { error: "ResponseTooLarge", message: `${method} ${host}: ${error.message}` };
  }
  return { error: "NetworkError", message: `${method} ${host} failed: ${describeError(error)}` };
}

/** An error's message with its cause's, for a one-line tool error. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}
