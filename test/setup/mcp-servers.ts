import type { TestProject } from "vitest/node";
import { startEverythingServer } from "../support/mcp-everything";
import { startMcpTestServer } from "../support/mcp-test-server";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test MCP server's session endpoint, `http://127.0.0.1:{port}/mcp` (`test/support/mcp-test-server.ts`). */
    mcpTestServerUrl: string;
    /** `@modelcontextprotocol/server-everything` in `streamableHttp` mode, `http://127.0.0.1:{port}/mcp`. */
    mcpEverythingUrl: string;
  }
}

/**
 * Vitest global setup: the SDK-built test MCP server (in this process) and the reference server
 * `server-everything` (a child process, stopped by its PID), started side by side.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [own, everything] = await Promise.all([startMcpTestServer(), startEverythingServer()]);
  project.provide("mcpTestServerUrl", own.url);
  project.provide("mcpEverythingUrl", everything.url);
  return async () => {
    await Promise.all([own.stop(), everything.stop()]);
  };
}
