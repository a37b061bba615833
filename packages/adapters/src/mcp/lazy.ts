import type { McpClient } from "@vance/core";
import type { SdkMcpClientOptions } from "./client";

/**
 * An `SdkMcpClient` made at its first call. The MCP SDK, and zod beneath it, are a third of the
 * API's bundle: a cold start that reaches no MCP server does not load them. A failed load is
 * not kept, so the next call tries again.
 *
 * @example
 * const mcp = createMcpClient({ fetch: createGuardedFetch(policy) });
 */
export function createMcpClient(options: SdkMcpClientOptions): McpClient {
  let client: Promise<McpClient> | undefined;
  const loaded = (): Promise<McpClient> => {
    client ??= import("./client").then(
      ({ SdkMcpClient }) => new SdkMcpClient(options),
      (error: unknown) => {
        client = undefined;
        throw error;
      },
    );
    return client;
  };
  return {
    listTools: async (target, signal) => (await loaded()).listTools(target, signal),
    callTool: async (target, name, args, signal) => (await loaded()).callTool(target, name, args, signal),
  };
}
