/**
 * Other MCP gateways and proxies for bench/mcp.ts, measured beside the service in the same
 * interleaved rounds: `mcp-hub`, `supergateway` and `mcp-proxy` (the npm packages, pinned in this
 * folder's own package.json and lock, never dependencies of the project), and a bare `node:http`
 * pass-through proxy — the floor any HTTP hop costs. All of them front
 * `@modelcontextprotocol/server-everything`: mcp-hub over its Streamable HTTP endpoint (as the
 * service's packs do), supergateway and mcp-proxy over a stdio child of their own (what they are
 * made for). The packages are installed on demand (`npm ci` here); a peer that cannot be installed
 * or started is skipped with its reason.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const START_TIMEOUT_MS = 30_000;

/** The peers by package, with the bin each runs (relative to its package folder). */
const PACKAGES = {
  "mcp-hub": "dist/cli.js",
  supergateway: "dist/index.js",
  "mcp-proxy": "dist/bin/mcp-proxy.mjs",
} as const;
export type PeerName = keyof typeof PACKAGES;

/** A running MCP endpoint to measure, stopped by `stop`. */
export interface PeerEndpoint {
  readonly name: PeerName;
  /**
   * Its MCP endpoint: Streamable HTTP, except mcp-hub's, which is the older HTTP+SSE transport
   * (`GET /mcp`, answers on the event stream); mcp-hub also answers a tool call as one JSON POST
   * (`POST /api/servers/tools`), its `restUrl`.
   */
  readonly url: string;
  readonly restUrl?: string;
  /** How it reaches server-everything. */
  readonly upstream: string;
  readonly version: string;
  stop(): Promise<void>;
}

export interface SkippedPeer {
  readonly name: string;
  readonly reason: string;
}

function installed(name: PeerName): boolean {
  return existsSync(join(HERE, "node_modules", name, PACKAGES[name]));
}

/**
 * Installs this folder's packages when one is missing (`npm ci`, the lock as committed); answers
 * why not when that failed, else null.
 */
export function ensurePeersInstalled(): string | null {
  const names = Object.keys(PACKAGES) as PeerName[];
  if (names.every(installed)) return null;
  console.log(`installing the bench peers (${names.join(", ")}) into bench/peers/node_modules …`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: HERE,
    encoding: "utf8",
    timeout: 300_000,
  });
  if (result.error) return `npm ci failed to run: ${result.error.message}`;
  if (result.status !== 0)
    return `npm ci exited ${result.status}: ${(result.stderr ?? "").trim().slice(-300)}`;
  return null;
}

function versionOf(name: PeerName): string {
  try {
    const text = spawnSync(
      process.execPath,
      ["-p", `require("./node_modules/${name}/package.json").version`],
      {
        cwd: HERE,
        encoding: "utf8",
      },
    ).stdout;
    return text.trim();
  } catch {
    return "?";
  }
}

/**
 * Starts each peer in front of server-everything; a peer that is not installed, or does not
 * answer `initialize` within 30 s, is skipped with its reason.
 */
