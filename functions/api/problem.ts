import { StoreUnavailableError, VanceError } from "@vance/core";
import { BearerError } from "./identity/challenge";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** Seconds a client should wait before retrying a 503: outages are noticed per request, so soon. */
const RETRY_AFTER_SECONDS = "1";

/** The one place that turns failures into RFC 9457 problem+json answers. */
export function problemResponse(error: unknown, log: (fields: Record<string, unknown>) => void): Response {
  const vance =
    error instanceof VanceError ? error : new VanceError("internal_error", "the service failed unexpectedly");
  if (error instanceof StoreUnavailableError) {
    log({ event: "http.store_unavailable", store: error.store, reason: error.reason });
  } else if (!(error instanceof VanceError)) {
    log({
      event: "http.unhandled_error",
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
  const body = {
    type: `urn:vance:problem:${vance.code}`,
    title: TITLES[vance.status] ?? "Error",
    status: vance.status,
    detail: vance.message,
    code: vance.code,
    ...(vance.errors.length > 0 ? { errors: vance.errors } : {}),
    ...vance.extra,
  };
  // A quota names when its window opens again; an outage is retried soon.
  const retryAfter =
    typeof vance.extra.retryAfterSeconds === "number"
      ? String(vance.extra.retryAfterSeconds)
      : vance.status === 503
        ? RETRY_AFTER_SECONDS
        : undefined;
  return new Response(JSON.stringify(body), {
    status: vance.status,
    headers: {
      "content-type": "application/problem+json",
      ...(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
      // RFC 6750 §3: a 401 names the scheme that would have worked, a bearer refusal also why
      // and where the resource's metadata is (MCP clients read it to find the issuer).
      ...(vance instanceof BearerError
        ? { "www-authenticate": vance.challenge }
        : vance.status === 401
          ? { "www-authenticate": "Bearer" }
          : {}),
    },
  });
}
