import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A port nothing listens on now (the server is told it; a small race). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The local server as `npm start` runs it, with what its start-up banner printed. */
export interface LocalServer {
  readonly child: ChildProcess;
  readonly base: string;
  /** The server's data directory (its generated JWT secret lives there). */
  readonly dataDir: string;
  /** Everything the server printed up to its banner's first curl line. */
  readonly banner: string;
  /** The development token the banner printed. */
  readonly token: string;
  /** Stops the server (by PID), waits for it to exit, then removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts `functions/api/node.ts` (what `npm start` runs) in a fresh data directory on a free
 * port, with `VANCE_JWT_SECRET` unset so it makes its own, and waits for the start-up banner.
 */
export async function startLocalServer(
  options: { readonly env?: Record<string, string>; readonly timeoutMs?: number } = {},
): Promise<LocalServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-local-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { VANCE_JWT_SECRET: _unset, ...env } = process.env;
  const tsx = join(process.cwd(), "node_modules", ".bin", "tsx");
  const child = spawn(tsx, ["functions/api/node.ts"], {
    env: { ...env, PORT: String(port), VANCE_DATA_DIR: dataDir, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid, "SIGTERM");
      // The server settles usage counts and scheduled layer-index rebuilds before it exits;
      // removing its data directory before then races those writes (ENOTEMPTY in CI).
      const killer = setTimeout(() => child.pid && process.kill(child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  let out = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no start-up banner:\n${out}`)),
        // A readiness wait, not a time limit on the start: tsx compiling node.ts at load 20 takes long.
        options.timeoutMs ?? 100_000,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (/curl -s .*doc_getting_started/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${out}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, base, dataDir, banner: out, token: /export TOKEN=(\S+)/.exec(out)![1]!, stop };
}
