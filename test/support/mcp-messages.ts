/** An MCP `initialize` request as a client named `client` sends it (JSON-RPC id 1). */
export function initializeMessage(client: string, protocolVersion = "2025-06-18") {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: client, version: "1" } },
  } as const;
}
