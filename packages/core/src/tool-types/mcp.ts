import { LRUCache } from "lru-cache";
import * as v from "valibot";
import { CacheCounters, type CacheReport, type HasCaches } from "../cache/cache-registry";
import type { ToolOutcome } from "../calls/built-in-tool";
import type { CascadeHit, Layer } from "../cascade/document-cascade";
import { boundByCaller, untilAborted } from "../concurrency";
import { Errors, VanceError } from "../errors";
import type { NetworkPolicy } from "../net/network-policy";
import {
  type McpCallResult,
  type McpContent,
  McpFailure,
  type McpServerTarget,
  type ToolRuntime,
} from "../ports/tool-runtime";
import { SecretScrubber } from "../secrets/scrub";
import { PlainText, upstreamDescription } from "../text";
import { jsonSchemaText } from "../validation/json-schema-validator";
import { OpenJsonSchema, ServerNameSchema } from "./common";
import {
  type McpServerDocument,
  type McpServerDocumentResult,
  mcpServerDocumentPath,
  parseMcpServerDocument,
} from "./mcp-server";
import { describeError } from "./rest/errors";
import { secretNames, TemplateFiller } from "./rest/templates";
import {
  type AnyToolType,
  defineToolType,
  type InvocationContext,
  type SourceTool,
  type ToolSource,
} from "./tool-type";

/** How much of a failing MCP tool's text its `McpToolError` message quotes. */
export const MCP_ERROR_MESSAGE_CHARS = 2000;
/**
 * The type's own bound beyond the server's `timeoutMs`: the client bounds every request by it,
 * this only answers should a client overrun it.
 */
const CLIENT_GRACE_MS = 500;

/** A failure the tool answers (`{ error, message }`), with the `VanceError` a listing reports instead. */
interface ServerFailure {
  readonly error: string;
  readonly message: string;
  readonly problem: VanceError;
}

/** An MCP server document resolved for one tenant: the connection target, and what scrubs its secrets. */
interface OpenedServer {
  readonly target: McpServerTarget;
  readonly scrubber: SecretScrubber;
}

/** What resolving a server needs: the caller's cascade and secrets, and the network policy. */
interface ServerAccess {
  readonly tenant: string;
  readonly networkPolicy: NetworkPolicy;
  readHit(path: string): Promise<CascadeHit | null>;
  secretsFor(layer: Layer): (name: string) => Promise<string | undefined>;
}

/**
 * The `mcp` and `mcp_server` types, keeping their caches in `caches`: the composition root builds
 * one and lists it in `/v1/metrics` (`builtInToolTypes`).
 */
export function mcpToolTypes(caches: McpServerCaches): {
  readonly McpType: AnyToolType;
  readonly McpServerType: AnyToolType;
} {
  /** `mcp`: one tool of a server-side MCP server. */
  const McpType = defineToolType({
    typeId: "mcp",
    description:
      "Calls one tool of a server-side MCP server configured in mcp-servers/{server}.yaml. Its input schema is the server's for toolName unless parameters.inputSchema fixes one.",
    parametersSchema: v.strictObject({
      server: ServerNameSchema,
      toolName: v.pipe(v.string(), v.minLength(1)),
      inputSchema: v.optional(OpenJsonSchema),
    }),
    inputSchema: (parameters) => parameters.inputSchema ?? { type: "object" },
    check: (parameters, environment) => {
      if (!parameters.inputSchema) return [];
      const problem = environment.jsonSchemas.inputSchemaProblem(parameters.inputSchema);
      return problem ? [{ path: "inputSchema", message: `inputSchema: ${problem}` }] : [];
    },
    sourcing: {
      kind: "schema",
      // An explicit inputSchema wins: the listing then needs nothing from the server.
      schemaTool: (parameters) => (parameters.inputSchema ? null : parameters.toolName),
      open: (_config, parameters, context) => openSource(caches, parameters.server, context),
    },
    invoke: (_config, parameters, input, context, source) =>
      callMcpTool(
        caches,
        parameters.server,
        parameters.toolName,
        input,
        context,
        source && caches.serverOf(source),
      ),
  });

  /** `mcp_server`: a pack of all tools of a server-side MCP server, named `{doc}__{op}`. */
  const McpServerType = defineToolType({
    typeId: "mcp_server",
    description:
      "A pack: every tool of a server-side MCP server (mcp-servers/{server}.yaml) becomes a sub-tool named {name}__{op}, op the server's tool name in lower case with other characters as '_'. disabledSubTools and defaultDeferred apply; promptHint is the pack's line in discovery.",
    parametersSchema: v.strictObject({
      server: ServerNameSchema,
      promptHint: v.optional(v.pipe(v.string(), PlainText("promptHint"))),
    }),
    // Never offered: the pack document itself reaches no manifest, its sub-tools carry the server's schemas.
    inputSchema: () => ({ type: "object" }),
    sourcing: {
      kind: "pack",
      promptHint: (parameters) => parameters.promptHint,
      open: (_config, parameters, context) => openSource(caches, parameters.server, context),
      invokeSubTool: (_config, parameters, tool, input, context) =>
        callMcpTool(caches, parameters.server, tool.sourceName, input, context, caches.serverOf(tool)),
    },
  });
  return { McpType, McpServerType };
}