export async function startPeers(everything: {
  /** server-everything's `dist/index.js`, run as a stdio child by the stdio peers. */
  readonly entry: string;
  /** Its Streamable HTTP endpoint. */
  readonly url: string;
}): Promise<{ started: PeerEndpoint[]; skipped: SkippedPeer[] }> {
  const installProblem = ensurePeersInstalled();
  const started: PeerEndpoint[] = [];
  const skipped: SkippedPeer[] = [];
  const stdioServer = `"${process.execPath}" "${everything.entry}" stdio`;
  const configDir = mkdtempSync(join(tmpdir(), "vance-bench-hub-"));
  const hubConfig = join(configDir, "mcp-hub.json");
  writeFileSync(hubConfig, JSON.stringify({ mcpServers: { everything: { url: everything.url } } }));
  const plans: {
    name: PeerName;
    args: (port: number) => string[];
    path: string;
    rest?: string;
    upstream: string;
  }[] = [
    {
      name: "mcp-hub",
      args: (port) => ["--port", String(port), "--config", hubConfig],
      path: "/mcp",
      rest: "/api/servers/tools",
      upstream: "server-everything over Streamable HTTP",
    },
    {
      name: "supergateway",
      args: (port) => [
        "--stdio",
        stdioServer,
        "--outputTransport",
        "streamableHttp",
        "--stateful",
        "--port",
        String(port),
        "--logLevel",
        "none",
      ],
      path: "/mcp",
      upstream: "server-everything over stdio (its own child)",
    },
    {
      name: "mcp-proxy",
      args: (port) => [
        "--port",
        String(port),
        "--host",
        "127.0.0.1",
        "--",
        process.execPath,
        everything.entry,
        "stdio",
      ],
      path: "/mcp",
      upstream: "server-everything over stdio (its own child)",
    },
  ];
  for (const plan of plans) {
    if (!installed(plan.name)) {
      skipped.push({ name: plan.name, reason: installProblem ?? "not installed" });
      continue;
    }
    const port = await sparePort();
    const child = spawn(
      process.execPath,
      [join(HERE, "node_modules", plan.name, PACKAGES[plan.name]), ...plan.args(port)],
      {
        cwd: configDir,
        env: { ...process.env, HOME: configDir, XDG_STATE_HOME: configDir, XDG_CONFIG_HOME: configDir },
        stdio: ["ignore", "ignore", "pipe"],
        // Its own process group: stopping it stops the stdio server it started too.
        detached: true,
      },
    );
    let output = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-2000);
    });
    const url = `http://127.0.0.1:${port}${plan.path}`;
    const restUrl = plan.rest ? `http://127.0.0.1:${port}${plan.rest}` : undefined;
    const stop = () => stopChild(child);
    try {
      await ready(restUrl ?? url, child, restUrl !== undefined);
      started.push({
        name: plan.name,
        url,
        ...(restUrl ? { restUrl } : {}),
        upstream: plan.upstream,
        version: versionOf(plan.name),
        stop,
      });
    } catch (error) {
      await stop();
      skipped.push({
        name: plan.name,
        reason: `${error instanceof Error ? error.message : String(error)}${output ? `; stderr: ${output.trim().slice(-300)}` : ""}`,
      });
    }
  }
  const stopAll = started.map((peer) => peer.stop);
  return {
    started: started.map((peer, i) => ({
      ...peer,
      stop: async () => {
        await stopAll[i]!();
        if (i === started.length - 1) rmSync(configDir, { recursive: true, force: true });
      },
    })),
    skipped,
  };
}

/**
 * Polls `initialize` until the endpoint answers 200 and lists an echo tool — or, for mcp-hub's
 * REST endpoint, until a call of server-everything's echo answers (it connects to its servers first).
 */
async function ready(url: string, child: ChildProcess, rest: boolean): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const agent = new Agent({ keepAlive: false });
  let last = "no answer";
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`exited (${child.exitCode ?? child.signalCode})`);
      try {
        if (rest) {
          const answer = await post(agent, url, { "content-type": "application/json" }, HUB_ECHO);
          if (answer.status === 200 && answer.text.includes("bench")) return;
          last = `${answer.status} ${answer.text.slice(0, 200)}`;
        } else {
          const session = await openSession(agent, url);
          if (session.echo) return;
          last = `no echo tool among ${session.tools.length} tools`;
        }
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`not ready within ${START_TIMEOUT_MS / 1000} s (${last})`);
  } finally {
    agent.destroy();
  }
}

/** mcp-hub's REST tool call of server-everything's echo. */
export const HUB_ECHO = JSON.stringify({
  server_name: "everything",
  tool: "echo",
  arguments: { message: "bench" },
});

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
} as const;

/** A session on an MCP endpoint: its headers (session id, negotiated version) and its echo tool's name. */
export interface McpSession {
  readonly headers: Record<string, string>;
  readonly tools: readonly string[];
  readonly echo: string | undefined;
}

/** `initialize`, `notifications/initialized` and `tools/list` over `agent`. */
export async function openSession(
  agent: Agent,
  url: string,
  extra: Record<string, string> = {},
  protocolVersion = "2025-06-18",
): Promise<McpSession> {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  });
  const opened = await post(agent, url, { ...MCP_HEADERS, ...extra }, initialize);
  if (opened.status !== 200) throw new Error(`initialize: ${opened.status} ${opened.text.slice(0, 200)}`);
  const result = rpcResult(opened.text) as { protocolVersion?: string } | undefined;
  const session = opened.headers["mcp-session-id"];
  const headers: Record<string, string> = {
    ...MCP_HEADERS,
    ...extra,
    "mcp-protocol-version": result?.protocolVersion ?? protocolVersion,
    ...(typeof session === "string" ? { "mcp-session-id": session } : {}),
  };
  await post(agent, url, headers, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  const listed = await post(
    agent,
    url,
    headers,
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  );
  const tools = ((rpcResult(listed.text) as { tools?: { name: string }[] } | undefined)?.tools ?? []).map(
    (tool) => tool.name,
  );
  return { headers, tools, echo: tools.find((name) => name === "echo" || /(^|[_.:-])echo$/.test(name)) };
}

