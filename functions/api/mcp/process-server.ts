import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import {
  byString,
  type DispatchResult,
  invokeTool,
  type Manifest,
  META_TOOL,
  type ProcessKey,
  type ProcessService,
  VanceError,
} from "@vance/core";

/** An answer as bytes: its status, media type, other headers and body (`answerBytes`). */
export interface McpAnswer {
  readonly status: number;
  /** The body's media type; `""` when the answer has none. */
  readonly contentType: string;
  /** The answer's headers besides its content type (the SDK's `cache-control` of a stream). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array<ArrayBuffer> | null;
}

/** The headers of a plain `tools/call`'s JSON answer, as the SDK's transport sends it. */
const JSON_ANSWER = { "content-type": "application/json" } as const;

const UTF8 = new TextEncoder();

/** The MCP server's name in `initialize` (its version is the service's). */
const MCP_SERVER_NAME = "vance-server-tools";

/**
 * The meta-tools whose success can change the next `tools/list` (they activate deferred tools):
 * their calls are answered as a stream carrying `notifications/tools/list_changed` first.
 */
const ACTIVATING_TOOLS = new Set<string>([META_TOOL.describe, META_TOOL.invoke]);

/** Refusals of a name the process cannot call: a JSON-RPC error, as the MCP spec says for unknown tools. */
const UNKNOWN_TOOL_CODES = new Set(["tool_not_found", "tool_disabled", "tool_not_allowed"]);

/** This server never asks the client for input (elicitation), so it never validates any. */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "not used" }),
};

export interface ProcessMcpServerOptions {
  readonly processes: Pick<ProcessService, "manifest" | "invoke">;
  /** The service version, reported as the server's. */
  readonly version: string;
  /**
   * Whether a plain `tools/call` is answered without the SDK's server and transport (the default);
   * off, every message takes the SDK's path — what the parity test compares the fast path with.
   */
  readonly fastPath?: boolean;
}

/**
 * One process's tool surface as an MCP server (Streamable HTTP, stateless): each HTTP request gets
 * a fresh SDK server and transport, and everything that must outlive the request lives in the
 * process record — so any instance answers any request. `tools/list` is the manifest's tools for
 * the process's model chain, `tools/call` is `ProcessService.invoke`, the path of
 * `POST T/processes/{id}/invoke`.
 */
export class ProcessMcpServer {
  constructor(private readonly options: ProcessMcpServerOptions) {}

  /**
   * Answers one request (`message` is its parsed JSON body, if it had one). A failure that is
   * the request's rather than a tool's — the process is gone, a store is down, a defect — is
   * thrown as is, for the HTTP problem answer; so is `process_not_found` at `initialize`.
   */
  async answer(request: Request, message: unknown, key: ProcessKey): Promise<Response> {
    const call = this.options.fastPath === false ? null : plainToolCall(request, message);
    if (call) return new Response(await this.callJson(call, key), { status: 200, headers: JSON_ANSWER });
    return this.sdkAnswer(request, message, key);
  }

