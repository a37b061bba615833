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

/** A domain failure with a stable machine-readable code. */
export class VanceError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly errors: readonly FieldError[] = [],
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "VanceError";
  }
}

/** Shorthands for the codes API.md names, so call sites read like the contract. */
export const Errors = {
  invalidId: (what: string, value: string, reason?: string) =>
    new VanceError(
      "invalid_id",
      400,
      `${what} '${truncate(value)}' is not a valid id${reason === undefined ? "" : `: ${reason}`}`,
    ),
  toolNotFound: (name: string) => new VanceError("tool_not_found", 404, `no tool named '${name}'`),
  toolDisabled: (name: string, layer: string) =>
    new VanceError("tool_disabled", 404, `tool '${name}' is disabled in the ${layer} layer`, [], { layer }),
  documentNotFound: (path: string) => new VanceError("document_not_found", 404, `no document at '${path}'`),
  secretNotFound: (name: string) => new VanceError("secret_not_found", 404, `no secret named '${name}'`),
  validationFailed: (message: string, errors: readonly FieldError[]) =>
    new VanceError("validation_failed", 422, message, errors),
  invalidDocument: (path: string, layer: string, cause: VanceError) =>
    new VanceError(
      "invalid_document",
      422,
      `the stored document '${path}' in the ${layer} layer is invalid: ${cause.message}`,
      cause.errors,
      { layer },
    ),
  nameMismatch: (fromPath: string, inDocument: string, line?: number) =>
    new VanceError(
      "name_mismatch",
      422,
      `the document names itself '${inDocument}' but is stored as '${fromPath}'`,
      [{ path: "name", message: `must equal '${fromPath}'`, ...(line === undefined ? {} : { line }) }],
    ),
  unknownType: (typeId: string, known: readonly string[], line?: number) =>
    new VanceError("unknown_type", 422, `unknown tool type '${typeId}'; known types: ${known.join(", ")}`, [
      {
        path: "type",
        message: `must be one of ${known.join(", ")}`,
        ...(line === undefined ? {} : { line }),
      },
    ]),
  preconditionFailed: (detail: string) => new VanceError("precondition_failed", 412, detail),
  busy: (detail: string) => new VanceError("busy", 429, detail),
  pathConflict: (path: string) =>
    new VanceError(
      "path_conflict",
      409,
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
  return { error: errorClass, message: error.message };
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
    super("store_unavailable", 503, `the ${store} is unavailable; try again shortly`);
    this.name = "StoreUnavailableError";
  }
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}
