import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the s3rver started for this run (path-style, credentials S3RVER/S3RVER). */
    s3Endpoint: string;
  }
}

const CHILD_SCRIPT = fileURLToPath(new URL("./s3rver-child.mjs", import.meta.url));
const START_TIMEOUT_MS = 15_000;

/**
 * Vitest global setup: runs s3rver on 127.0.0.1 (free port, temp directory, bucket `vance-test`)
 * in a child process, because ListObjectsV2 pagination needs `--openssl-legacy-provider`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), "vance-s3rver-"));
  const child = spawn(process.execPath, ["--openssl-legacy-provider", CHILD_SCRIPT, directory], {
    // stdin stays open as a lifeline: the child exits when this process dies and the pipe closes.
    stdio: ["pipe", "pipe", "inherit"],
  });
  let port: number;
  try {
    port = await readPort(child);
  } catch (error) {
    child.kill("SIGKILL");
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  project.provide("s3Endpoint", `http://127.0.0.1:${port}`);

  return async () => {
    await stopChild(child);
    await rm(directory, { recursive: true, force: true });
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
      const { port } = JSON.parse(output.slice(0, newline)) as { port: number };
      cleanup();
      resolve(port);
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

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
