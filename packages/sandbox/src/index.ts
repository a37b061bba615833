export type { ScriptOutcome, ToolCallOutcome } from "./engine";
export { DEFAULT_LIMITS, MAX_STACK_BYTES, type SandboxLimits } from "./limits";
export { LOG_LIMITS, type ScriptLogs } from "./log-tail";
export { installedQuickJSWasm } from "./module";
export {
  DEFAULT_WORKER_URL,
  POOL_DEFAULTS,
  ScriptPool,
  type ScriptPoolOptions,
  type ScriptPoolStats,
  type ScriptRequest,
} from "./script-pool";
export type { CallTool } from "./script-thread-handle";
export { serveTasks, type TaskHandler } from "./serve-tasks";
export {
  type TaskOutcome,
  TaskPool,
  type TaskPoolOptions,
  type TaskPoolStats,
  type TaskRequest,
} from "./task-pool";
