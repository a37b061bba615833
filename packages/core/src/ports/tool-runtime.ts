/**
 * What running tools needs from the platform: HTTP, DNS, secrets, a clock and the script
 * sandbox. The composition root supplies real implementations; tests may supply their own.
 */

/** A script run request for the sandbox (spec §3.1). */
export interface ScriptRunRequest {
  readonly source: string;
  /** Bound as top-level variables. */
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  /** When present, `vance.tools.call(name, params)` is available inside the script. */
  readonly callTool?: (
    name: string,
    params: unknown,
  ) => Promise<{ value: unknown } | { error: string; message: string }>;
}

export type ScriptRunOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string; readonly message: string };

/** The sandbox port: QuickJS in `@vance/sandbox`. */
export interface ScriptRunner {
  run(request: ScriptRunRequest): Promise<ScriptRunOutcome>;
}

/** Resolves a host name to its IP addresses (v4 and v6), for the SSRF guard. */
export type HostResolver = (hostname: string) => Promise<readonly string[]>;

/** The fetch the `rest` type uses (the platform's WHATWG fetch). */
export type HttpFetch = (input: string, init: RequestInit) => Promise<Response>;

export interface ToolRuntime {
  readonly fetch: HttpFetch;
  readonly resolveHost: HostResolver;
  /** `${secret:NAME}` lookups; undefined when the secret is not configured. */
  readonly secret: (name: string) => string | undefined;
  readonly scripts: ScriptRunner;
  /** Epoch milliseconds. */
  readonly now: () => number;
}
