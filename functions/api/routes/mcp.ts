import {
  type FieldError,
  issuesToFieldErrors,
  type Logger,
  type ProcessKey,
  type ProcessService,
  processIdProblem,
  SpawnRequestSchema,
  VanceError,
} from "@vance/core";
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import * as v from "valibot";
import { type AuthEnv, ENGINE, need } from "../auth";
import { parseJsonText, textBody } from "../http";
import { type BrowserGuardSettings, browserGuard } from "../mcp/browser-guard";
import type { ProcessMcpServer } from "../mcp/process-server";
import type { McpSessions } from "../mcp/sessions";
import { describe, jsonRequest, type Operation, pathParam } from "../openapi";
import { problemResponse } from "../problem";
import { commaListQuery, ProjectPathSchema, params, query } from "../validate";

/** What the MCP endpoints need besides the processes: browser rules and the `T/mcp` session ends. */
export interface McpSettings extends BrowserGuardSettings {
  readonly sessions: McpSessions;
}

/** A JSON-RPC message as `/openapi.json` shows it; the MCP SDK's transport checks it exactly. */
const JsonRpcMessageSchema = v.looseObject({
  jsonrpc: v.literal("2.0"),
  id: v.optional(v.union([v.string(), v.number()])),
  method: v.optional(v.string()),
  params: v.optional(v.record(v.string(), v.unknown())),
});

/** The `T/mcp` query: what `POST T/processes` takes in its body, lists comma-separated. */
const SessionQuerySchema = v.object({
  recipe: v.optional(v.pipe(v.string(), v.description("the recipe (the process's role), at initialize"))),
  engine: v.optional(v.pipe(v.string(), v.description("the engine, at initialize"))),
  add: v.optional(commaListQuery("allowedToolsAdd at initialize: comma-separated tool names and @labels")),
  remove: v.optional(
    commaListQuery("allowedToolsRemove at initialize: comma-separated tool names and @labels"),
  ),
  defer: v.optional(
    commaListQuery("allowedToolsDefer at initialize: comma-separated names and name* prefixes"),
  ),
  models: v.optional(commaListQuery("the model chain at initialize: comma-separated instance/slug")),
});
type SessionQuery = v.InferOutput<typeof SessionQuerySchema>;

/** The field of `POST T/processes`'s body each query parameter of `T/mcp` fills. */
const SPAWN_FIELD = {
  recipe: "recipe",
  engine: "engine",
  add: "allowedToolsAdd",
  remove: "allowedToolsRemove",
  defer: "allowedToolsDefer",
  models: "models",
} as const satisfies Record<keyof SessionQuery, string>;

const ANSWERS = {
  200: {
    description:
      "The JSON-RPC answer; a tools/call of tool_description or invoke_tool answers text/event-stream: notifications/tools/list_changed, then the result",
    content: {
      "application/json": { schema: { type: "object" as const } },
      "text/event-stream": { schema: { type: "string" as const } },
    },
  },
  202: { description: "Accepted: the body held only notifications or responses" },
};

const SESSION_PROBLEMS = { 400: ["session_required"], 404: ["session_not_found"] };
const BROWSER_PROBLEMS = { 403: ["origin_not_allowed", "host_not_allowed"] };

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  process: {
    summary:
      "MCP (Streamable HTTP, stateless) over the process's tools: tools/list is the manifest, tools/call its invoke; GET answers 405 (no standalone stream)",
    tag: "mcp",
    // The process is looked up as it comes: a request for no process is answered as MCP says.
    parameters: [pathParam("id", { type: "string", description: "the process's id" })],
    body: jsonRequest(JsonRpcMessageSchema),
    responses: ANSWERS,
    problems: { ...BROWSER_PROBLEMS, 404: ["process_not_found"] },
  },
  session: {
    summary:
      "MCP for clients that cannot spawn: initialize spawns a process from the query and answers its id as Mcp-Session-Id, which later requests carry",
    tag: "mcp",
    body: jsonRequest(JsonRpcMessageSchema),
    responses: ANSWERS,
    problems: { ...BROWSER_PROBLEMS, ...SESSION_PROBLEMS, 429: ["quota_exceeded"] },
  },
  endSession: {
    summary: "Ends the MCP session named by Mcp-Session-Id (the process record stays)",
    tag: "mcp",
    responses: { 204: { description: "Ended; later requests of the session answer 404" } },
    problems: { ...BROWSER_PROBLEMS, ...SESSION_PROBLEMS },
  },
} satisfies Record<string, Operation>;

/**
 * The MCP endpoints under `T` (API.md "MCP"): `processes/{id}/mcp` for a spawned process, and
 * `mcp`, whose `initialize` spawns one. Both are stateless: a request carries all it needs, the
 * process record is the state, and any instance answers.
 */
