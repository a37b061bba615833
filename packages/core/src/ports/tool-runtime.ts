/**
 * What running tools needs from the platform: HTTP, DNS, a clock, the script sandbox and the
 * model catalog's endpoints. The composition root supplies real implementations; tests may supply
 * their own. Tenant secrets are not here: which ones a tool may read depends on its document's
 * layer (`InvocationContext.secret`).
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
  readonly callTool?: (name: string, params: unknown, signal: AbortSignal) => Promise<ScriptToolAnswer>;
  /** Whose run it is: each tenant has its own share of concurrent runs. */
  readonly tenant: string;
  /**
   * A sibling call's run: it runs under its root's slot, never queues (its ancestors hold threads
   * of the tenant's share) and answers `Busy` instead.
   */
  readonly nested: boolean;
  /** The caller ended: the run stops at once and answers `Cancelled`. */
  readonly signal: AbortSignal;
  /**
   * The outcome says how far the run got: its `console` lines (`logs`) and its sibling calls
   * (`calls`). Without it `console` does nothing.
   */
  readonly report?: boolean;
  /** Most characters of the result's JSON; a longer result fails with `ResultTooLarge`. */
  readonly maxResultChars?: number;
}

/**
 * What a sibling call answers the script: a value, or an error it sees thrown. `final` says every
 * later call of the run would be refused alike (its call budget is spent), so the sandbox may
 * answer those itself.
 */
export type ScriptToolAnswer =
  | { readonly value: unknown }
  | { readonly error: string; readonly message: string; readonly final?: boolean };

/** What a run printed with `console`: its last lines, and how many it printed in all. */
export interface ScriptLogs {
  readonly lines: readonly string[];
  readonly total: number;
}

export type ScriptRunOutcome = (
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: string;
      readonly message: string;
      /** `RateLimited`: how long until the tenant may start a run again. */
      readonly retryAfterMs?: number;
    }
) & {
  /** The run's `console` lines, when asked for (`report`). */
  readonly logs?: ScriptLogs;
  /** When asked for (`report`): sibling calls answered, and the one still waiting when the run ended (a deadline mid-call). */
  readonly calls?: { readonly completed: number; readonly running?: string };
};

/**
 * The sandbox port: QuickJS on worker threads in `@vance/sandbox`. Besides the script's own
 * errors, a run may answer `Busy` (the tenant's runs, its share of threads or the pool are
 * full), `RateLimited` (the tenant spent its worker time; `retryAfterMs` says for how long) or
 * `Cancelled`.
 */
export interface ScriptRunner {
  run(request: ScriptRunRequest): Promise<ScriptRunOutcome>;
}

/** Resolves a host name to its IP addresses (v4 and v6), for the SSRF guard. */
export type HostResolver = (hostname: string) => Promise<readonly string[]>;

/** The fetch the `rest` type uses (the platform's WHATWG fetch). */
export type HttpFetch = (input: string, init: RequestInit) => Promise<Response>;

/** One request of an {@link HttpExchange}: a text body, header names in lower case. */
export interface HttpExchangeRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Ends the request, and the reading of its answer, with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** The answer of an {@link HttpExchange}, handed on once its head has arrived. */
export interface HttpExchangeAnswer {
  readonly status: number;
  readonly statusText: string;
  /** A header's value (`name` in lower case), repeated ones joined by `, `. */
  header(name: string): string | undefined;
  /**
   * Reads the body (decoded, under the same byte cap as the fetch) chunk by chunk as it arrives,
   * until it ends or `each` answers `false`; rejects on a failure or when the signal aborts. Once
   * only. Stopping before the end closes the connection.
   */
  read(each: (chunk: Uint8Array) => boolean): Promise<void>;
  /** The whole body as UTF-8 text (once only, instead of `read`). */
  text(): Promise<string>;
  /** Drops the body unread (the connection is closed unless it had ended). */
  cancel(): void;
}

/**
 * An HTTP request below fetch, for the hot calls of a warm connection (an MCP `tools/call`): the
 * same network policy, redirects and byte caps as the guarded fetch, without a `Request`,
 * `Headers`, `Response` or web stream per call.
 */
