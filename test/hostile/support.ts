/**
 * The attack suite's helpers: the server under test started as `npm start` runs it, a poller of
 * its `/v1/health` in a process of its own, and small hostile upstreams on 127.0.0.1. Each case
 * runs its attack inside `target.attack(name, …)`, which measures the longest health request
 * meanwhile (a blocked event loop makes one request wait as long) and fails the case past
 * `MAX_BLOCK_MS`; the file's closing note lists every case with its outcome and that figure.
 * New surfaces add their cases beside the others (README, *Isolation*).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { createInterface, type Interface } from "node:readline";
import { expect } from "vitest";
import { type LocalServer, startLocalServer } from "../support/local-server";

/** The one timing bound of the suite: a freeze here is seconds, so the bound holds on a loaded machine. */
export const MAX_BLOCK_MS = 1_000;

/** One case of the closing note. */
interface CaseReport {
  readonly name: string;
  readonly outcome: string;
  readonly maxMs: number;
  readonly medianMs: number;
  readonly polls: number;
}

/** The health poller's answer for one window. */
interface PollWindow {
  readonly count: number;
  readonly maxMs: number;
  readonly medianMs: number;
}

/** A child process answering one JSON line per command line. */
class Poller {
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(private readonly child: ChildProcess) {
    this.lines = createInterface({ input: child.stdout! });
    this.lines.on("line", (line) => this.waiting.shift()?.(line));
  }

  static start(base: string): Poller {
    const child = spawn(process.execPath, [new URL("./health-poller.mjs", import.meta.url).pathname, base], {
      stdio: ["pipe", "pipe", "inherit"],
      // A session of its own: where the kernel groups CPU time by session (autogroup), the poller
      // is not scheduled with the test runner's attack loops, whose turn would count as the
      // server's. It ends when its stdin does, so it does not outlive the runner.
      detached: true,
    });
    return new Poller(child);
  }

  async command<T>(line: string): Promise<T> {
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.child.stdin!.write(`${line}\n`);
    return JSON.parse(await answer) as T;
  }

