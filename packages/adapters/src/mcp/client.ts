import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  type HttpExchange,
  type HttpExchangeAnswer,
  type HttpFetch,
  type McpCallResult,
  type McpClient,
  McpFailure,
  type McpFailureReason,
  type McpServerTarget,
  type McpToolInfo,
  type McpToolList,
  RESPONSE_TOO_LARGE_ERROR_NAME,
  SecretScrubber,
} from "@vance/core";
import { MCP_TRAFFIC_LIMITS, McpTraffic } from "./traffic";

/** Connections kept open per instance by default (least recently used close first). */
export const DEFAULT_MAX_MCP_CONNECTIONS = 64;
/** The most tools one server's `tools/list` is read to (its pages followed up to this). */
export const DEFAULT_MAX_MCP_TOOLS = 1000;
/** How long closing a connection waits for the server to take the session's DELETE. */
const CLOSE_GRACE_MS = 1000;
/** How much of a failure's own text an error message quotes. */
const DETAIL_CHARS = 300;

export interface SdkMcpClientOptions {
  /**
   * The fetch every request goes through: the guarded one (`createGuardedFetch`), so the network
   * policy judges every address a server's host name resolves to, and redirects are not followed.
   */
  readonly fetch: HttpFetch;
  /**
   * What `tools/call` goes through: the guarded fetch's exchange (`createGuardedHttp`), so a warm
   * call costs no `Request`, `Response` or web stream. Without it, one over `fetch`.
   */
  readonly exchange?: HttpExchange;
  readonly maxConnections?: number;
  readonly maxTools?: number;
  /** How this service introduces itself in `initialize`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** What a server may send (`MCP_TRAFFIC_LIMITS` by default). */
  readonly trafficLimits?: typeof MCP_TRAFFIC_LIMITS;
}

/**
 * Output schemas are not checked here: the tool's result is handed on as the server sent it, and
 * compiling a tenant server's schemas with a backtracking regex engine would be a hazard (DESIGN §7).
 */
