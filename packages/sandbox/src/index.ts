export { DEFAULT_LIMITS, MAX_STACK_BYTES, type SandboxLimits } from "./limits";
export {
  type CallTool,
  type ScriptOutcome,
  type ScriptRequest,
  ScriptSandbox,
  type ScriptSandboxOptions,
  type ScriptSandboxStats,
  type ScriptVariant,
  type ToolCallOutcome,
} from "./script-sandbox";