  stop(): void {
    this.child.stdin!.end();
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** The server under test, its development token, and the attacks measured on it. */
export interface Target {
  readonly base: string;
  /**
   * The process that serves (`npm start` runs tsx, which runs the server in a child of its own):
   * its main thread's id is this pid.
   */
  readonly pid: number;
  /** Its data directory (`state.sqlite`, the documents). */
  readonly dataDir: string;
  /** The JSON log lines it wrote since it started, parsed. */
  readonly logs: Record<string, unknown>[];
  /** The process warnings Node printed in its output (`(node:PID) …Warning: …`) since it started. */
  readonly warnings: string[];
  /** The development token: every tenant, roles read, write and admin. */
  readonly token: string;
  /** A token of one tenant with the given roles (minted by the server's own secret). */
  token_(tenant: string, roles: readonly string[]): Promise<string>;
  /** A request to the server under test, with the development token unless `token` is given. */
  request(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  /**
   * A large PUT whose status is read as soon as it comes: the server may refuse from the headers
   * and close while the body is still being written (fetch reports that as a failure).
   */
  putLarge(path: string, body: string, options: { contentType: string; chunked?: boolean }): Promise<number>;
  /**
   * Runs one attack while the health poller watches; asserts that no health request waited
   * `MAX_BLOCK_MS` or longer, and records `outcome` (what the attack answered) for the note.
   */
  attack<T>(name: string, run: () => Promise<T>, outcome: (result: T) => string): Promise<T>;
  /** The closing note: one line per case. */
  note(): string;
  stop(): Promise<void>;
}

/**
 * PUTs a large body over a plain socket and answers the status line the server sent. The server
 * refuses an oversized body from its headers (or once a chunked one passes the limit) and closes;
 * whatever the client sends after that close makes the server's kernel answer with a reset, and a
 * reset discards an answer not yet read — a plain HTTP client then sees EPIPE or ECONNRESET, not
 * the 413. So this one behaves as `Expect: 100-continue` clients do: it pauses after the headers,
 * and after the first chunk past the limit, for an answer, and writes on only when none came.
 */
/** How long a large PUT waits for an early answer before it writes (on). */
const ANSWER_PAUSE_MS = 2_000;
/** A chunked body's first chunk: past every route's 256 KiB limit, so the refusal comes after it. */
const FIRST_CHUNK_BYTES = 320 * 1024;

function putOverSocket(
  url: URL,
  token: string,
  body: string,
  options: { contentType: string; chunked?: boolean },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = "";
    let answered: () => void = () => {};
    const answer = new Promise<void>((done) => {
      answered = done;
    });
    socket.setEncoding("latin1");
    socket.on("data", (data: string) => {
      if (received.length < 4096) received += data;
      answered();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1];
      if (status) resolve(Number(status));
      else
        reject(
          new Error(`no answer to PUT ${url.pathname} (received ${JSON.stringify(received.slice(0, 200))})`),
        );
    });
    socket.on("connect", async () => {
      const length = options.chunked
        ? "transfer-encoding: chunked"
        : `content-length: ${Buffer.byteLength(body)}`;
      const head = `PUT ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${token}\r\ncontent-type: ${options.contentType}\r\n${length}\r\nconnection: close\r\n\r\n`;
      const write = (text: string) =>
        new Promise<boolean>((done) => {
          if (socket.destroyed || received.length > 0) return done(false);
          socket.write(text, (error) => done(!error));
        });
      const pause = () => Promise.race([answer, new Promise((done) => setTimeout(done, ANSWER_PAUSE_MS))]);
      if (!(await write(head))) return;
      await pause();
      const first = options.chunked ? FIRST_CHUNK_BYTES : 64 * 1024;
      for (let at = 0; at < body.length; ) {
        const size = at === 0 ? first : 64 * 1024;
        const chunk = body.slice(at, at + size);
        at += size;
        const framed = options.chunked ? `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n` : chunk;
        if (!(await write(framed))) return;
        if (size === first && options.chunked) await pause();
      }
      await write(options.chunked ? "0\r\n\r\n" : "");
    });
  });
}

/** The pids of `pid`'s children (Linux's /proc). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The deepest process under `pid` (itself included) that runs `script`: tsx's child, not tsx. */
function serverProcess(pid: number, script: string): number {
  for (const child of childrenOf(pid)) {
    const found = serverProcess(child, script);
    if (readFileSync(`/proc/${found}/cmdline`, "utf8").includes(script)) return found;
  }
  return pid;
}

/** The nice value of each thread of process `pid`, by thread id (Linux's /proc). */
export function threadNices(pid: number): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command's closing parenthesis start at field 3 (state); nice is field 19.
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
  }
  return nices;
}

