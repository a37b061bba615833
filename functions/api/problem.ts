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

/** `Retry-After` of a 429 or 503: what the failure says (`retryAfterSeconds`: a quota's window, a share's wait), else soon. */
function retryAfter(error: VanceError): string {
  const seconds = error.extra.retryAfterSeconds;
  return typeof seconds === "number" && seconds > 0 ? String(Math.ceil(seconds)) : RETRY_AFTER_SECONDS;
}

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
  return new Response(JSON.stringify(body), {
    status: vance.status,
    headers: {
      "content-type": "application/problem+json",
      ...(vance.status === 503 || vance.status === 429 ? { "retry-after": retryAfter(vance) } : {}),
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
