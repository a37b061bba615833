export {
  DEFAULT_MAX_MCP_CONNECTIONS,
  DEFAULT_MAX_MCP_TOOLS,
  SdkMcpClient,
  type SdkMcpClientOptions,
} from "./client";
export { createMcpClient } from "./lazy";
export { countRequests, MCP_TRAFFIC_LIMITS } from "./traffic";