export type HttpExchange = (url: string, request: HttpExchangeRequest) => Promise<HttpExchangeAnswer>;

/** An MCP server as a connection needs it: the document's settings with secrets filled in. */
export interface McpServerTarget {
  /**
   * Identifies the connection: tenant, the server document's layer and ETag. Connections and
   * cached lists are reused per key within a warm instance.
   */
  readonly key: string;
  /** The Streamable HTTP endpoint. */
  readonly url: string;
  /** Sent with every request (secrets filled in). */
  readonly headers: Readonly<Record<string, string>>;
  /** Bounds each request (connect, initialize, list, call). */
  readonly timeoutMs: number;
}

/** A tool as an MCP server lists it (`tools/list`). */
export interface McpToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** `tools/list` of one server; `current()` turns false on `notifications/tools/list_changed`. */
export interface McpToolList {
  readonly tools: readonly McpToolInfo[];
  /** Why the list may be shorter than the server's (its pages or bytes were capped). */
  readonly notes?: readonly string[];
  current(): boolean;
}

/** A content block of a `tools/call` result, as the MCP spec shapes it. */
export type McpContent = Readonly<Record<string, unknown>> & { readonly type: string };

/** The result of `tools/call`. */
export interface McpCallResult {
  readonly content: readonly McpContent[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: boolean;
}

/**
 * Why an `McpClient` request failed; an `mcp` tool answers each with its own error:
 * - `unavailable`: the server could not be connected to or initialised, or the transport failed
 *   (`McpUnavailable`);
 * - `timeout`: a request got no answer within the target's `timeoutMs` (`TimeoutError`);
 * - `refused`: the server answered with a JSON-RPC error (an unknown tool, params it refused): it
 *   is up, the call was refused (`McpToolError`);
 * - `protocol`: the server broke the client's rules of traffic, such as more requests of its own
 *   than a call may answer (`McpProtocolError`);
 * - `blocked_address`: the network policy refused an address the server's host resolves to
 *   (`BlockedAddress`);
 * - `response_too_large`: a message too large or too complex to read (`ResponseTooLarge`);
 * - `aborted`: the caller's signal ended the request.
 */
export type McpFailureReason =
  | "unavailable"
  | "timeout"
  | "refused"
  | "protocol"
  | "blocked_address"
  | "response_too_large"
  | "aborted";

/** The `name` of a `refused` failure. */
export const MCP_ERROR_RESPONSE_NAME = "McpErrorResponse";
/** The `name` of a `protocol` failure. */
export const MCP_PROTOCOL_ERROR_NAME = "McpProtocolError";
/** The `name` of a `timeout` failure. */
export const MCP_TIMEOUT_ERROR_NAME = "TimeoutError";

/**
 * The `name` each reason's error carries, for logs and stack traces; code reads `reason`. A
 * blocked address and an oversized answer keep the guarded fetch's names (`net/network-policy`,
 * not imported: it depends on this module's types).
 */
const MCP_FAILURE_NAMES = {
  unavailable: "McpUnavailableError",
  timeout: MCP_TIMEOUT_ERROR_NAME,
  refused: MCP_ERROR_RESPONSE_NAME,
  protocol: MCP_PROTOCOL_ERROR_NAME,
  blocked_address: "BlockedAddressError",
  response_too_large: "ResponseTooLargeError",
  aborted: "AbortError",
} as const satisfies Record<McpFailureReason, string>;

/** How every `McpClient` request fails: what failed in `message` (secrets scrubbed), why in `reason`. */
export class McpFailure extends Error {
  constructor(
    readonly reason: McpFailureReason,
    message: string,
  ) {
    super(message);
    this.name = MCP_FAILURE_NAMES[reason];
  }
}

/**
 * The MCP client port (`@modelcontextprotocol/sdk` in the adapters): connections reused per
 * target key, re-initialised after a session expiry or transport error; every request bounded
 * by the target's `timeoutMs` and the caller's signal. Every failure rejects with an
 * {@link McpFailure} whose message says what failed and whose `reason` says why.
 */
export interface McpClient {
  listTools(target: McpServerTarget, signal: AbortSignal): Promise<McpToolList>;
  callTool(
    target: McpServerTarget,
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallResult>;
}

/** An `openapi` pack's document to compile into operations, with what the pack says about them. */
export interface OpenApiCompileRequest {
  /** The document's YAML or JSON text. */
  readonly text: string;
  /** The pack document's name: sub-tool names (`pack__op`) must fit 64 characters. */
  readonly pack: string;
  /** The spec's own URL (relative server URLs resolve against it). */
  readonly specUrl?: string;
  /** `parameters.operations`: only these become sub-tools. */
  readonly allow?: readonly string[];
  /** `parameters.tags`: only operations carrying one of these tags become sub-tools. */
  readonly tags?: readonly string[];
  /** Whose document: each tenant has its own share of the compiler's threads. */
  readonly tenant: string;
  readonly signal?: AbortSignal;
}

/** An OpenAPI document's operations as source tools, and what was left out and why: a plain value. */
export interface CompiledOperations {
  readonly tools: readonly {
    readonly sourceName: string;
    readonly description: string;
    readonly inputSchema: Readonly<Record<string, unknown>>;
    readonly target?: unknown;
    readonly family?: string;
  }[];
  readonly notes: readonly string[];
  /** What the list weighs in memory, when the store read it (its stored length). */
  readonly bytes?: number;
}

/**
 * Parses, validates and dereferences an OpenAPI 3.x document and reads its operations, off the
 * thread that serves requests (its cost grows with the document's size and the shape of its
 * `$ref`s), or rejects saying why — `Busy` and deadline refusals included. The answer is plain
 * data that depends on the request alone, so it may be kept per document version.
 */
export type OpenApiCompiler = (request: OpenApiCompileRequest) => Promise<CompiledOperations>;

/** Which compile of which spec document version a kept operation list stands for. */
export interface CompiledOperationsVersion {
  readonly tenant: string;
  /** The layer holding the spec: a project id, or `_tenant`. */
  readonly project: string;
  readonly path: string;
  readonly etag: string;
  readonly pack: string;
  readonly allow?: readonly string[];
  readonly tags?: readonly string[];
}

/**
 * Compiled operation lists kept beside their spec documents, so that an instance with empty
 * caches (a cold Lambda) reads one small object instead of parsing the spec again. Neither
 * throws: `read` answers null for anything absent, unreadable, of another version or not a
 * valid list (the spec is compiled then), `write` logs a list it could not keep.
 */
export interface CompiledOperationStore {
  read(version: CompiledOperationsVersion): Promise<CompiledOperations | null>;
  write(version: CompiledOperationsVersion, compiled: CompiledOperations): Promise<void>;
}

/** The model a `prompt_template` call goes to, with its endpoint from the model catalog. */
export interface LlmEndpoint {
  /** `instance/slug`. */
  readonly model: string;
  /** The name the endpoint knows the model by: its slug. */
  readonly slug: string;
  /** How to talk to it: `openai` (chat completions; gateways too) or `anthropic` (Messages). */
  readonly wireType: string;
  /** The API root, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string;
  /** The provider's key from its platform secret; absent when the provider names none. Never shown to tenants. */
  readonly apiKey?: string;
}

/** What a `prompt_template` asks for: a catalog model by id, else a size in the tenant's default instance. */
export interface LlmChoice {
  readonly model?: string;
  readonly size?: string;
}

/**
 * Picks `prompt_template`'s model from the model catalog, as the call's request reads it; one
 * that cannot be called is a failure value.
 */
export interface LlmModels {
  pick(choice: LlmChoice): Promise<LlmEndpoint | { readonly error: string; readonly message: string }>;
}

export interface ToolRuntime {
  readonly fetch: HttpFetch;
  readonly resolveHost: HostResolver;
  readonly scripts: ScriptRunner;
  /** Epoch milliseconds. */
  readonly now: () => number;
  /** MCP servers (`mcp`, `mcp_server`); without one those tools answer `McpUnavailable`. */
  readonly mcp?: McpClient;
  /** OpenAPI documents (`openapi` packs); without one those packs list nothing. */
  readonly openApi?: OpenApiCompiler;
  /** Where compiled operation lists of spec documents are kept; without one every cold instance compiles. */
  readonly compiledOperations?: CompiledOperationStore;
}