  /**
   * {@link answer} as the bytes the fast route sends (`fast-mcp.ts`): a plain `tools/call`'s JSON
   * is encoded once, straight into the body — no `Response` built and read back through a stream.
   * The SDK's answers are read off its `Response` as they come.
   */
  async answerBytes(request: Request, message: unknown, key: ProcessKey): Promise<McpAnswer> {
    const call = this.options.fastPath === false ? null : plainToolCall(request, message);
    if (call) {
      const body = UTF8.encode(await this.callJson(call, key));
      return { status: 200, contentType: "application/json", headers: {}, body };
    }
    const response = await this.sdkAnswer(request, message, key);
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) if (name !== "content-type") headers[name] = value;
    return {
      status: response.status,
      contentType: response.headers.get("content-type") ?? "",
      headers,
      body: response.body === null ? null : new Uint8Array(await response.arrayBuffer()),
    };
  }

  /** Every message but a plain `tools/call`: the SDK's server and transport, one pair per request. */
  private async sdkAnswer(request: Request, message: unknown, key: ProcessKey): Promise<Response> {
    const messages = Array.isArray(message) ? message : [message];
    const initialize = messages.some((m) => methodOf(m) === "initialize");
    const activating = messages.some(
      (m) => methodOf(m) === "tools/call" && ACTIVATING_TOOLS.has(String(paramsOf(m)?.name)),
    );
    const instructions = initialize ? await this.instructions(key) : undefined;
    let failure: unknown;
    const server = this.server(key, instructions, (error) => {
      failure ??= error;
    });
    // JSON answers, except for activating calls: those stream the list_changed notification and
    // the result — one response that ends with the result, so it needs no open connection either.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !activating,
    });
    try {
      await server.connect(transport);
      const answered = await transport.handleRequest(request, { parsedBody: message });
      // The stream ends with the last result; reading it whole lets a failure still become the answer.
      const response = activating && answered.body ? await buffered(answered) : answered;
      if (failure !== undefined) throw failure;
      return response;
    } finally {
      await server.close();
    }
  }

  /**
   * A plain `tools/call` answered as the SDK's server and transport answer it in JSON — the same
   * result, the same JSON-RPC errors, the same failures left to the HTTP answer — from the message
   * the route parsed, read once: no per-request server, transport or schema parse on the path
   * every tool call of an engine takes. Answers the JSON-RPC answer's text.
   */
  private async callJson(call: PlainToolCall, key: ProcessKey): Promise<string> {
    let answer: Record<string, unknown>;
    try {
      answer = { result: await this.callResult(key, call.name, call.arguments), jsonrpc: "2.0", id: call.id };
    } catch (error) {
      if (!(error instanceof McpError)) throw error;
      answer = {
        jsonrpc: "2.0",
        id: call.id,
        error: {
          code: error.code,
          message: error.message,
          ...(error.data === undefined ? {} : { data: error.data }),
        },
      };
    }
    return JSON.stringify(answer);
  }

  /**
   * A `tools/call`'s result: `ProcessService.invoke`, its refusals as the model should see them.
   * Unknown names reject with `McpError` (InvalidParams); failures of the request reject as they are.
   */
  private async callResult(
    key: ProcessKey,
    name: string,
    params: Readonly<Record<string, unknown>>,
  ): Promise<CallToolResult> {
    let result: DispatchResult;
    try {
      result = await this.options.processes.invoke(key, name, params, [], { served: true });
    } catch (error) {
      if (!(error instanceof VanceError) || isRequestFailure(error)) throw error;
      if (UNKNOWN_TOOL_CODES.has(error.code)) {
        throw new McpError(ErrorCode.InvalidParams, error.message, { code: error.code });
      }
      // Bad arguments (`invalid_params`) and a full tenant (`busy`) are the caller's to fix or
      // retry: tool execution errors, which the model sees (MCP 2025-11-25, SEP-1303).
      return refusal(error);
    }
    return toolResult(result);
  }

  /**
   * The SDK's own answer to a request that no process backs — an initialize it will refuse (no
   * process is spawned for one): a server with no tools, so nothing is read or written.
   */
  async refuse(request: Request, message: unknown): Promise<Response> {
    const server = new Server(
      { name: MCP_SERVER_NAME, version: this.options.version },
      { capabilities: {}, jsonSchemaValidator: NO_ELICITATION },
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody: message });
    } finally {
      await server.close();
    }
  }

  /** The `initialize` result's `instructions`: the static discovery block, then the demoted one. */
  private async instructions(key: ProcessKey): Promise<string | undefined> {
    const manifest = await this.options.processes.manifest(key, "anthropic");
    const blocks = [manifest.discoveryBlock, manifest.demotedDiscoveryBlock].filter((block) => block !== "");
    return blocks.length > 0 ? blocks.join("\n\n") : undefined;
  }

  private server(key: ProcessKey, instructions: string | undefined, escalate: (error: unknown) => void) {
    const server = new Server(
      { name: MCP_SERVER_NAME, version: this.options.version },
      {
        capabilities: { tools: { listChanged: true } },
        ...(instructions === undefined ? {} : { instructions }),
        jsonSchemaValidator: NO_ELICITATION,
      },
    );
    /** Runs a handler; failures of the request (not of a tool) are kept for the HTTP answer. */
    const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
      try {
        return await run();
      } catch (error) {
        if (error instanceof McpError) throw error;
        if (!(error instanceof VanceError) || isRequestFailure(error)) {
          escalate(error);
          throw new McpError(ErrorCode.InternalError, "the request failed; see the HTTP answer");
        }
        throw new McpError(ErrorCode.InternalError, error.message, { code: error.code });
      }
    };

    server.setRequestHandler(ListToolsRequestSchema, () =>
      guarded(async (): Promise<ListToolsResult> => {
        const manifest = await this.options.processes.manifest(key, "anthropic");
        return { tools: servedTools(manifest) };
      }),
    );

    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      guarded(async (): Promise<CallToolResult> => {
        const { name, arguments: params = {} } = request.params;
        const result = await this.callResult(key, name, params);
        if (ACTIVATING_TOOLS.has(name) && result.isError !== true) {
          await extra.sendNotification({ method: "notifications/tools/list_changed" });
        }
        return result;
      }),
    );
    return server;
  }
}

