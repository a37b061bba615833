import { VanceError } from "@vance/core";

/** RFC 6750 §3.1 error codes: the token is bad (401), or good but not enough for the route (403). */
export type BearerErrorCode = "invalid_token" | "insufficient_scope";

/** What a challenge points the client at (RFC 9728 §5.1): its resource's metadata and the scope to ask for. */
export interface ChallengeContext {
  readonly resourceMetadata: string;
  readonly scope?: string | undefined;
}

/** A quoted auth-param value holds printable ASCII but `"` and `\` (RFC 6750 §3). */
const quoted = (value: string) => `"${value.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "?")}"`;

/**
 * A 401 `unauthenticated` or 403 `forbidden` of the bearer scheme; its `WWW-Authenticate`
 * challenge carries the RFC 6750 `error` and `error_description`, the scope a 403 needs, and
 * where the resource's metadata is, so MCP clients can show the reason and find the issuer.
 */
export class BearerError extends VanceError {
  constructor(
    status: 401 | 403,
    detail: string,
    readonly error: BearerErrorCode | undefined,
    readonly scope?: string,
    readonly context?: ChallengeContext,
  ) {
    super(status === 401 ? "unauthenticated" : "forbidden", detail);
  }

  /** The same refusal, pointing at `context` (the route knows its resource; the rule does not). */
  at(context: ChallengeContext): BearerError {
    return new BearerError(this.status as 401 | 403, this.message, this.error, this.scope, context);
  }

  /** The `WWW-Authenticate` value. */
  get challenge(): string {
    const params: string[] = [];
    if (this.error) params.push(`error=${quoted(this.error)}`, `error_description=${quoted(this.message)}`);
    const scope = this.scope ?? (this.status === 401 ? this.context?.scope : undefined);
    if (scope) params.push(`scope=${quoted(scope)}`);
    if (this.context) params.push(`resource_metadata=${quoted(this.context.resourceMetadata)}`);
    return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`;
  }
}
