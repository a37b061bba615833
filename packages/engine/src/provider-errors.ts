/** A provider's HTTP rejection: its status and everything it said, as one text. */
export interface ProviderRejection {
  readonly status: number;
  readonly text: string;
}

/**
 * What a provider answered when it was not a success, for request builders that send with plain
 * `fetch` (`sendJson`). SDK errors (OpenAI, Anthropic, the AI SDK's `APICallError`) need no wrapping.
 */
export class ProviderHttpError extends Error {
  override readonly name = "ProviderHttpError";

  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the provider answered HTTP ${status}: ${body.slice(0, 500)}`);
  }
}

/** The most a rejection's text is reported with: the limit is named in its first lines. */
const MAX_TEXT = 8192;

const textOf = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
};

/**
 * The status and text of a provider's rejection, read from the error shapes of the SDKs: the
 * OpenAI and Anthropic SDKs' `APIError` (`status`, `error`, `message`), the AI SDK's `APICallError`
 * (`statusCode`, `responseBody`), {@link ProviderHttpError}, and anything with a numeric
 * `status` (causes are followed: a wrapper's `cause` may carry it). `undefined` for other errors.
 */
export function providerRejection(error: unknown): ProviderRejection | undefined {
  for (
    let current = error, depth = 0;
    depth < 4 && typeof current === "object" && current !== null;
    depth++
  ) {
    const record = current as Record<string, unknown>;
    const status = typeof record.statusCode === "number" ? record.statusCode : record.status;
    if (typeof status === "number") {
      const parts = [record.message, record.responseBody, record.body, record.error]
        .map(textOf)
        .filter((part): part is string => part !== undefined && part !== "");
      return { status, text: [...new Set(parts)].join("\n").slice(0, MAX_TEXT) };
    }
    current = record.cause;
  }
  return undefined;
}

/**
 * Whether a rejection may be the endpoint's tools-array limit (spec §14): a 400 (or a gateway's
 * 413/422) whose text speaks of the tools (or legacy functions) array. Only these are reported
 * to `observed-limits`, which reads the number itself and says when the text names none.
 */
export function mayBeToolLimit(rejection: ProviderRejection): boolean {
  return (
    (rejection.status === 400 || rejection.status === 413 || rejection.status === 422) &&
    /\b(tools|functions)\b/i.test(rejection.text)
  );
}
