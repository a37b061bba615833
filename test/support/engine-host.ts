import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { closeWhenBodyUnread } from "../../functions/api/keep-alive";
import { bearer, testApp } from "./app";
import { NODE_22 } from "./mcp-conformance";

/** One exchange an engine had with the service. */
export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** The JSON request body, when there was one. */
  readonly body: unknown;
  /** The JSON answer, when it was JSON. */
  readonly answer: unknown;
}

/** The service on a free port of 127.0.0.1 (the app `npm start` serves), recording what engines send it. */
export interface ServiceHost {
  readonly base: string;
  /** A platform token with every role (as `npm start` prints one). */
  readonly token: string;
  readonly calls: RecordedCall[];
  /** The calls to a path ending in `suffix`, optionally of one method. */
  callsTo(suffix: string, method?: string): RecordedCall[];
  close(): Promise<void>;
}

const jsonOf = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
};

/** Starts the app over a fresh data directory behind `@hono/node-server`, as `npm start` runs it. */
export async function serveService(env: Record<string, string> = {}): Promise<ServiceHost> {
  const { app } = await testApp({ env: { VANCE_STORE_SCAN_SECONDS: "0", ...env } });
  const calls: RecordedCall[] = [];
  const recording = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const body = request.body ? jsonOf(await request.clone().text()) : undefined;
    const response = await app.fetch(request);
    const json = (response.headers.get("content-type") ?? "").includes("json");
    const answer = json ? jsonOf(await response.clone().text()) : undefined;
    calls.push({ method: request.method, path: url.pathname, status: response.status, body, answer });
    return response;
  };
  const server = serve({ fetch: closeWhenBodyUnread(recording), port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const token = (await bearer({ tenant: "*", roles: ["read", "write", "admin"] })).authorization!.slice(7);
  return {
    base: `http://127.0.0.1:${port}`,
    token,
    calls,
    callsTo: (suffix, method) =>
      calls.filter((call) => call.path.endsWith(suffix) && (method === undefined || call.method === method)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a script run on Node 22 printed, and its JSON lines parsed. */
export interface ScriptRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly lines: Record<string, unknown>[];
}

/**
 * Runs a TypeScript file on the Node 22 binary (`ensureNode22`) through tsx, with `env` added to
 * this process's: the frameworks (`ai` 7, `openai` 7) need Node 22, the service stays on 20.
 */
export function runOnNode22(
  file: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(
      NODE_22,
      ["--import", "tsx", file],
      { env: { ...process.env, ...env, NO_COLOR: "1" }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        const lines = stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        resolve({ code, stdout, stderr, lines });
      },
    );
  });
}