/** A `tools/call` the served fast path answers: its id, tool name and arguments. */
interface PlainToolCall {
  readonly id: string | number;
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * The message as a `tools/call` the fast path answers exactly as the SDK would, or null for
 * anything else: those take the SDK's path, which answers them as it always has. The message is
 * checked with the SDK's own schemas, as its transport (`JSONRPCMessageSchema`: a request, one,
 * not a batch) and its server's handler (`CallToolRequestSchema`) check it — so what the fast path
 * takes, the SDK would have taken, and read the same way (unknown keys of `params` dropped). Not
 * taken: an activating meta-tool (its answer streams list_changed), a task-augmented call (the SDK
 * refuses it: no task capability), and headers the SDK's transport refuses (`Accept` without both
 * media types, an unsupported `MCP-Protocol-Version`).
 */
function plainToolCall(request: Request, message: unknown): PlainToolCall | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  if ((message as { method?: unknown }).method !== "tools/call") return null;
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return null;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return null;
  const plain = commonToolCall(message as Record<string, unknown>);
  if (plain) return ACTIVATING_TOOLS.has(plain.name) ? null : plain;
  const rpc = JSONRPCRequestSchema.safeParse(message);
  if (!rpc.success) return null;
  const parsed = CallToolRequestSchema.safeParse(rpc.data);
  if (!parsed.success) return null;
  const { name, arguments: args = {}, task } = parsed.data.params;
  if (task !== undefined || ACTIVATING_TOOLS.has(name)) return null;
  return { id: rpc.data.id, name, arguments: args };
}

/**
 * The shape nearly every `tools/call` has — `{ jsonrpc: "2.0", id, method, params: { name,
 * arguments? } }` and nothing else, the arguments a plain object — checked without the SDK's
 * schemas, which take it exactly so (and copy nothing a plain object's keys would change); null
 * for anything else (a `_meta`, a `task`, another key, an unusual id), which the schemas judge.
 */
