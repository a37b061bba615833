import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

/**
 * Starts and stops `@modelcontextprotocol/server-everything` (the reference MCP server, pinned in
 * package.json) in its `streamableHttp` mode, in a child process on a spare port, for the vitest
 * global setup and the benches alike.
 */

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 3_000;

export interface RunningEverythingServer {
  /** Its Streamable HTTP endpoint, `http://127.0.0.1:{port}/mcp`. */
  readonly url: string;
  readonly pid: number;
  /** Stops the child by its PID (SIGTERM, SIGKILL after a grace period). Idempotent. */
  stop(): Promise<void>;
}

/** The reference server's entry point, `dist/index.js` of the installed package. */
function entryPoint(): string {
  const require = createRequire(import.meta.url);
  return join(
    dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
}

/** Runs the reference server (`node dist/index.js streamableHttp`, `PORT` env) and waits until it listens. */
export async function startEverythingServer(): Promise<RunningEverythingServer> {
  const port = await sparePort();
  const child = spawn(process.execPath, [entryPoint(), "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    // It logs every request on stdout; only stderr says when it listens.
    stdio: ["ignore", "ignore", "pipe"],
  });
  const killOnExit = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  process.once("exit", killOnExit);
  try {
    await listening(child);
  } catch (error) {
    await stopChild(child);
    process.off("exit", killOnExit);
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        await stopChild(child);
        process.off("exit", killOnExit);
      })();
      return stopping;
    },
  };
}

function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function listening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error(`server-everything did not listen in time: ${output.slice(-500)}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (!/listening on port/i.test(output)) return;
      cleanup();
      // Drain the rest, so a full pipe never blocks the child.
      child.stderr?.resume();
      resolve();
    };
    const onExit = (code: number | null) =>
      fail(new Error(`server-everything exited before it listened (code ${code}): ${output.slice(-500)}`));
    function fail(error: Error) {
      cleanup();
      reject(error);
    }
    function cleanup() {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", fail);
    }
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", fail);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.kill(child.pid, "SIGTERM");
  const timer = setTimeout(() => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL");
  }, STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