export function mcpRoutes(
  processes: ProcessService,
  options: {
    readonly version: string;
    readonly settings: McpSettings;
    readonly logger: Logger;
  },
) {
  const { settings } = options;
  const mcpServer = mcpServerOf(processes, options.version);
  const allowed = new Set(settings.allowedOrigins);
  const guard = browserGuard(settings);
  // Each endpoint is a protected resource of its own (RFC 9728): its 401s point at its metadata.
  const reader = need("read", { ...ENGINE, endpoint: true });
  const projectPath = params(ProjectPathSchema);
  const app = new Hono<AuthEnv>();

  // Browser clients (the MCP Inspector's direct mode) from listed origins need CORS.
  const browserCors = cors({
    origin: (origin) => (allowed.has(origin) ? origin : null),
    allowMethods: ["POST", "GET", "DELETE"],
    allowHeaders: [
      "authorization",
      "content-type",
      "mcp-session-id",
      "mcp-protocol-version",
      "last-event-id",
    ],
    exposeHeaders: ["mcp-session-id", "www-authenticate"],
  });
  /**
   * CORS as `browserCors` answers it, for a request without `Origin` (every engine's: programs
   * send none) set in place on the answer: the same headers ({@link NO_ORIGIN_CORS}), without
   * hono's `cors`, which sets them through a placeholder answer and `c.header` after the route —
   * copying the route's answer twice and turning its string body into a stream that the Node
   * server then writes chunk by chunk (issue 39: every tools/call).
   */
  const crossOrigin = createMiddleware(async (c, next) => {
    if (c.req.header("origin") !== undefined || c.req.method === "OPTIONS") return browserCors(c, next);
    await next();
    const exposed = NO_ORIGIN_CORS["access-control-expose-headers"];
    try {
      c.res.headers.set("access-control-expose-headers", exposed);
      c.res.headers.append("vary", "Origin");
    } catch {
      // An answer with immutable headers (none of this route's own) is copied as `c.header` copies it.
      c.header("access-control-expose-headers", exposed);
      c.header("vary", "Origin", { append: true });
    }
  });
  app.use("/processes/:id/mcp", crossOrigin);
  app.use("/mcp", crossOrigin);

  app.post("/processes/:id/mcp", describe(DOCS.process), guard, reader, projectPath, async (c) => {
    const { tenant, project } = c.req.valid("param");
    const message = await jsonRpcBody(c);
    return (await mcpServer()).answer(c.req.raw, message, { tenant, project, processId: c.req.param("id") });
  });

  app.post(
    "/mcp",
    describe(DOCS.session),
    guard,
    reader,
    projectPath,
    query(SessionQuerySchema, {
      code: "validation_failed",
      detail: "the query does not describe a process",
    }),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      const message = await jsonRpcBody(c);
      if (!isInitialize(message)) {
        const key = await session(c, { tenant, project }, settings.sessions, processes);
        return (await mcpServer()).answer(c.req.raw, message, key);
      }
      // A process record is made only for an initialize the transport will accept: a refused one
      // (406, 400, a notification answered 202) leaves nothing behind.
      if (!acceptableInitialize(c, message)) return (await mcpServer()).refuse(c.req.raw, message);
      const { record, warnings, stalePacks } = await processes.spawn(
        tenant,
        project,
        spawnRequestOf(c.req.valid("query"), Object.keys(c.req.query())),
      );
      // An MCP client has no place for a spawn's warnings: the log line is where they show.
      if (warnings.length > 0 || stalePacks.length > 0) {
        options.logger.warn("process.spawn_warnings", {
          tenant,
          project,
          processId: record.processId,
          warnings,
          stalePacks,
        });
      }
      const key = { tenant, project, processId: record.processId };
      const response = await (await mcpServer()).answer(c.req.raw, message, key);
      if (response.ok) response.headers.set("mcp-session-id", record.processId);
      return response;
    },
  );

  app.delete("/mcp", describe(DOCS.endSession), guard, reader, projectPath, async (c) => {
    await settings.sessions.end(await session(c, c.req.valid("param"), settings.sessions, processes));
    return c.body(null, 204);
  });

  // No standalone SSE stream (nothing outlives a request): GET answers 405, as MCP allows.
  app.all("/processes/:id/mcp", guard, reader, () => methodNotAllowed("POST"));
  app.all("/mcp", guard, reader, () => methodNotAllowed("POST, DELETE"));

  return app;
}

/**
 * The process's MCP server, its module loaded by the first MCP request: the MCP SDK (and zod
 * beneath it) is a third of the bundle, not to be loaded at every cold start.
 */
export function mcpServerOf(processes: ProcessService, version: string): () => Promise<ProcessMcpServer> {
  let loaded: Promise<ProcessMcpServer> | undefined;
  return () => {
    loaded ??= import("../mcp/process-server").then(
      ({ ProcessMcpServer }) => new ProcessMcpServer({ processes, version }),
    );
    return loaded;
  };
}