/** The `result` of a JSON-RPC answer sent as JSON or as an event stream (the data line that carries it). */
export function rpcResult(text: string): unknown {
  const candidates = text.trimStart().startsWith("{")
    ? [text]
    : [...text.matchAll(/^data: ?(.*)$/gm)].map(([, data]) => data ?? "");
  for (const candidate of candidates) {
    try {
      const parsed = JSON.parse(candidate) as { result?: unknown };
      if (parsed && typeof parsed === "object" && "result" in parsed) return parsed.result;
    } catch {
      // not JSON: another event
    }
  }
  return undefined;
}

/** One POST over a keep-alive agent, its answer read whole. */
export function post(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      response.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/**
 * A bare pass-through proxy on 127.0.0.1: every request forwarded as it came (method, path,
 * headers, body) over a keep-alive agent to `target`'s origin, the answer streamed back.
 * No parsing, no auth: what one HTTP hop costs, the floor of any gateway.
 */
export function startPassThroughProxy(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  return startForwarder(target, pipeAnswer);
}

/** What a forwarder does with the upstream's answer to a request whose body was `body`. */
type AnswerHandler = (body: Buffer, answer: IncomingMessage, response: ServerResponse) => void;

/** The upstream's answer sent back as it came. */
function pipeAnswer(_body: Buffer, answer: IncomingMessage, response: ServerResponse): void {
  response.writeHead(answer.statusCode ?? 502, answer.headers);
  answer.pipe(response);
}

/**
 * A server on 127.0.0.1 that forwards every request as it came (method, path, headers, body) over
 * a keep-alive agent to `target`'s origin, and hands the answer to `onAnswer`.
 */
async function startForwarder(
  target: string,
  onAnswer: AnswerHandler,
): Promise<{ url: string; stop(): Promise<void> }> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const server: Server = createServer((request, response) => {
    // The body is small (one JSON-RPC message): held, so that a request sent on a pooled socket
    // the upstream closed meanwhile (its keep-alive timeout) is sent once more, as Node's docs advise.
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const send = (retry: boolean) => {
        const forwarded = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: request.method,
            path: request.url,
            headers: { ...request.headers, host: upstream.host },
            agent,
          },
          (answer) => onAnswer(body, answer, response),
        );
        forwarded.on("error", (error: NodeJS.ErrnoException) => {
          if (retry && forwarded.reusedSocket && error.code === "ECONNRESET") return send(false);
          if (!response.headersSent) response.writeHead(502);
          response.end();
        });
        forwarded.end(body);
      };
      send(true);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    stop: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Stops a peer by its process group (the PID it was started with): SIGTERM, SIGKILL after 3 s, so
 * the stdio server it started goes with it.
 */
async function stopChild(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // the group is gone
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  }
  // What the peer left of its group (a stdio child that outlived it).
  signal("SIGKILL");
}

/**
 * The least a gateway that reads the call can do, on 127.0.0.1: a POST whose body is a
 * `tools/call` is parsed, sent on to `target` over a keep-alive agent, and its answer (JSON, or
 * an event stream read until the event with the call's id) is answered as one JSON message;
 * every other request is passed through as {@link startPassThroughProxy} passes it. No auth, no
 * lookups, no limits, no log: the floor under any gateway that, as this service does, answers a
 * call itself rather than streaming the upstream's bytes; measured beside it.
 */
export function startLeanGateway(target: string): Promise<{ url: string; stop(): Promise<void> }> {
  return startForwarder(target, (body, answer, response) => {
    const call = toolsCallId(body);
    if (call === undefined) pipeAnswer(body, answer, response);
    else answerCall(call, answer, response);
  });
}

/** The id of a `tools/call` request in `body`, or undefined for anything else. */
function toolsCallId(body: Buffer): string | number | undefined {
  try {
    const message = JSON.parse(body.toString("utf8")) as { method?: unknown; id?: unknown };
    const id = message.id;
    return message.method === "tools/call" && (typeof id === "string" || typeof id === "number")
      ? id
      : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the upstream's answer to call `id` (JSON or events) and answers it as one JSON message. */
function answerCall(id: string | number, answer: IncomingMessage, response: ServerResponse): void {
  let text = "";
  let done = false;
  const send = (message: string) => {
    done = true;
    response.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(message),
    });
    response.end(message);
    answer.resume();
  };
  answer.setEncoding("utf8");
  answer.on("data", (chunk: string) => {
    if (done) return;
    text += chunk;
    if (!String(answer.headers["content-type"]).startsWith("text/event-stream")) return;
    const lines = text.split("\n");
    text = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "") continue;
      if ((JSON.parse(data) as { id?: unknown }).id === id) return send(data);
    }
  });
  answer.on("end", () => {
    if (done) return;
    if (text !== "" && !String(answer.headers["content-type"]).startsWith("text/event-stream"))
      return send(text);
    response.writeHead(502);
    response.end();
  });
}