const NO_VALIDATION: jsonSchemaValidator = {
  getValidator: () => (input) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

/** One MCP session: a client and its transport, shared by the calls of one target key. */
class Connection {
  readonly client: Client;
  /** Settles when `initialize` is done; rejects when it failed. */
  ready: Promise<void> = Promise.resolve();
  /** Set once `ready` has resolved: a warm call then waits on nothing before it is sent. */
  connected = false;
  /** `notifications/tools/list_changed` received so far. */
  listChanges = 0;
  /** Set once this connection takes no new calls (failed, replaced or evicted). */
  retired = false;
  /**
   * Set when it was dropped for a failure (session expired, transport broken): notifications may
   * have been missed, so lists read on it are no longer trusted.
   */
  failed = false;
  private inFlight = 0;
  private closed = false;
  private politely = false;
  /** Ids of the lean path's requests: strings, so they never meet the SDK's numeric ones. */
  private nextCallId = 0;
  /** The lean path's POST headers, and the session they were built for. */
  private headers:
    | {
        readonly session: string | undefined;
        readonly version: string | undefined;
        readonly headers: Readonly<Record<string, string>>;
      }
    | undefined;

  constructor(
    readonly target: McpServerTarget,
    private readonly transport: StreamableHTTPClientTransport,
    readonly traffic: McpTraffic,
    clientInfo: { readonly name: string; readonly version: string },
    /** The exchange below the traffic checks: the lean path checks what it reads itself. */
    private readonly exchange: HttpExchange,
  ) {
    // A server that broke the traffic rules is dropped at once: its calls in flight end now
    // (the SDK rejects them as the connection closes), not at their deadline.
    traffic.onViolation = () => {
      this.failed = true;
      this.retired = true;
      this.close(false);
    };
    this.client = new Client({ ...clientInfo }, { capabilities: {}, jsonSchemaValidator: NO_VALIDATION });
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.listChanges++;
    });
    // Errors of the background event stream surface as failed calls; nothing to log here.
    this.client.onerror = () => {};
    this.client.onclose = () => {
      if (!this.retired) this.failed = true;
      this.retired = true;
      this.closed = true;
    };
  }

  /**
   * `tools/call` on the session the SDK opened, without the SDK's request pipeline: one POST whose
   * answer — JSON, or an event stream — has passed the same traffic checks, read once. Requests of
   * the server's own in the stream are answered as the SDK answers them (`ping` with an empty
   * result, anything else "method not found"), `tools/list_changed` is counted, and the answer
   * with this request's id ends the call.
   */
  async callTool(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<unknown> {
    const id = `vance-${++this.nextCallId}`;
    // A call abandoned before its answer (the caller left, the deadline passed) is cancelled on
    // the server too, as MCP asks, so the tool stops rather than runs on for nobody.
    const onAbort = new Listener(() => void this.cancelRequest(id));
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await this.answerOf(id, name, args, signal);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  private async answerOf(
    id: string,
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<unknown> {
    const answer = await this.post(
      { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
      signal,
    );
    const type = mediaType(answer);
    if (type === "application/json") {
      const found = this.take(parsedMessage(this.traffic.checkedText(await answer.text())), id, signal);
      if (found === undefined)
        throw new Error("the MCP server's JSON answer holds no response to the request");
      return found.result;
    }
    if (type !== "text/event-stream") {
      answer.cancel();
      throw new Error(`the MCP server answered tools/call with content type '${type}'`);
    }
    // The events are read as the chunks come, without a web stream; reading stops at the answer.
    const events = this.traffic.eventReader();
    let found: { result: unknown } | undefined;
    let failed: { error: unknown } | undefined;
    await answer.read((chunk) => {
      try {
        for (const data of events(chunk)) {
          // Events without data are priming events and keep-alives, as the SDK reads them.
          if (data === "") continue;
          found = this.take(parsedMessage(data), id, signal);
          if (found !== undefined) return false;
        }
        return true;
      } catch (error) {
        failed = { error };
        return false;
      }
    });
    if (failed) throw failed.error;
    if (found === undefined)
      throw new Error("the MCP server ended its event stream before answering the request");
    return found.result;
  }

  /**
   * Handles the messages of one answer (one or a batch): the response to `id` is returned (a
   * JSON-RPC error rejects as the SDK's `McpError`), requests are answered, notifications counted.
   */
  private take(message: unknown, id: string, signal: AbortSignal): { result: unknown } | undefined {
    let found: { result: unknown } | undefined;
    for (const one of Array.isArray(message) ? message : [message]) {
      if (typeof one !== "object" || one === null) continue;
      const rpc = one as { id?: unknown; method?: unknown; result?: unknown; error?: unknown };
      if (typeof rpc.method === "string") {
        if (rpc.id === undefined) {
          if (rpc.method === "notifications/tools/list_changed") this.listChanges++;
        } else {
          void this.answerServer(rpc.id, rpc.method, signal);
        }
      } else if (rpc.id === id && found === undefined) {
        if (rpc.error !== undefined) throw rpcError(rpc.error);
        found = { result: rpc.result };
      }
    }
    return found;
  }

  /** `notifications/cancelled` for request `id`: nothing waits on it, and a lost one fails nothing. */
  private async cancelRequest(id: string): Promise<void> {
    try {
      const answer = await this.post(
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "abandoned" } },
        AbortSignal.timeout(this.target.timeoutMs),
      );
      answer.cancel();
    } catch {
      // The server decides what a call nobody waits for becomes.
    }
  }

  /** Answers a server's request in the stream, as the SDK's `Client` would: nothing waits on it. */
  private async answerServer(id: unknown, method: string, signal: AbortSignal): Promise<void> {
    const answer =
      method === "ping"
        ? { jsonrpc: "2.0", id, result: {} }
        : { jsonrpc: "2.0", id, error: { code: ErrorCode.MethodNotFound, message: "Method not found" } };
    try {
      const response = await this.post(answer, signal);
      response.cancel();
    } catch {
      // As with the SDK: a lost answer to a ping fails nothing here; the server decides.
    }
  }

  /** A POST of one message on the session, with the target's headers; a refusal rejects as the SDK's does. */
  private async post(message: unknown, signal: AbortSignal): Promise<HttpExchangeAnswer> {
    const answer = await this.exchange(this.target.url, {
      method: "POST",
      headers: this.postHeaders(),
      body: JSON.stringify(message),
      signal,
    });
    if (answer.status < 200 || answer.status > 299) {
      const text = await answer.text().catch(() => null);
      throw new StreamableHTTPError(answer.status, `Error POSTing to endpoint: ${text}`);
    }
    return answer;
  }

  /**
   * The headers of the lean path's POSTs, built once per session (its id and protocol version are
   * fixed once `initialize` is done): the session's, the target's (names lower-cased, so that a
   * target's `Content-Type` is replaced as `Headers.set` replaced it), the media types.
   */
  private postHeaders(): Readonly<Record<string, string>> {
    const session = this.transport.sessionId;
    const version = this.transport.protocolVersion;
    const cached = this.headers;
    if (cached && cached.session === session && cached.version === version) return cached.headers;
    const headers: Record<string, string> = {};
    if (session !== undefined) headers["mcp-session-id"] = session;
    if (version !== undefined) headers["mcp-protocol-version"] = version;
    for (const [header, value] of Object.entries(this.target.headers)) headers[header.toLowerCase()] = value;
    headers["content-type"] = "application/json";
    headers.accept = "application/json, text/event-stream";
    this.headers = { session, version, headers };
    return headers;
  }

  /**
   * Waits for `work`, started just now, counted as in flight, so that retiring waits for it
   * before closing.
   */
  async use<T>(work: Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await work;
    } finally {
      this.inFlight--;
      if (this.retired && this.inFlight === 0) this.close(this.politely);
    }
  }

  /** Takes no new calls; closes once the running ones are done (`politely`: ending the session first). */
  retire(politely: boolean): void {
    this.retired = true;
    this.politely = politely;
    if (this.inFlight === 0) this.close(politely);
  }

  private close(politely: boolean): void {
    if (this.closed) return;
    this.closed = true;
    const end = () => this.client.close().catch(() => {});
    if (!politely || this.transport.sessionId === undefined) {
      void end();
      return;
    }
    const timer = setTimeout(() => void end(), CLOSE_GRACE_MS);
    void this.transport
      .terminateSession()
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer);
        void end();
      });
  }
}

