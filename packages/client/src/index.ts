export {
  type AnthropicManifest,
  type AnthropicWireTool,
  createVanceClient,
  type EmptyResponseDiagnosis,
  type EmptyResponseReport,
  type Invocation,
  type Manifest,
  type ManifestQuery,
  type ObservedLimit,
  type OpenAiManifest,
  type OpenAiWireTool,
  type ProcessRecord,
  type ProjectClient,
  type SpawnedProcess,
  type SpawnRequest,
  type ToolDocument,
  type ToolView,
  type VanceClient,
  type VanceClientOptions,
} from "./client.js";
export type { components, operations, paths } from "./openapi-types.js";
export {
  type ClientProblemCode,
  isProblem,
  type Problem,
  type ProblemCode,
  type ProblemCodeOf,
  VanceApiError,
} from "./problems.js";
export { isIdempotent, type RetryPolicy, retryingFetch } from "./retry.js";