/**
 * The server's tool list as a `ToolSource`; throws `VanceError` when its document is missing or
 * invalid. Listings open the source every time, so opening reads only the (cached) document;
 * secrets are looked up when the list is loaded.
 */
async function openSource(
  caches: McpServerCaches,
  server: string,
  context: ServerAccess & { readonly runtime: ToolRuntime },
): Promise<ToolSource> {
  const located = await locateServer(caches, server, context);
  if ("error" in located) throw located.problem;
  return {
    key: located.key,
    async load(signal) {
      const mcp = context.runtime.mcp;
      if (!mcp) throw new Error("this service has no MCP client");
      const opened = await withSecrets(caches, located, context);
      if ("error" in opened) throw opened.problem;
      const { target, scrubber } = opened;
      let list: Awaited<ReturnType<typeof mcp.listTools>>;
      try {
        list = await mcp.listTools(target, signal);
      } catch (error) {
        throw new Error(scrubber.text(`MCP server '${server}': ${describeError(error)}`));
      }
      const tools: SourceTool[] = list.tools.map((tool) => {
        const inputSchema = scrubber.value(tool.inputSchema) as Record<string, unknown>;
        // Its text once per listing: every call finds the compiled validator by it.
        const inputSchemaText = jsonSchemaText(inputSchema);
        return {
          sourceName: tool.name,
          // A server's text reaches every surface: its control characters go, and it is cut as an
          // OpenAPI operation's is (README, *Isolation*).
          description: upstreamDescription(scrubber.text(tool.description ?? "")),
          inputSchema,
          ...(inputSchemaText === undefined ? {} : { inputSchemaText }),
        };
      });
      for (const tool of tools) caches.listed(tool, located);
      return {
        tools,
        ...(list.notes
          ? { notes: list.notes.map((note) => scrubber.text(`MCP server '${server}': ${note}`)) }
          : {}),
        current: () => list.current(),
      };
    },
  };
}

/**
 * The `mcp` types' two caches, an instance per service (the composition root's, in its cache
 * registry). Both are weak — by sub-tool and by network policy — so their entries go with the
 * listing and the policy they hang on, and are not counted.
 */
export class McpServerCaches implements HasCaches {
  /**
   * The server document each listed tool came from. A pack's list is cached under the server
   * document's key (layer, ETag) and served only while that key is the one the cascade finds,
   * so a sub-tool resolved in a request names the server document of that request: its call
   * needs no second look-up.
   */
  readonly #serverOfSubTool = new WeakMap<SourceTool, LocatedMcpServer>();
  readonly #serverReads = new CacheCounters();
  /**
   * Parsed server documents by body, per network policy: listings open the source on every
   * call, and a server document changes far less often than it is read.
   */
  readonly #parsedDocuments = new WeakMap<NetworkPolicy, LRUCache<string, McpServerDocumentResult>>();
  readonly #parsedReads = new CacheCounters();
  /**
   * Each located server document opened with the secret values it was opened with: the same
   * document (one object per listing) with the same values opens to the same target and scrubber,
   * so a warm call builds neither again (the scrubber's forms of each secret, the header copy) —
   * and the MCP client meets the very target its connection was made for. Weak, like the above:
   * an entry goes with the listing's located document.
   */
  readonly #opened = new WeakMap<
    LocatedMcpServer,
    { readonly values: readonly string[]; readonly opened: OpenedServer }
  >();