/**
 * The `McpClient` port on `@modelcontextprotocol/sdk`'s `Client` and Streamable HTTP transport.
 * Connections are kept per target key (tenant, server document and its ETag) in a small
 * least-recently-used set; one whose session expired (a 404, or a 400 refusing its session id) or
 * whose transport failed is replaced, and the request is sent once more on a fresh connection.
 * Every request, connecting included, ends within the target's `timeoutMs` or when the caller's
 * signal aborts. Header values never appear in error messages.
 */
export class SdkMcpClient implements McpClient {
  private readonly connections = new Map<string, Connection>();
  private readonly fetch: FetchLike;
  private readonly exchange: HttpExchange;
  private readonly maxConnections: number;
  private readonly maxTools: number;
  private readonly clientInfo: { readonly name: string; readonly version: string };
  private readonly trafficLimits: typeof MCP_TRAFFIC_LIMITS;

  constructor(options: SdkMcpClientOptions) {
    this.trafficLimits = options.trafficLimits ?? MCP_TRAFFIC_LIMITS;
    const guarded = options.fetch;
    this.fetch = (url, init) => guarded(String(url), init ?? {});
    this.exchange = options.exchange ?? exchangeOverFetch(guarded);
    this.maxConnections = options.maxConnections ?? DEFAULT_MAX_MCP_CONNECTIONS;
    this.maxTools = options.maxTools ?? DEFAULT_MAX_MCP_TOOLS;
    this.clientInfo = options.clientInfo ?? { name: "vance-server-tools", version: "0.1.0" };
  }