function commonToolCall(message: Record<string, unknown>): PlainToolCall | null {
  let keys = 0;
  for (const key in message) {
    if (key !== "jsonrpc" && key !== "id" && key !== "method" && key !== "params") return null;
    keys++;
  }
  const { id, params } = message;
  if (message.jsonrpc !== "2.0" || !(typeof id === "string" || Number.isSafeInteger(id))) return null;
  if (keys !== 4 || !isPlainObject(params)) return null;
  let paramKeys = 0;
  for (const key in params) {
    if (key !== "name" && key !== "arguments") return null;
    paramKeys++;
  }
  const { name, arguments: args } = params;
  if (typeof name !== "string") return null;
  if (args === undefined) return paramKeys === 1 ? { id: id as string | number, name, arguments: {} } : null;
  if (!isPlainObject(args) || Object.hasOwn(args, "__proto__")) return null;
  return { id: id as string | number, name, arguments: args };
}

/** A failure of the whole request rather than of a tool: the process is gone, or a store is down. */
function isRequestFailure(error: VanceError): boolean {
  return error.status >= 500 || error.code === "process_not_found";
}

/**
 * The served surface's tools (issue 36): the manifest's, and `invoke_tool` when the process's
 * own surface lacks it and the chain's `maxTools` has room (the slot the reserve keeps for an
 * engine's own tool; an MCP client appends none). A framework that fetched this list once still
 * calls a tool `tool_description` activated later, through it; its calls pass the process's
 * allow set (`served` calls, `servedAllowSet`). Sorted by name like the manifest's array.
 */
function servedTools(manifest: Manifest): ListToolsResult["tools"] {
  const tools = manifest.tools.map(mcpTool);
  const room = manifest.budget.maxTools === null || tools.length < manifest.budget.maxTools;
  if (!room || tools.some((tool) => tool.name === invokeTool.name)) return tools;
  const served = {
    name: invokeTool.name,
    description: invokeTool.description,
    inputSchema: invokeTool.inputSchema as ListToolsResult["tools"][number]["inputSchema"],
  };
  return [...tools, served].sort(byString((tool) => tool.name));
}

/** A manifest tool in the Anthropic wire format (`input_schema`) as an MCP tool: the same schema object. */
function mcpTool(wire: Record<string, unknown>): ListToolsResult["tools"][number] {
  const { name, description, input_schema } = wire as {
    name: string;
    description: string;
    input_schema: ListToolsResult["tools"][number]["inputSchema"];
  };
  return { name, description, inputSchema: input_schema };
}

/**
 * A call's outcome as a tool result: the value as text (JSON unless it is a string), and as
 * `structuredContent` when it is an object; a tool's failure is `isError` with its message.
 */
function toolResult(result: DispatchResult): CallToolResult {
  if ("error" in result) {
    return {
      content: [{ type: "text", text: result.message }],
      structuredContent: { error: result.error, message: result.message },
      isError: true,
    };
  }
  // A client tool is the engine's to run: its routing result is the value.
  const value =
    "route" in result ? { route: result.route, name: result.name, params: result.params } : result.value;
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  return {
    content: [{ type: "text", text }],
    ...(isPlainObject(value) ? { structuredContent: value } : {}),
  };
}

function refusal(error: VanceError): CallToolResult {
  const details = error.errors.map((field) => `${field.path}: ${field.message}`);
  const text = details.length > 0 ? `${error.message} (${details.join("; ")})` : error.message;
  return {
    content: [{ type: "text", text }],
    structuredContent: {
      error: error.code,
      message: error.message,
      ...(error.errors.length > 0 ? { errors: error.errors } : {}),
    },
    isError: true,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function methodOf(message: unknown): unknown {
  return typeof message === "object" && message !== null
    ? (message as { method?: unknown }).method
    : undefined;
}

function paramsOf(message: unknown): Record<string, unknown> | undefined {
  const params =
    typeof message === "object" && message !== null ? (message as { params?: unknown }).params : undefined;
  return typeof params === "object" && params !== null ? (params as Record<string, unknown>) : undefined;
}

/** The same answer with its body read to the end; no longer a live stream, so no hop-by-hop header. */
async function buffered(response: Response): Promise<Response> {
  const body = await response.text();
  const headers = new Headers(response.headers);
  headers.delete("connection");
  return new Response(body, { status: response.status, headers });
}