/** Starts the server as `npm start` does, with loopback upstreams allowed, and its health poller. */
export async function startTarget(env: Record<string, string> = {}): Promise<Target> {
  const server: LocalServer = await startLocalServer({
    env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1", VANCE_STORE_SCAN_SECONDS: "0", ...env },
  });
  const poller = Poller.start(server.base);
  const logs: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  for (const output of [server.child.stdout!, server.child.stderr!]) {
    createInterface({ input: output }).on("line", (line) => {
      if (line.startsWith("{")) logs.push(JSON.parse(line) as Record<string, unknown>);
      else if (/^\(node:\d+\) \w*Warning: /.test(line)) warnings.push(line);
    });
  }
  const cases: CaseReport[] = [];
  const { mintToken } = await import("../../functions/api/auth");
  const secret = readFileSync(`${server.dataDir}/jwt-secret`, "utf8").trim();
  return {
    base: server.base,
    pid:
      process.platform === "linux"
        ? serverProcess(server.child.pid!, "functions/api/node.ts")
        : server.child.pid!,
    dataDir: server.dataDir,
    logs,
    warnings,
    token: server.token,
    token_: (tenant, roles) => mintToken(secret, { tenant, roles: [...roles] as never }, 3600),
    request: (path, init = {}) => {
      const { token, ...rest } = init;
      const headers = new Headers(rest.headers);
      headers.set("authorization", `Bearer ${token ?? server.token}`);
      return fetch(`${server.base}${path}`, { ...rest, headers });
    },
    putLarge: (path, body, options) => putOverSocket(new URL(path, server.base), server.token, body, options),
    async attack(name, run, outcome) {
      await poller.command("mark");
      const result = await run();
      const window = await poller.command<PollWindow>("report");
      cases.push({ name, outcome: outcome(result), ...window, polls: window.count });
      expect(window.count, `${name}: the health poller got answers`).toBeGreaterThan(0);
      expect(window.maxMs, `${name}: the longest /v1/health meanwhile`).toBeLessThan(MAX_BLOCK_MS);
      return result;
    },
    note: () =>
      [
        "attack suite: case → outcome (longest / median /v1/health while it ran)",
        ...cases.map(
          (item) =>
            `  ${item.name} → ${item.outcome} (${item.maxMs.toFixed(0)} ms / ${item.medianMs.toFixed(1)} ms, ${item.polls} polls)`,
        ),
      ].join("\n"),
    stop: async () => {
      poller.stop();
      await server.stop();
    },
  };
}

/** A plain HTTP server on 127.0.0.1 (a free port) that counts its requests. */
export interface Upstream {
  readonly url: string;
  /** Requests received so far, by method and path. */
  readonly requests: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

/**
 * Starts `handle` on 127.0.0.1; bodies are read whole before it runs. `keepAliveTimeoutMs` is how
 * long an idle connection stays open (node:http's 5 s by default).
 */
export async function startUpstream(
  handle: (request: IncomingMessage, body: string, response: ServerResponse) => void | Promise<void>,
  options: { keepAliveTimeoutMs?: number } = {},
): Promise<Upstream> {
  const requests: Upstream["requests"] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      requests.push({ method: request.method ?? "", path: request.url ?? "", body });
      Promise.resolve(handle(request, body, response)).catch(() => response.destroy());
    });
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One JSON-RPC message a hostile MCP server got. */
export interface RpcMessage {
  readonly id?: string | number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: unknown;
}

/** A body written as it comes: chunks from `source` (awaited between writes), until it ends or the reader hangs up. */
export type WrittenBody = () => AsyncIterable<string | Buffer>;

/**
 * What a hostile MCP server answers each request with: a JSON body, an event stream written as
 * given (`sse`, whole events), any answer at all (`raw`: a status 200 with these headers and
 * bytes, e.g. a `content-encoding` the bytes do not hold), or nothing (`null`: 202 Accepted).
 * `initialize` and notifications are answered as a well-behaved server would unless the handler
 * says otherwise.
 */
export type McpBehaviour = (
  message: RpcMessage,
) =>
  | { json: unknown }
  | { sse: string | WrittenBody }
  | { raw: { headers: Record<string, string>; body: Buffer | WrittenBody } }
  | null
  | undefined;

/** One `tools/call` a hostile MCP server got: the bytes of its answer written, and its connection. */
export interface HostileCall {
  readonly id: string | number | undefined;
  /** Bytes of the answer's body written to the connection so far. */
  readonly written: number;
  /** Whether the connection it came on is closed (the client hung up, or the answer ended it). */
  readonly closed: boolean;
}

/**
 * A Streamable HTTP MCP server (stateless, no session) whose answers to `tools/list` and
 * `tools/call` the case decides. It counts the messages it got, answers to its own requests
 * (pings) included, and follows each `tools/call`'s answer and connection (`calls`). It never
 * closes an idle connection itself, so a connection seen closed is one the client hung up on.
 */
