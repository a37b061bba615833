import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HOST = fileURLToPath(new URL("./lambda-host.mjs", import.meta.url));
const STOP_GRACE_MS = 2_000;

/** A built function bundle running in its own Node process, as one Lambda instance. */
export interface LambdaProcess {
  readonly pid: number;
  /** Sends one event and answers the handler's result; rejects with the handler's error. */
  invoke<T = unknown>(event: unknown): Promise<T>;
  /**
   * `invoke`, with the process's own readings at the answer: milliseconds since it started, and
   * the CPU time all its threads had used.
   */
  invokeMeasured<T = unknown>(event: unknown): Promise<Measured<T>>;
  /** What the function wrote to stdout and stderr so far (its log lines). */
  logs(): string;
  /** Kills the process (SIGTERM, then SIGKILL). Idempotent. */
  stop(): Promise<void>;
}

/** A handler's result with the process's clock readings when it was ready. */
export interface Measured<T> {
  readonly result: T;
  readonly processMs: number;
  readonly cpuMs: number;
}

/** What the host (lambda-host.mjs) answers to one event. */
interface Reply {
  readonly id: string;
  readonly result?: unknown;
  readonly processMs?: number;
  readonly cpuMs?: number;
  readonly error?: { readonly name: string; readonly message: string };
}

/**
 * Starts a built bundle's `lambda.mjs` in a fresh Node process, its folder as the working
 * directory and `env` as its whole environment (nothing of this process's leaks in), as Lambda
 * runs it. The bundle is imported at once; the first `invoke` waits for its start. `execPath`
 * is the Node binary (default: this process's; the deployed runtime is Node 22).
 */
export function startLambda(
  entry: string,
  env: Record<string, string>,
  options: { readonly execPath?: string } = {},
): LambdaProcess {
  const child: ChildProcess = fork(HOST, [entry], {
    ...(options.execPath ? { execPath: options.execPath } : {}),
    cwd: dirname(entry),
    env: { PATH: process.env.PATH ?? "", ...env },
    // No loader of this process (tsx, vitest) is inherited: the bundle runs as plain JavaScript.
    execArgv: [],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const pending = new Map<string, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  child.on("message", (reply: Reply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (reply.error)
      waiting.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
    else waiting.resolve(reply);
  });
  child.once("exit", (code, signal) => {
    for (const waiting of pending.values()) {
      waiting.reject(new Error(`the function's process exited (${signal ?? code}):\n${output}`));
    }
    pending.clear();
  });
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", kill);
  const send = (event: unknown) =>
    new Promise<Reply>((resolve, reject) => {
      const id = randomUUID();
      pending.set(id, { resolve, reject });
      child.send({ id, event });
    });

  return {
    pid: child.pid ?? -1,
    async invoke<T>(event: unknown) {
      return (await send(event)).result as T;
    },
    async invokeMeasured<T>(event: unknown) {
      const reply = await send(event);
      return { result: reply.result as T, processMs: reply.processMs ?? 0, cpuMs: reply.cpuMs ?? 0 };
    },
    logs: () => output,
    async stop() {
      process.off("exit", kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(kill, STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A copy of a built function's folder where Lambda would have it: outside the repository, so no
 * `node_modules` up the tree can stand in for a file or package the bundle lacks.
 */
export function deployedCopy(builtDir: string): { readonly entry: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), "vance-lambda-"));
  const dir = join(root, basename(builtDir));
  cpSync(builtDir, dir, { recursive: true });
  return { entry: join(dir, "lambda.mjs"), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The environment Lambda sets for every function (the part a handler may read). */
export function lambdaEnvironment(functionName: string): Record<string, string> {
  return {
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "1024",
    AWS_EXECUTION_ENV: "AWS_Lambda_nodejs22.x",
    AWS_REGION: "us-east-1",
    AWS_DEFAULT_REGION: "us-east-1",
    TZ: ":UTC",
  };
}

/**
 * SST's link of a resource, as Lambda hands it over: `SST_RESOURCE_{name}` holding the resource's
 * properties as JSON (a deploy encrypts the same into `resource.enc`; `Resource` reads both).
 */
export function linkedResources(
  resources: Record<string, Record<string, string>>,
  app = { name: "vance-server-tools", stage: "test" },
): Record<string, string> {
  return Object.fromEntries([
    ["SST_RESOURCE_App", JSON.stringify(app)],
    ...Object.entries(resources).map(([name, properties]) => [
      `SST_RESOURCE_${name}`,
      JSON.stringify(properties),
    ]),
  ]);
}

/** What a request to a function URL becomes: the API Gateway v2 (HTTP API) payload, version 2.0. */
export interface FunctionUrlEvent {
  readonly version: "2.0";
  readonly routeKey: "$default";
  readonly rawPath: string;
  readonly rawQueryString: string;
  readonly headers: Record<string, string>;
  readonly queryStringParameters?: Record<string, string>;
  readonly requestContext: Record<string, unknown>;
  readonly body?: string;
  readonly isBase64Encoded: boolean;
}

const URL_ID = "abcdefghijklmnopqrstuvwxyz012345";

/** A function URL event for `method path[?query]`, headers lower-cased as Lambda delivers them. */
export function functionUrlEvent(
  method: string,
  pathAndQuery: string,
  options: { readonly headers?: Record<string, string>; readonly body?: string } = {},
): FunctionUrlEvent {
  const [rawPath = "/", rawQueryString = ""] = pathAndQuery.split("?", 2);
  const domainName = `${URL_ID}.lambda-url.us-east-1.on.aws`;
  const headers = Object.fromEntries(
    Object.entries({
      host: domainName,
      "user-agent": "bundle-test",
      "x-forwarded-proto": "https",
      "x-forwarded-for": "203.0.113.7",
      ...options.headers,
    }).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const query = new URLSearchParams(rawQueryString);
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath,
    rawQueryString,
    headers,
    ...(rawQueryString === "" ? {} : { queryStringParameters: Object.fromEntries(query) }),
    requestContext: {
      accountId: "anonymous",
      apiId: URL_ID,
      domainName,
      domainPrefix: URL_ID,
      http: {
        method,
        path: rawPath,
        protocol: "HTTP/1.1",
        sourceIp: "203.0.113.7",
        userAgent: "bundle-test",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: false,
  };
}

/** What a function URL answers: the handler's result (API Gateway v2 response shape). */
export interface FunctionUrlResult {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly isBase64Encoded: boolean;
}

/** An EventBridge scheduled event, as a `sst.aws.Cron` delivers it. */
export function scheduledEvent(rule = "CatalogSync"): Record<string, unknown> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Scheduled Event",
    source: "aws.events",
    account: "123456789012",
    time: new Date().toISOString(),
    region: "us-east-1",
    resources: [`arn:aws:events:us-east-1:123456789012:rule/${rule}`],
    detail: {},
  };
}
