import type { FieldError } from "@vance/core";

/** Where the API is and who calls it. */
export interface Connection {
  readonly url: string;
  readonly token: string;
}

/** A failure the user should read: printed as `error: …`, exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly errors: readonly FieldError[] = [],
    readonly status?: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The server's problem+json answer (API.md "Conventions") as an error with its stable `code`. */
export class ApiError extends CliError {
  constructor(
    status: number,
    code: string,
    detail: string,
    errors: readonly FieldError[],
    readonly body: unknown,
  ) {
    super(detail, code, errors, status);
    this.name = "ApiError";
  }
}

export interface RequestOptions {
  readonly body?: string;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

/** `encodeURIComponent` per segment: a document path keeps its slashes. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/**
 * The HTTP API over `fetch`: bearer token on every request, problem+json answers thrown as
 * `ApiError`, an unreachable server as a `CliError` naming the URL.
 */
export class ApiClient {
  private readonly base: string;

  constructor(private readonly connection: Connection) {
    this.base = connection.url.replace(/\/+$/, "");
  }

  /** The API's base URL, without a trailing slash. */
  get url(): string {
    return this.base;
  }

  /** The path of a project (`T` in API.md); `_tenant` addresses the tenant layer. */
  static projectPath(tenant: string, project: string): string {
    return `/v1/tenants/${encodeURIComponent(tenant)}/projects/${encodeURIComponent(project)}`;
  }

  /** Sends a request; a non-2xx answer throws `ApiError`. */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.connection.token}`,
      ...(options.contentType ? { "content-type": options.contentType } : {}),
      ...options.headers,
    };
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: options.body }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach ${this.base}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      );
    }
    if (!response.ok) throw await problemOf(response);
    return response;
  }

  /** A JSON answer. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, options);
    return (await response.json()) as T;
  }
}

async function problemOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not problem+json (a proxy's page, say): the status is all there is.
  }
  const problem = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof problem.code === "string" ? problem.code : `http_${response.status}`;
  const detail =
    typeof problem.detail === "string" ? problem.detail : `${response.status} ${response.statusText}`.trim();
  const errors = Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [];
  return new ApiError(response.status, code, detail, errors, body);
}
