/**
 * Expected failures of the domain. Each carries a stable `code` (part of the HTTP contract)
 * and the HTTP status it maps to; exactly one place (the API's error handler) turns them
 * into problem+json.
 */

/** One field-level problem, e.g. a schema violation at `parameters.timeoutMs` (line 7). */
export interface FieldError {
  readonly path: string;
  readonly message: string;
  readonly line?: number;
}

/**
 * Every problem `code` the service answers with (part of the HTTP contract, API.md "Errors"),
 * and the HTTP status each one maps to. A call site names the code; the status follows from it.
 */
export const ERROR_STATUS = {
  invalid_id: 400,
  invalid_model: 400,
  invalid_json: 400,
  invalid_body: 400,
  invalid_format: 400,
  invalid_precondition: 400,
  no_oauth_tokens: 400,
  session_required: 400,
  unauthenticated: 401,
  forbidden: 403,
  tool_not_allowed: 403,
  host_not_allowed: 403,
  origin_not_allowed: 403,
  not_found: 404,
  tool_not_found: 404,
  tool_disabled: 404,
  type_not_found: 404,
  document_not_found: 404,
  secret_not_found: 404,
  process_not_found: 404,
  session_not_found: 404,
  method_not_allowed: 405,
  path_conflict: 409,
  process_conflict: 409,
  session_conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  invalid_params: 422,
  invalid_document: 422,
  name_mismatch: 422,
  unknown_type: 422,
  reserved_name: 422,
  no_limit_in_error: 422,
  budget_floor_exceeded: 422,
  busy: 429,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
  start_failed: 500,
  source_unavailable: 502,
  issuer_unavailable: 503,
  store_unavailable: 503,
} as const satisfies Record<string, number>;

/** A stable machine-readable problem code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The codes answered with a second status in one documented situation, and that status; only
 * {@link VanceError.withStatus} picks it. `budget_floor_exceeded` is 422 at spawn (the request
 * names a chain that cannot hold the capability floor) and 409 on a manifest or a triage (a
 * limit learned after the spawn conflicts with the stored process). README, the OpenAPI
 * document, the engine and tests name the one code for both, so it is not split in two.
 */
export const ERROR_STATUS_OVERRIDES = {
  budget_floor_exceeded: 409,
} as const satisfies Partial<Record<ErrorCode, number>>;

/** A code that has a second status (see {@link ERROR_STATUS_OVERRIDES}). */
export type OverriddenErrorCode = keyof typeof ERROR_STATUS_OVERRIDES;

const ERROR_CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_STATUS));

/** Whether `value` is one of the service's problem codes (a stored or foreign value, say). */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && ERROR_CODES.has(value);
}

/** A domain failure with a stable machine-readable code; its HTTP status follows from the code. */
export class VanceError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors: readonly FieldError[] = [],
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "VanceError";
    this.status = ERROR_STATUS[code];
  }

  /** A failure answered with its code's documented second status ({@link ERROR_STATUS_OVERRIDES}). */
  static withStatus<C extends OverriddenErrorCode>(
    code: C,
    status: (typeof ERROR_STATUS_OVERRIDES)[C],
    message: string,
    errors: readonly FieldError[] = [],
    extra: Readonly<Record<string, unknown>> = {},
  ): VanceError {
    const error = new VanceError(code, message, errors, extra);
    // The one place a status is not the code's own: assigned once, before anyone sees the error.
    (error as { status: number }).status = status;
    return error;
  }
}

/** Shorthands for the codes API.md names, so call sites read like the contract. */
export const Errors = {
  invalidId: (what: string, value: string, reason?: string) =>
    new VanceError(
      "invalid_id",
      `${what} '${truncate(value)}' is not a valid id${reason === undefined ? "" : `: ${reason}`}`,
    ),
  toolNotFound: (name: string) => new VanceError("tool_not_found", `no tool named '${name}'`),
  toolDisabled: (name: string, layer: string) =>
    new VanceError("tool_disabled", `tool '${name}' is disabled in the ${layer} layer`, [], { layer }),
  documentNotFound: (path: string) => new VanceError("document_not_found", `no document at '${path}'`),
  secretNotFound: (name: string) => new VanceError("secret_not_found", `no secret named '${name}'`),
  validationFailed: (message: string, errors: readonly FieldError[]) =>
    new VanceError("validation_failed", message, errors),
  invalidDocument: (path: string, layer: string, cause: VanceError) =>
    new VanceError(
      "invalid_document",
      `the stored document '${path}' in the ${layer} layer is invalid: ${cause.message}`,
      cause.errors,
      { layer },
    ),
  nameMismatch: (fromPath: string, inDocument: string, line?: number) =>
    new VanceError(
      "name_mismatch",
      `the document names itself '${inDocument}' but is stored as '${fromPath}'`,
      [{ path: "name", message: `must equal '${fromPath}'`, ...(line === undefined ? {} : { line }) }],
    ),
  unknownType: (typeId: string, known: readonly string[], line?: number) =>
    new VanceError("unknown_type", `unknown tool type '${typeId}'; known types: ${known.join(", ")}`, [
      {
        path: "type",
        message: `must be one of ${known.join(", ")}`,
        ...(line === undefined ? {} : { line }),
      },
    ]),
  preconditionFailed: (detail: string) => new VanceError("precondition_failed", detail),
  /** No slot before the deadline: nothing ran; `retryAfterSeconds` is sent as `Retry-After`. */
  busy: (detail: string) => new VanceError("busy", detail, [], { retryAfterSeconds: 1 }),
  /** The tenant spent an allowance of time; it may try again in `retryAfterSeconds`. */
  rateLimited: (detail: string, retryAfterSeconds: number) =>
    new VanceError("rate_limited", detail, [], {
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
    }),
  pathConflict: (path: string) =>
    new VanceError(
      "path_conflict",
      `'${truncate(path)}' cannot be stored here: a document and a folder of this layer would share a name (a document on its path, or a folder at it)`,
    ),
} as const;

/**
 * A refusal as a calling tool sees it: the code as an error class (`tool_not_allowed` →
 * `ToolNotAllowed`), the style of every tool failure (`TimeoutError`, `HttpError`). The one
 * mapping for calls made from inside a tool — script sibling calls and `invoke_tool` alike.
 */
export function toolFailureOf(error: VanceError): { readonly error: string; readonly message: string } {
  const errorClass = error.code
    .split("_")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
  // A value has no `errors` field: the field errors a direct call lists go into the message, so a
  // program (or model) that called the tool through another one still sees which fields were wrong.
  const fields = error.errors.map((field) =>
    field.path ? `${field.path}: ${field.message}` : field.message,
  );
  return {
    error: errorClass,
    message: fields.length === 0 ? error.message : `${error.message}: ${fields.join("; ")}`,
  };
}

/**
 * The object store or the state store could not be reached, or did not answer in time. Adapters
 * throw it instead of the transport's error, so the API answers 503 `store_unavailable` at
 * once and the next request tries the store again.
 */
export class StoreUnavailableError extends VanceError {
  constructor(
    readonly store: string,
    readonly reason: string,
  ) {
    super("store_unavailable", `the ${store} is unavailable; try again shortly`);
    this.name = "StoreUnavailableError";
  }
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
