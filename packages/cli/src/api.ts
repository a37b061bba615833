import { createVanceClient, type VanceClient } from "@vance/client";
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

/** The typed routes of `/openapi.json` (`@vance/client`), as the CLI calls them. */
export type Api = VanceClient["api"];

/** The API a command talks to: `@vance/client`'s typed calls, and the base URL they go to. */
export interface CliApi {
  /** The API's base URL, without a trailing slash. */
  readonly url: string;
  readonly api: Api;
}

/**
 * `@vance/client` for the CLI: the bearer token on every request, no retries (a command reports
 * each answer as it came), an unreachable server as a `CliError` naming the URL.
 */
export function connect(connection: Connection): CliApi {
  const url = connection.url.replace(/\/+$/, "");
  const client = createVanceClient({
    baseUrl: url,
    token: connection.token,
    retry: { attempts: 1 },
    fetch: async (request) => {
      try {
        return await fetch(request);
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new CliError(
          `cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
        );
      }
    },
  });
  return { url, api: client.api };
}

/** What a typed call answers: its parsed body, or the problem of an answer that is not a success. */
interface Answer<Data> {
  readonly data?: Data;
  readonly error?: unknown;
  readonly response: Response;
}

/** The body and response of a typed call's success; any other answer throws `ApiError`. */
export async function answered<Data>(
  call: Promise<Answer<Data>>,
): Promise<{ readonly data: Data; readonly response: Response }> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(response, error);
  return { data: data as Data, response };
}

/** The body of a typed call's success (`answered` without the response). */
export async function dataOf<Data>(call: Promise<Answer<Data>>): Promise<Data> {
  return (await answered(call)).data;
}

/** `encodeURIComponent` per segment: a document path keeps its slashes. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/**
 * How the CLI spells a route's path parameters in the URL: each encoded as a component, but a
 * document `{path}` per segment, so `documents/server-tools/a.yaml` stays readable in logs.
 */
export function documentPathSerializer(pathname: string, params: Record<string, unknown>): string {
  return pathname.replace(/\{([^{}]+)\}/g, (_, name: string) =>
    name === "path" ? encodePath(String(params[name])) : encodeURIComponent(String(params[name])),
  );
}

/** An answer that is no success as `ApiError`: its problem's `code` and detail, else the status. */
function problemOf(response: Response, body: unknown): ApiError {
  const problem = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof problem.code === "string" ? problem.code : `http_${response.status}`;
  const detail =
    typeof problem.detail === "string" ? problem.detail : `${response.status} ${response.statusText}`.trim();
  const errors = Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [];
  return new ApiError(response.status, code, detail, errors, body ?? "");
}
