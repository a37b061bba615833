import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Starts and stops s3rver in a child process, for the vitest global setup
 * (`test/setup/s3rver.ts`) and for benches alike: one place that knows how.
 */

const CHILD_SCRIPT = fileURLToPath(new URL("../setup/s3rver-child.mjs", import.meta.url));
const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

/** The bucket the child configures (s3rver needs bucket names of 3+ characters). */
export const S3RVER_BUCKET = "vance-test";
/** s3rver's fixed credentials. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

export interface RunningS3rver {
  /** Base URL, e.g. `http://127.0.0.1:43817` (use path-style addressing). */
  readonly endpoint: string;
  readonly bucket: string;
  /** PID of the child process running s3rver. */
  readonly pid: number;
  /** Stops the child (SIGTERM, SIGKILL after a grace period) and removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Runs s3rver on 127.0.0.1 (a free port unless `port` is given, fresh temp directory, bucket
 * `vance-test`) in a child process, because ListObjectsV2 pagination needs
 * `--openssl-legacy-provider` (DESIGN.md §5). With `directory`, its objects live there and are
 * kept when it stops (the local AWS stack restarts on its data).
 * The child also exits when this process dies (its stdin pipe closes), and a synchronous exit
 * hook kills it by PID (and removes its directory) if this process exits without calling `stop()`.
 */
export async function startS3rver(
  options: { port?: number; directory?: string } = {},
): Promise<RunningS3rver> {
  const keep = options.directory !== undefined;
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), "vance-s3rver-")));
  const args = [CHILD_SCRIPT, directory, String(options.port ?? 0), ...(keep ? ["--keep"] : [])];
  const removeDirectory = () => (keep ? Promise.resolve() : rm(directory, { recursive: true, force: true }));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", ...args], {
    // stdin stays open as a lifeline: the child exits when this process dies and the pipe closes.
    stdio: ["pipe", "pipe", "inherit"],
  });
  const killOnExit = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (!keep) rmSync(directory, { recursive: true, force: true });
  };
  process.once("exit", killOnExit);

  let port: number;
  try {
    port = await readPort(child);
  } catch (error) {
    await stopChild(child);
    process.off("exit", killOnExit);
    await removeDirectory();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: S3RVER_BUCKET,
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        await stopChild(child);
        process.off("exit", killOnExit);
        await removeDirectory();
      })();
      return stopping;
    },
  };
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(
      () => fail(new Error("s3rver did not report its port in time")),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const newline = output.indexOf("\n");
      if (newline < 0) return;
      cleanup();
      try {
        const { port } = JSON.parse(output.slice(0, newline)) as { port: number };
        resolve(port);
      } catch (error) {
        reject(error);
      }
    };
    const onExit = (code: number | null) =>
      fail(new Error(`s3rver exited before it was ready (code ${code})`));
    function fail(error: Error) {
      cleanup();
      reject(error);
    }
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", fail);
    }
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", fail);
  });
}

/** Stops the child by its PID: SIGTERM, then SIGKILL if it has not exited after a grace period. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