  /**
   * `tools/list`, every page up to the caps: `maxTools` tools, and `MCP_TRAFFIC_LIMITS`' pages,
   * cursor length and bytes (a server may answer empty pages with fresh cursors for ever); a
   * capped list says so in its notes, as it does of each tool left out because it requires
   * task augmentation. `current()` turns false on `notifications/tools/list_changed`.
   */
  async listTools(target: McpServerTarget, signal: AbortSignal): Promise<McpToolList> {
    return this.run(target, signal, "tools/list", async (connection, options) => {
      const limits = connection.traffic.limits;
      const changes = connection.listChanges;
      const startBytes = connection.traffic.bytes;
      const tools: McpToolInfo[] = [];
      const notes: string[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let page = 1; ; page++) {
        // Each page on a signal of its own, linked to the call's until it is answered: the SDK
        // leaves its abort listener on the signal a request was given, so one signal for every
        // page held a listener per page read (Node warned of a leak past 10), and a listing that
        // timed out asked the server to cancel every page it had already answered.
        const { signal, timeout } = options();
        const pageSignal = new LinkedSignal(signal);
        let answer: Awaited<ReturnType<typeof connection.client.request<typeof ListToolsResultSchema>>>;
        try {
          answer = await connection.client.request(
            { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
            ListToolsResultSchema,
            { signal: pageSignal.signal, timeout },
          );
        } finally {
          pageSignal.unlink();
        }
        for (const tool of answer.tools) {
          if (tools.length >= this.maxTools) break;
          // This client declares no `tasks` capability, so a tool that answers only as a task
          // (server-everything's `simulate-research-query`) could never run here: not offered.
          if (tool.execution?.taskSupport === "required") {
            notes.push(
              `'${tool.name.slice(0, 128)}' is not offered: it requires task augmentation (execution.taskSupport: "required"), which this service does not support`,
            );
            continue;
          }
          tools.push({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            inputSchema: tool.inputSchema,
          });
        }
        const next = answer.nextCursor;
        // A server that repeats a cursor would page for ever.
        if (next === undefined || seen.has(next) || tools.length >= this.maxTools) break;
        const stop =
          next.length > limits.maxCursorChars
            ? `its cursor has more than ${limits.maxCursorChars} characters`
            : page >= limits.maxListPages
              ? `it has more than ${limits.maxListPages} pages`
              : connection.traffic.bytes - startBytes > limits.maxListBytes
                ? `its pages hold more than ${limits.maxListBytes} bytes`
                : undefined;
        if (stop) {
          notes.push(`tools/list was read to ${page} page(s) and ${tools.length} tools: ${stop}`);
          break;
        }
        seen.add(next);
        cursor = next;
      }
      return {
        tools,
        ...(notes.length > 0 ? { notes } : {}),
        current: () => !connection.failed && connection.listChanges === changes,
      };
    });
  }

  /** `tools/call`; a JSON-RPC error answer rejects with a `refused` {@link McpFailure}. */
  async callTool(
    target: McpServerTarget,
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallResult> {
    return this.run(target, signal, `tools/call '${name}'`, async (connection, options) => {
      return callToolResult(await connection.callTool(name, args, options().signal));
    });
  }

  /** Ends every session and closes every connection (tests, benches, shutdown). */
  close(): void {
    for (const connection of this.connections.values()) connection.retire(true);
    this.connections.clear();
  }

  /**
   * One request on the target's connection: connected first if need be, sent again once on a
   * fresh connection when a reused one turns out stale, all within `timeoutMs` of the start.
   */
  private async run<T>(
    target: McpServerTarget,
    signal: AbortSignal,
    what: string,
    work: (connection: Connection, options: () => { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + target.timeoutMs;
    // One listener on the caller's (often long-lived) signal for the whole call; the SDK and the
    // attempts below listen on this call's own signal, which nothing outlives. Failures alone name
    // the host or need the headers scrubbed: built where one is thrown, not per call.
    const call = new AbortController();
    const onAbort = new Listener(() => call.abort(signal.reason));
    if (signal.aborted) onAbort.handleEvent();
    else signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (let attempt = 0; ; attempt++) {
        const { connection, created } = this.connection(target, deadline);
        try {
          if (!connection.connected) await bounded(connection.ready, deadline, call.signal);
        } catch (error) {
          if (call.signal.aborted) throw aborted(call.signal);
          this.fail(connection);
          const violation = connection.traffic.violation;
          if (violation)
            throw new McpFailure(violation.reason, scrubbed(headerScrubber(target), violation.message));
          throw failure(
            error,
            headerScrubber(target),
            `could not connect to the MCP server at ${hostOf(target.url)}`,
            target.timeoutMs,
          );
        }
        try {
          return await connection.use(
            bounded(
              work(connection, () => ({ signal: call.signal, timeout: Math.max(1, deadline - Date.now()) })),
              deadline,
              call.signal,
            ),
          );
        } catch (error) {
          if (call.signal.aborted) throw aborted(call.signal);
          const violation = connection.traffic.violation;
          if (violation)
            throw new McpFailure(violation.reason, scrubbed(headerScrubber(target), violation.message));
          if (error instanceof DeadlineError || Date.now() >= deadline) {
            // Ends the request still in flight (and so cancels it on the server).
            call.abort(error);
            throw new McpFailure(
              "timeout",
              `the MCP server at ${hostOf(target.url)} did not answer ${what} within ${target.timeoutMs} ms`,
            );
          }
          const closed =
            error instanceof McpError && error.code === ErrorCode.ConnectionClosed && connection.retired;
          if (error instanceof McpError && !closed) {
            throw new McpFailure("refused", scrubbed(headerScrubber(target), error.message));
          }
          const broken = closed || isStale(error) || isTransportFailure(error);
          if (broken) this.fail(connection);
          if (broken && attempt === 0 && !created) continue;
          throw failure(
            error,
            headerScrubber(target),
            `${what} on the MCP server at ${hostOf(target.url)} failed`,
            target.timeoutMs,
          );
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** The live connection of the target's key, or a new one (connecting) in its place. */
  private connection(
    target: McpServerTarget,
    deadline: number,
  ): { connection: Connection; created: boolean } {
    const existing = this.connections.get(target.key);
    if (existing && !existing.retired && sameEndpoint(existing.target, target)) {
      // Most recently used last: the map's order is the eviction order.
      this.connections.delete(target.key);
      this.connections.set(target.key, existing);
      return { connection: existing, created: false };
    }
    if (existing) this.retire(existing, !existing.retired);
    const traffic = new McpTraffic(this.trafficLimits);
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      fetch: traffic.wrap(this.fetch),
      requestInit: { headers: { ...target.headers } },
    });
    const connection = new Connection(target, transport, traffic, this.clientInfo, this.exchange);
    // Shared by every caller of this key: bounded by the target's timeout, not by one caller's signal.
    connection.ready = connection.client.connect(transport, { timeout: Math.max(1, deadline - Date.now()) });
    connection.ready.then(
      () => {
        connection.connected = true;
      },
      () => {},
    );
    this.connections.set(target.key, connection);
    for (const [key, oldest] of this.connections) {
      if (this.connections.size <= this.maxConnections) break;
      this.connections.delete(key);
      oldest.retire(true);
    }
    return { connection, created: true };
  }

  /** Drops a connection that failed: its lists are stale, its session is not ended politely. */
  private fail(connection: Connection): void {
    connection.failed = true;
    this.retire(connection, false);
  }

  private retire(connection: Connection, politely: boolean): void {
    if (this.connections.get(connection.target.key) === connection)
      this.connections.delete(connection.target.key);
    connection.retire(politely);
  }
}

/**
 * Scrubs header values from error texts: the adapter cannot tell which hold secrets, so it takes
 * every value long enough to be one, whole and by its words (`Bearer <token>`).
 */
function headerScrubber(target: McpServerTarget): SecretScrubber {
  const values = Object.values(target.headers);
  const words = values.flatMap((value) => value.split(/\s+/)).filter((word) => word.length >= 8);
  return new SecretScrubber([...values.filter((value) => value.length >= 4), ...words]);
}

/** One JSON-RPC message (or batch) of an answer; text that is no JSON fails the call, naming the fault. */
function parsedMessage(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error("the MCP server sent a message that is not JSON");
  }
}

/** An answer's media type, lower case, without parameters. */
function mediaType(answer: HttpExchangeAnswer): string {
  return (answer.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/** An exchange over a fetch (a client given no exchange): its answers are the fetch's responses. */
function exchangeOverFetch(fetch: HttpFetch): HttpExchange {
  return async (url, request) => {
    const response = await fetch(url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    let used = false;
    const body = () => {
      if (used) throw new TypeError("the body of this answer was read already");
      used = true;
      return response.body;
    };
    return {
      status: response.status,
      statusText: response.statusText,
      header: (name) => response.headers.get(name) ?? undefined,
      read: async (each) => {
        const reader = body()?.getReader();
        if (!reader) return;
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done || !each(value)) return;
          }
        } finally {
          reader.cancel().catch(() => {});
        }
      },
      text: async () => {
        const stream = body();
        return stream ? new Response(stream).text() : "";
      },
      cancel: () => {
        if (!used)
          void body()
            ?.cancel()
            .catch(() => {});
      },
    };
  };
}

/** A JSON-RPC error answer as the SDK's `McpError`, which the caller tells apart from transport failures. */
function rpcError(error: unknown): McpError {
  const { code, message, data } = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  return new McpError(
    typeof code === "number" ? code : ErrorCode.InternalError,
    typeof message === "string" ? message : "the MCP server answered an error without a message",
    data,
  );
}

/**
 * A `tools/call` result, checked for what this client reads (core renders blocks defensively):
 * content blocks with a `type`, an object for `structuredContent`, a boolean `isError`.
 */
function callToolResult(result: unknown): McpCallResult {
  if (typeof result !== "object" || result === null || Array.isArray(result)) throw fail("not an object");
  const { content = [], structuredContent, isError } = result as Record<string, unknown>;
  if (!Array.isArray(content)) throw fail("content is not a list");
  for (const block of content) {
    if (typeof block !== "object" || block === null || typeof (block as { type?: unknown }).type !== "string")
      throw fail("a content block has no type");
  }
  if (
    structuredContent !== undefined &&
    (typeof structuredContent !== "object" || structuredContent === null || Array.isArray(structuredContent))
  )
    throw fail("structuredContent is not an object");
  if (isError !== undefined && typeof isError !== "boolean") throw fail("isError is not a boolean");
  return {
    content: content as McpCallResult["content"],
    ...(structuredContent === undefined
      ? {}
      : { structuredContent: structuredContent as McpCallResult["structuredContent"] & object }),
    ...(isError === undefined ? {} : { isError }),
  };
}

/** Why a `tools/call` result is refused. A function of the module, not a closure made per call. */
function fail(why: string): Error {
  return new Error(`the MCP server's tools/call result is not one: ${why}`);
}

/**
 * Whether a connection made for `a` serves `b` of the same key: the same URL and headers (a secret
 * rotated behind the same document makes a new connection). Compared in place, on every call.
 */
function sameEndpoint(a: McpServerTarget, b: McpServerTarget): boolean {
  if (a === b) return true;
  if (a.url !== b.url) return false;
  const names = Object.keys(a.headers);
  if (names.length !== Object.keys(b.headers).length) return false;
  return names.every((name) => Object.hasOwn(b.headers, name) && a.headers[name] === b.headers[name]);
}

/** The session is gone on the server (restarted, expired): 404, or 400 refusing the session id. */
function isStale(error: unknown): boolean {
  return error instanceof StreamableHTTPError && (error.code === 404 || error.code === 400);
}

/** The request failed below MCP (a reset socket, a refused connection), not by the server's answer. */
function isTransportFailure(error: unknown): boolean {
  if (!(error instanceof Error) || error instanceof McpError || error instanceof McpFailure) return false;
  if (fetchFailureReason(error) !== undefined) return false;
  if (error instanceof StreamableHTTPError) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (
    typeof code === "string" || error instanceof TypeError || /socket|connection|closed/i.test(error.message)
  );
}

/**
 * The reason of a failure the guarded fetch named (the network policy's refusal, an answer over
 * its byte cap): the fetch port tells them apart by `name`, this port by `reason`.
 */
function fetchFailureReason(error: Error): McpFailureReason | undefined {
  if (error.name === BLOCKED_ADDRESS_ERROR_NAME) return "blocked_address";
  if (error.name === RESPONSE_TOO_LARGE_ERROR_NAME) return "response_too_large";
  return undefined;
}

/** The failure a request rejects with: its reason kept or told from the error, its text scrubbed and cut. */
function failure(error: unknown, scrubber: SecretScrubber, what: string, timeoutMs: number): McpFailure {
  if (error instanceof DeadlineError)
    return new McpFailure("unavailable", `${what}: no answer within ${timeoutMs} ms`);
  if (error instanceof McpFailure) return new McpFailure(error.reason, scrubbed(scrubber, error.message));
  const reason = error instanceof Error ? fetchFailureReason(error) : undefined;
  if (reason) return new McpFailure(reason, scrubbed(scrubber, (error as Error).message));
  return new McpFailure("unavailable", `${what}: ${scrubbed(scrubber, detailOf(error))}`);
}

function detailOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof StreamableHTTPError && (error.code ?? 0) > 0)
    return `HTTP ${error.code}: ${error.message}`;
  const code = (error as NodeJS.ErrnoException).code;
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  const text = cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
  return typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text;
}

function scrubbed(scrubber: SecretScrubber, text: string): string {
  const clean = scrubber.text(text);
  return clean.length > DETAIL_CHARS ? `${clean.slice(0, DETAIL_CHARS)}…` : clean;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid URL)";
  }
}