export async function startHostileMcp(
  behave: McpBehaviour,
): Promise<Upstream & { messages: RpcMessage[]; calls: HostileCall[] }> {
  const messages: RpcMessage[] = [];
  const calls: HostileCall[] = [];
  const upstream = await startUpstream(
    async (request, body, response) => {
      if (request.method !== "POST") {
        response.writeHead(405).end();
        return;
      }
      const message = JSON.parse(body) as RpcMessage;
      messages.push(message);
      const call =
        message.method === "tools/call"
          ? { id: message.id, written: 0, closed: request.socket.destroyed }
          : null;
      if (call) {
        calls.push(call);
        request.socket.once("close", () => {
          call.closed = true;
        });
      }
      const decided = behave(message);
      if (decided === undefined) {
        if (message.method === "initialize") {
          return void json(response, {
            jsonrpc: "2.0",
            id: message.id,
            result: {
              protocolVersion: "2025-06-18",
              capabilities: { tools: {} },
              serverInfo: { name: "hostile", version: "1" },
            },
          });
        }
        response.writeHead(202).end();
        return;
      }
      if (decided === null) {
        response.writeHead(202).end();
        return;
      }
      if ("json" in decided) return void json(response, decided.json);
      const { headers, body: answer } =
        "raw" in decided
          ? decided.raw
          : {
              headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
              body: decided.sse,
            };
      response.writeHead(200, headers);
      const counted = call ?? { written: 0 };
      if (typeof answer === "string" || Buffer.isBuffer(answer)) {
        counted.written += Buffer.byteLength(answer);
        response.end(answer);
        return;
      }
      for await (const chunk of answer()) {
        if (response.destroyed) return;
        counted.written += Buffer.byteLength(chunk);
        if (!response.write(chunk)) {
          // A reader that hung up never drains: its close ends the wait as well.
          await new Promise<void>((resolve) => {
            const done = () => {
              response.off("drain", done);
              response.off("close", done);
              resolve();
            };
            response.on("drain", done);
            response.on("close", done);
          });
        }
      }
      response.end();
    },
    { keepAliveTimeoutMs: 0 },
  );
  return { ...upstream, messages, calls };
}

function json(response: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}

/** One server-sent event carrying `message`. */
export function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Stores an MCP server document and a tool of `type` over it in `T` (`mcp` needs `toolName`). */
export async function putMcpServer(
  target: Target,
  project: string,
  server: string,
  url: string,
  tool: { name: string; type: "mcp" | "mcp_server"; toolName?: string },
  /** The document's deadline of every request to the server. */
  timeoutMs = 8000,
): Promise<void> {
  const T = `/v1/tenants/hostile/projects/${project}`;
  const put = async (path: string, body: string) => {
    const answer = await target.request(`${T}/${path}`, {
      method: "PUT",
      headers: { "content-type": "application/yaml" },
      body,
    });
    expect(answer.status, `${path}: ${await answer.clone().text()}`).toBeLessThan(300);
  };
  await put(`documents/mcp-servers/${server}.yaml`, `url: ${url}/mcp\ntimeoutMs: ${timeoutMs}\n`);
  await put(
    `tools/${tool.name}`,
    [
      `type: ${tool.type}`,
      "description: a hostile server's tool",
      "parameters:",
      `  server: ${server}`,
      ...(tool.toolName ? [`  toolName: ${tool.toolName}`] : []),
    ].join("\n"),
  );
}

/** 330 properties, 60 with a pattern (993 nodes): the costliest compile the caps allow, never seen before when `tag` is fresh. */
export function schemaAtTheCaps(tag: string): Record<string, unknown> {
  return {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 330 }, (_, i) => [
        `${tag}_${i}`,
        i < 60 ? { type: "string", pattern: `^${tag}${i}[a-z]*$` } : { type: "integer", minimum: i },
      ]),
    ),
  };
}

/** Stores a tool document (YAML) at `path` with the development token; the case fails unless it answers 201. */
export async function putTool(target: Target, path: string, yaml: string): Promise<void> {
  const put = await target.request(path, {
    method: "PUT",
    headers: { "content-type": "application/yaml" },
    body: yaml,
  });
  expect(put.status, await put.clone().text()).toBe(201);
}