/** The CORS headers of an MCP endpoint's answer to a request without `Origin` (hono's `cors` sets these). */
export const NO_ORIGIN_CORS = {
  "access-control-expose-headers": "mcp-session-id,www-authenticate",
  vary: "Origin",
} as const;

/** Throws 415 unless the request's media type (`Content-Type` without parameters) is JSON. */
export function requireJsonRpcMediaType(contentType: string | null | undefined): void {
  if ((contentType ?? "").split(";")[0]!.trim().toLowerCase() !== "application/json") {
    throw new VanceError("unsupported_media_type", "MCP messages are sent as application/json");
  }
}

/** The request's JSON-RPC message(s), parsed; the SDK's transport then checks their shape. */
async function jsonRpcBody(c: Context): Promise<unknown> {
  requireJsonRpcMediaType(c.req.header("content-type"));
  return parseJsonText(await textBody(c));
}

/**
 * What the SDK's transport and `initialize` handler require of an initialize, checked before a
 * process is spawned for it: one request (an id, no batch) with the protocol version, the client's
 * capabilities and its name and version, from a client that accepts both JSON and event streams.
 */
const InitializeRequestSchema = v.object({
  jsonrpc: v.literal("2.0"),
  id: v.union([v.string(), v.number()]),
  method: v.literal("initialize"),
  params: v.object({
    protocolVersion: v.string(),
    capabilities: v.record(v.string(), v.unknown()),
    clientInfo: v.object({ name: v.string(), version: v.string() }),
  }),
});

function acceptableInitialize(c: Context, message: unknown): boolean {
  const accept = (c.req.header("accept") ?? "").toLowerCase();
  return (
    accept.includes("application/json") &&
    accept.includes("text/event-stream") &&
    v.is(InitializeRequestSchema, message)
  );
}

function isInitialize(message: unknown): boolean {
  const messages = Array.isArray(message) ? message : [message];
  return messages.some(
    (m) => typeof m === "object" && m !== null && (m as { method?: unknown }).method === "initialize",
  );
}

/**
 * The process the request's `Mcp-Session-Id` names: 400 without one, 404 (MCP: start a new
 * session) when no such process lives in this project or its session was ended.
 */
async function session(
  c: Context,
  { tenant, project }: { readonly tenant: string; readonly project: string },
  sessions: McpSessions,
  processes: ProcessService,
): Promise<ProcessKey> {
  const id = c.req.header("mcp-session-id");
  if (id === undefined) {
    throw new VanceError("session_required", "requests after initialize carry the Mcp-Session-Id header");
  }
  const key = { tenant, project, processId: id };
  const notFound = new VanceError("session_not_found", "no such MCP session; initialize a new one");
  if (processIdProblem(id) !== null) throw notFound;
  const [found, ended] = await Promise.all([
    processes.get(tenant, project, id).then(
      () => true,
      (error: unknown) => {
        if (error instanceof VanceError && error.code === "process_not_found") return false;
        throw error;
      },
    ),
    sessions.ended(key),
  ]);
  if (!found || ended) throw notFound;
  return key;
}

/** `POST T/processes`'s body from the `T/mcp` query (`sent` its parameters' names); 422 naming the query parameter at fault. */
function spawnRequestOf(query: SessionQuery, sent: readonly string[]) {
  const errors: FieldError[] = sent
    .filter((name) => !(name in SPAWN_FIELD))
    .map((name) => ({
      path: name,
      message: `not a parameter of T/mcp (${Object.keys(SPAWN_FIELD).join(", ")})`,
    }));
  const body: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(SPAWN_FIELD)) {
    const value = query[name as keyof SessionQuery];
    if (value !== undefined) body[field] = value;
  }
  body.models ??= [];
  const result = v.safeParse(SpawnRequestSchema, body);
  if (!result.success) {
    const byField = new Map<string, string>(
      Object.entries(SPAWN_FIELD).map(([name, field]) => [field, name]),
    );
    for (const error of issuesToFieldErrors(result.issues, undefined, [], SpawnRequestSchema)) {
      const [field, ...rest] = error.path.split(".");
      errors.push({ ...error, path: [byField.get(field ?? "") ?? field, ...rest].join(".") });
    }
  }
  if (errors.length > 0 || !result.success) {
    throw new VanceError("validation_failed", "the query does not describe a process", errors);
  }
  return result.output;
}

function methodNotAllowed(allow: string): Response {
  const response = problemResponse(
    new VanceError(
      "method_not_allowed",
      `this MCP endpoint takes ${allow}; it keeps no standalone stream open (GET)`,
    ),
    () => {},
  );
  response.headers.set("allow", allow);
  return response;
}