  /** The server `located` opened with `secrets` (values by name, in the document's order). */
  opened(located: LocatedMcpServer, secrets: ReadonlyMap<string, string>): OpenedServer {
    const known = this.#opened.get(located);
    // No secrets: nothing can have changed since it was opened.
    if (known && secrets.size === 0 && known.values.length === 0) return known.opened;
    const values = [...secrets.values()];
    if (
      known &&
      known.values.length === values.length &&
      known.values.every((value, i) => value === values[i])
    )
      return known.opened;
    const filler = new TemplateFiller([], {}, secrets);
    const { document } = located;
    const headers = Object.fromEntries(
      Object.entries(document.headers).map(([name, value]) => [name, filler.text(value).text]),
    );
    const opened = {
      target: { key: located.key, url: document.url, headers, timeoutMs: document.timeoutMs },
      scrubber: new SecretScrubber(values),
    };
    this.#opened.set(located, { values, opened });
    return opened;
  }

  /** Remembers that `tool` was listed from `located`. */
  listed(tool: SourceTool, located: LocatedMcpServer): void {
    this.#serverOfSubTool.set(tool, located);
  }

  /** The server document `tool` was listed from, if this instance listed it. */
  serverOf(tool: SourceTool): LocatedMcpServer | undefined {
    return this.#serverReads.read(this.#serverOfSubTool.get(tool));
  }

  /** `body` parsed as a server document under `networkPolicy`, once per body and policy. */
  parsed(body: string, networkPolicy: NetworkPolicy): McpServerDocumentResult {
    let cache = this.#parsedDocuments.get(networkPolicy);
    if (!cache) {
      cache = new LRUCache({ max: 512 });
      this.#parsedDocuments.set(networkPolicy, cache);
    }
    let parsed = this.#parsedReads.read(cache.get(body));
    if (!parsed) {
      parsed = parseMcpServerDocument(body, { networkPolicy });
      cache.set(body, parsed);
    }
    return parsed;
  }

