export {
  type ClientTool,
  type EmptyResponse,
  type EngineEvent,
  type EngineOptions,
  EngineProcess,
  type SpawnOptions,
  staticPrefix,
  type ToolCall,
  type ToolCallResult,
  ToolLimitError,
  type Turn,
  VanceEngine,
  type WireFormat,
} from "./engine.js";
export {
  mayBeToolLimit,
  ProviderHttpError,
  type ProviderRejection,
  providerRejection,
} from "./provider-errors.js";
export { postJson } from "./send.js";
