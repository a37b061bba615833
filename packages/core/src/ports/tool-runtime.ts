/**
 * What running tools needs from the platform: HTTP, DNS, a clock and the script sandbox. The
 * composition root supplies real implementations; tests may supply their own. Secrets are not
 * here: which ones a tool may read depends on its document's layer (`InvocationContext.secret`).
 */

/** A script run request for the sandbox (spec §3.1). */
export interface ScriptRunRequest {
  readonly source: string;
  /** Bound as top-level variables. */
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
  /**
   * When present, `vance.tools.call(name, params)` is available inside the script; `signal`
   * aborts when the script ends (its deadline passed, it failed or was cancelled).
   */
  readonly callTool?: (
    name: string,
    params: unknown,
    signal: AbortSignal,
  ) => Promise<{ value: unknown } | { error: string; message: string }>;
  /** Whose run it is: each tenant has its own share of concurrent runs. */
  readonly tenant: string;
  /** A sibling call's run: it never queues (its caller holds a slot) and answers `Busy` instead. */
  readonly nested: boolean;
  /** The caller ended: the run stops at once and answers `Cancelled`. */
  readonly signal: AbortSignal;
}

export type ScriptRunOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string; readonly message: string };

/**
 * The sandbox port: QuickJS on worker threads in `@vance/sandbox`. Besides the script's own
 * errors, a run may answer `Busy` (the tenant's concurrent-run limit and queue are full) or
 * `Cancelled`.
 */
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
  readonly scripts: ScriptRunner;
  /** Epoch milliseconds. */
  readonly now: () => number;
}