  cacheReports(): Record<string, CacheReport> {
    return { serverOfSubTool: this.#serverReads.report(), parsedServers: this.#parsedReads.report() };
  }
}

/**
 * One `tools/call`: the server resolved (unless the listing this request found — a pack's, or
 * the one an `mcp` tool took its schema from — already located it), its secrets once, the call
 * bounded, the answer mapped and scrubbed of its secrets.
 */
async function callMcpTool(
  caches: McpServerCaches,
  server: string,
  toolName: string,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
  listedFrom?: LocatedMcpServer,
): Promise<ToolOutcome> {
  const mcp = context.runtime.mcp;
  if (!mcp) return { error: "McpUnavailable", message: "this service has no MCP client configured" };
  const located =
    listedFrom ?? (await locateServer(caches, server, { ...context, tenant: context.caller.tenant }));
  if ("error" in located) return { error: located.error, message: located.message };
  // A document without secrets opens at once: no promise to wait for on a warm call.
  const opening = withSecrets(caches, located, context);
  const opened = opening instanceof Promise ? await opening : opening;
  if ("error" in opened) return { error: opened.error, message: opened.message };
  const { target, scrubber } = opened;
  const bound = boundByCaller(context.signal, target.timeoutMs + CLIENT_GRACE_MS);
  try {
    const result = await untilAborted(mcp.callTool(target, toolName, input, bound.signal), bound.signal);
    const outcome = mcpOutcome(result, scrubber);
    return "error" in outcome ? outcome : { value: scrubber.value(outcome.value) };
  } catch (error) {
    const failure = callFailure(
      error,
      server,
      toolName,
      target.timeoutMs,
      bound.callerEnded(),
      bound.signal.aborted,
      context.signal,
    );
    // Scrubbed before the cut, so no prefix of a secret survives it.
    return { ...failure, message: cut(scrubber.text(failure.message)) };
  } finally {
    bound.done();
  }
}

function callFailure(
  error: unknown,
  server: string,
  toolName: string,
  timeoutMs: number,
  callerEnded: boolean,
  overran: boolean,
  caller: AbortSignal,
): { error: string; message: string } {
  // `Cancelled` rather than `TimeoutError` when the caller ended first: this server did not
  // overrun its timeoutMs, and a caller reading TimeoutError would raise the wrong limit.
  if (callerEnded) {
    return {
      error: "Cancelled",
      message: `the call of '${toolName}' on MCP server '${server}' was abandoned because its caller ended (${describeError(caller.reason)})`,
    };
  }
  // Not the client's failure but this call's own bound (`CLIENT_GRACE_MS` past timeoutMs) ending it.
  const reason = error instanceof McpFailure ? error.reason : overran ? "timeout" : "unavailable";
  switch (reason) {
    case "timeout":
      return {
        error: "TimeoutError",
        message: `MCP server '${server}' did not answer '${toolName}' within ${timeoutMs} ms`,
      };
    case "blocked_address":
      return { error: "BlockedAddress", message: describeError(error) };
    case "response_too_large":
      return { error: "ResponseTooLarge", message: `MCP server '${server}': ${describeError(error)}` };
    case "protocol":
      return { error: "McpProtocolError", message: `MCP server '${server}': ${describeError(error)}` };
    case "refused":
      return {
        error: "McpToolError",
        message: `MCP server '${server}' refused '${toolName}': ${describeError(error)}`,
      };
    case "aborted":
    case "unavailable":
      return { error: "McpUnavailable", message: `MCP server '${server}': ${describeError(error)}` };
  }
}

/** An MCP server document found and valid; `key` identifies it (tenant, layer, document, ETag). */
export interface LocatedMcpServer {
  readonly path: string;
  readonly layer: Layer;
  readonly key: string;
  readonly document: McpServerDocument;
}

/** Reads and validates the MCP server document `server` names, through the caller's cascade. */
async function locateServer(
  caches: McpServerCaches,
  server: string,
  access: ServerAccess,
): Promise<LocatedMcpServer | ServerFailure> {
  const path = mcpServerDocumentPath(server);
  const hit = await access.readHit(path);
  if (!hit) {
    const message = `no MCP server document '${path}' in this project's cascade (project, tenant or bundled)`;
    return {
      error: "McpServerNotFound",
      message,
      problem: new VanceError(
        "invalid_document",
        `the tool names the MCP server '${server}', but ${message}`,
        [{ path: "parameters.server", message }],
      ),
    };
  }
  const parsed = caches.parsed(hit.body, access.networkPolicy);
  if (!parsed.ok) {
    const problem = Errors.invalidDocument(path, hit.layer, parsed.error);
    return { error: "InvalidDocument", message: problem.message, problem };
  }
  return {
    path,
    layer: hit.layer,
    key: [access.tenant, hit.layer, hit.key ?? hit.path, hit.etag ?? "bundled"].join("\n"),
    document: parsed.server,
  };
}

/**
 * The connection target of a located server: `${secret:NAME}` in header values resolved as a
 * document of its layer may (tenant secrets; platform secrets for bundled), and what scrubs them.
 */
function withSecrets(
  caches: McpServerCaches,
  located: LocatedMcpServer,
  access: Pick<ServerAccess, "secretsFor">,
): OpenedServer | Promise<OpenedServer | ServerFailure> {
  const names = secretNamesOf(located.document);
  if (names.length === 0) return caches.opened(located, NO_SECRETS);
  return withSecretValues(caches, located, names, access);
}

async function withSecretValues(
  caches: McpServerCaches,
  located: LocatedMcpServer,
  names: readonly string[],
  access: Pick<ServerAccess, "secretsFor">,
): Promise<OpenedServer | ServerFailure> {
  const { path } = located;
  const secrets = await resolveSecrets(names, access.secretsFor(located.layer));
  if ("missing" in secrets) {
    const message = `the MCP server document '${path}' uses the secret '${secrets.missing}', which is not set; a tenant sets it with PUT /v1/tenants/{tenant}/secrets/${secrets.missing}`;
    return {
      error: "SecretNotFound",
      message,
      problem: new VanceError("invalid_document", message, [{ path: "headers", message }]),
    };
  }
  return caches.opened(located, secrets);
}

/** The secret names each parsed server document's headers use, found once per document. */
const SECRET_NAMES = new WeakMap<McpServerDocument, readonly string[]>();
const NO_SECRETS: ReadonlyMap<string, string> = new Map();

/** The secret names `document`'s headers use (found once per parsed document). */
function secretNamesOf(document: McpServerDocument): readonly string[] {
  let names = SECRET_NAMES.get(document);
  if (!names) {
    names = secretNames(Object.values(document.headers));
    SECRET_NAMES.set(document, names);
  }
  return names;
}

async function resolveSecrets(
  names: readonly string[],
  lookup: (name: string) => Promise<string | undefined>,
): Promise<ReadonlyMap<string, string> | { missing: string }> {
  const values = await Promise.all(names.map(async (name) => [name, await lookup(name)] as const));
  const missing = values.find(([, value]) => value === undefined);
  return missing ? { missing: missing[0] } : new Map(values as (readonly [string, string])[]);
}

/**
 * A `tools/call` result as the tool answers it (pure): `structuredContent` when present, else the
 * content blocks as text — text blocks as they are, images, audio and resources as short
 * placeholders (kind, MIME type, size), never their bytes — joined with newlines; a single text
 * block stays a string even when it holds JSON. `isError: true` is `McpToolError` with the text,
 * scrubbed and then cut to {@link MCP_ERROR_MESSAGE_CHARS}.
 *
 * @example mcpOutcome({ content: [{ type: "image", mimeType: "image/png", data: "iVBORw0K" }] }) // { value: "[image: image/png, 6 B]" }
 */
export function mcpOutcome(result: McpCallResult, scrubber?: SecretScrubber): ToolOutcome {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.map(renderBlock).join("\n");
  if (result.isError === true) {
    const detail =
      text !== ""
        ? text
        : result.structuredContent !== undefined
          ? JSON.stringify(result.structuredContent)
          : "the tool reported an error without a message";
    // Scrubbed before the cut, so no prefix of a secret survives it.
    return { error: "McpToolError", message: cut(scrubber ? scrubber.text(detail) : detail) };
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) {
    return { value: result.structuredContent };
  }
  return { value: text };
}

function renderBlock(block: McpContent): string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return placeholder(block.type, [mimeOf(block.mimeType), sizeOf(base64Bytes(block.data))]);
    case "resource": {
      const resource = (
        typeof block.resource === "object" && block.resource !== null ? block.resource : {}
      ) as Record<string, unknown>;
      const bytes = typeof resource.text === "string" ? utf8Bytes(resource.text) : base64Bytes(resource.blob);
      return placeholder("resource", [short(resource.uri), mimeOf(resource.mimeType), sizeOf(bytes)]);
    }
    case "resource_link":
      return placeholder("resource", [
        short(block.uri),
        mimeOf(block.mimeType),
        sizeOf(typeof block.size === "number" ? block.size : undefined),
      ]);
    default:
      return `[${short(block.type) ?? "unknown"} content]`;
  }
}

function placeholder(kind: string, parts: readonly (string | undefined)[]): string {
  const shown = parts.filter((part): part is string => part !== undefined && part !== "");
  return shown.length === 0 ? `[${kind}]` : `[${kind}: ${shown.join(", ")}]`;
}

/** A server-given label, bounded and on one line: a placeholder must stay short. */
function short(value: unknown, max = 200): string | undefined {
  if (typeof value !== "string") return undefined;
  const line = value.replace(/[\r\n\t]+/g, " ");
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function mimeOf(value: unknown): string | undefined {
  return short(value, 100);
}

/** Decoded bytes of a base64 text, without decoding it. */
function base64Bytes(data: unknown): number | undefined {
  if (typeof data !== "string") return undefined;
  const trimmed = data.replace(/\s+/g, "");
  const padding = trimmed.endsWith("==") ? 2 : trimmed.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((trimmed.length * 3) / 4) - padding);
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** `512 B`, `12.3 KiB`, `4.0 MiB`. */
export function sizeOf(bytes: number | undefined): string | undefined {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return undefined;
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function cut(text: string): string {
  return text.length > MCP_ERROR_MESSAGE_CHARS ? `${text.slice(0, MCP_ERROR_MESSAGE_CHARS)}…` : text;
}
