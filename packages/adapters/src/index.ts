export * from "./bundled";
export * from "./catalog-sync";
export * from "./json-logger";
// The SDK-backed client itself is `@vance/adapters/mcp`: what imports this index never loads the MCP SDK.
export { createMcpClient } from "./mcp/lazy";
export * from "./net/index";
export * from "./object-store/index";
export * from "./openapi/compile";
export * from "./openapi/parser";
export * from "./secret-store/index";
export * from "./state-store/index";