function aborted(signal: AbortSignal): McpFailure {
  const reason: unknown = signal.reason;
  const detail = reason instanceof Error ? reason.message : String(reason);
  return new McpFailure("aborted", `the caller ended the request: ${detail}`);
}

/** The request's time ran out before it settled. */
class DeadlineError extends Error {}

/** `work`, or a rejection at `deadline` or when `signal` aborts — whichever comes first. */
function bounded<T>(work: Promise<T>, deadline: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => void new Bound(work, deadline, signal, resolve, reject));
}

/**
 * {@link bounded}'s race, settled once. Its handlers are a method and members, not named closures:
 * the bundles' `keepNames` renames each named closure with `Object.defineProperty` (~0.7 µs), on
 * every call.
 */
class Bound<T> implements EventListenerObject {
  private settled = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    work: Promise<T>,
    deadline: number,
    private readonly signal: AbortSignal,
    resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    if (signal.aborted) {
      this.settled = true;
      reject(signal.reason);
      return;
    }
    this.timer = setTimeout(() => this.settle(new DeadlineError("deadline"), true), deadline - Date.now());
    signal.addEventListener("abort", this, { once: true });
    work.then(
      (value) => {
        if (!this.settle(undefined, false)) return;
        resolve(value);
      },
      (error: unknown) => this.settle(error, true),
    );
  }

  /** The signal aborted. */
  handleEvent(): void {
    this.settle(this.signal.reason, true);
  }

  /** Settles with `error` when `failed`; answers whether this settled it (false: it was settled). */
  private settle(error: unknown, failed: boolean): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal.removeEventListener("abort", this);
    if (failed) this.reject(error);
    return true;
  }
}

/**
 * A signal of its own that aborts with `parent` until {@link unlink}ed: one request's signal, so
 * what listens on it (the SDK, which never removes its listener) ends with the request.
 */
class LinkedSignal implements EventListenerObject {
  readonly #controller = new AbortController();

  constructor(private readonly parent: AbortSignal) {
    if (parent.aborted) this.#controller.abort(parent.reason);
    else parent.addEventListener("abort", this, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  handleEvent(): void {
    this.#controller.abort(this.parent.reason);
  }

  unlink(): void {
    this.parent.removeEventListener("abort", this);
  }
}

/**
 * An event listener whose `handleEvent` runs `run`: a method, which `keepNames` leaves alone,
 * where a named closure made per call is renamed with `Object.defineProperty` (~0.7 µs each).
 */
class Listener implements EventListenerObject {
  constructor(private readonly run: () => void) {}

  handleEvent(): void {
    this.run();
  }
}
