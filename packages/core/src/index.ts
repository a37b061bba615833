export { BUILT_IN_TOOLS, type BuiltInTool, invokeTool, META_TOOLS, whoami } from "./builtins/index";
export { MIB } from "./cache/byte-cache";
export { CacheCounters, CacheRegistry, type CacheReport, lruExtent, MemoStats } from "./cache/cache-registry";
export { CountedLru } from "./cache/counted-lru";
export { DEFAULT_TENANT_SHARE } from "./cache/tenant-byte-cache";
export { CallBudget, type CallLimits, CallRefusal, DEFAULT_CALL_LIMITS } from "./calls/call-budget";
export { CAPABILITY_FLOOR, inCapabilityFloor } from "./calls/capability-floor";
export { CascadeRead } from "./cascade/cascade-read";
export { addressedLayer, type BundledDocuments, DocumentCascade } from "./cascade/document-cascade";
export {
  CATALOG_MARKER,
  Generations,
  layerMarker,
  markerOfDocumentKey,
  requestMarkers,
} from "./cascade/generations";
export { StoreScan } from "./cascade/store-scan";
export {
  CATALOG_KEY,
  type CatalogDocument,
  CatalogEditor,
  type CatalogError,
  catalogDocumentsFromBundled,
  catalogFileCurrent,
  catalogView,
  compileCatalog,
  compileCatalogFile,
  logCatalogErrors,
  MODEL_SIZES,
  ModelCatalogService,
  ModelPicker,
  ModelSpecSchema,
  ObservedToolLimits,
  PLATFORM_SCOPE,
  PROVIDER_FILE,
  ProviderSpecSchema,
  parseCatalogDocument,
  parseToolLimitFromError,
  ToolBudgetService,
} from "./catalog/index";
export { mapWithConcurrency } from "./concurrency";
export { unknownFieldMessage } from "./config/issue-messages";
export { type ServerToolConfig, ServerToolConfigSchema } from "./config/schema";
export { issuesToFieldErrors, loadYamlParser, MAX_YAML_DOCUMENT_CHARS, parseYaml } from "./config/yaml";
export { DiagnosticWebhook } from "./diagnostics/diagnostic-webhook";
export { EmptyResponseDiagnosis, EmptyResponseReportSchema } from "./diagnostics/empty-response";
export { DiscoveryApi } from "./discovery/discovery-api";
export {
  buildSearchIndex,
  type SearchDocument,
  SearchIndex,
  type SearchIndexData,
} from "./discovery/search-index";
export {
  inProcessSearchIndexBuilder,
  type SearchIndexBuilder,
  searchIndexView,
} from "./discovery/search-index-cache";
export { type DispatchRequest, type DispatchResult, ToolDispatcher } from "./dispatch/tool-dispatcher";
export { contentTypeForPath } from "./documents/content-type";
export { DocumentService } from "./documents/document-service";
export {
  ERROR_STATUS,
  ERROR_STATUS_OVERRIDES,
  type ErrorCode,
  Errors,
  type FieldError,
  isErrorCode,
  StoreUnavailableError,
  VanceError,
} from "./errors";
export {
  assertDocumentPath,
  assertProjectId,
  assertSecretName,
  assertTenantId,
  assertToolName,
  COMPILED_PREFIX,
  commaList,
  DocumentPathSchema,
  documentPathProblem,
  ID_PATTERN,
  INSTANCE_PATTERN,
  InvocableToolNameSchema,
  invocableToolNameProblem,
  isCompiledKey,
  isProjectId,
  isTenantId,
  LabelSchema,
  MAX_PATH_LENGTH,
  META_TOOL,
  ModelIdSchema,
  PROCESS_ID_PATTERN,
  ProcessIdSchema,
  ProjectIdSchema,
  packOf,
  processIdProblem,
  ruleOfIssue,
  SECRET_NAME_PATTERN,
  SecretNameSchema,
  SLUG_PATTERN,
  SPEC_DOCUMENTS_DIR,
  STORE_META_SUFFIX,
  STORE_TEMP_SUFFIX,
  SubToolNameSchema,
  secretNameProblem,
  TENANT_PROJECT,
  TenantIdSchema,
  TOOL_DOCUMENTS_DIR,
  TOOL_NAME_PATTERN,
  ToolNameSchema,
  toolDocumentPath,
  toolNameFromPath,
  toolNameProblem,
} from "./ids";
export type { JsonSchema } from "./json-schema";
export { type BoundedJsonSchema, boundJsonSchema } from "./json-schema-bound";
export { jsonSchemaSizeProblem } from "./json-schema-size";
export { JSON_SHAPE_LIMITS, type JsonShapeLimits, jsonShapeProblem } from "./json-shape";
export {
  BLOCKED_ADDRESS_ERROR_NAME,
  bareHost,
  createNetworkPolicy,
  type NetworkPolicy,
  RESPONSE_TOO_LARGE_ERROR_NAME,
} from "./net/network-policy";
export { byString, compareStrings } from "./order";
export {
  type CompiledOperations,
  type DeleteOptions,
  type DeleteResult,
  type FireOnceStore,
  type GenerationStore,
  type GetOptions,
  type GetResult,
  type HostResolver,
  type HttpExchange,
  type HttpExchangeAnswer,
  type HttpExchangeRequest,
  type HttpFetch,
  isNotModified,
  type ListOptions,
  type ListPage,
  type LiveProcesses,
  type Logger,
  MCP_ERROR_RESPONSE_NAME,
  MCP_PROTOCOL_ERROR_NAME,
  MCP_TIMEOUT_ERROR_NAME,
  type McpCallResult,
  type McpClient,
  McpFailure,
  type McpFailureReason,
  type McpServerTarget,
  type McpToolInfo,
  type McpToolList,
  type ObjectAudit,
  type ObjectMeta,
  type ObjectStore,
  type ObservedLimitStore,
  type ObservedToolLimit,
  type OpenApiCompileRequest,
  type OpenApiCompiler,
  type ProcessKey,
  type ProcessRecord,
  type ProcessStore,
  type ProcessWithGenerations,
  type PutOptions,
  type PutResult,
  type QuotaStore,
  type ScriptRunner,
  type ScriptRunRequest,
  type SecretEntry,
  type SecretStore,
  type StateStore,
  type StoredObject,
  silentLogger,
  type ToolRuntime,
  type ToolUsageDelta,
  type ToolUsageKey,
  type ToolUsageRow,
  USAGE_TOKEN_WINDOW_MS,
  type UsageStore,
} from "./ports/index";
export { ProcessService } from "./processes/process-service";
export {
  DEFAULT_QUOTAS,
  QUOTA_SETTINGS,
  type QuotaName,
  type QuotaSettings,
  TenantQuotas,
} from "./quotas/tenant-quotas";
export { loadedRe2, loadRe2 } from "./re2";
export {
  HintEntrySchema,
  RecipeEntrySchema,
  RecipeResolver,
  TOOL_SEARCH_AUTO_SIZE,
} from "./recipes/recipe-resolver";
export { SecretScrubber } from "./secrets/scrub";
export { SecretService } from "./secrets/secret-service";
export { subToolOp } from "./sources/sub-tools";
export { DEFAULT_SOURCE_CACHE_BYTES, ToolSources } from "./sources/tool-sources";
export {
  type Classification,
  type ClassificationInput,
  classifyTools,
  type SurfaceTool,
  toolTokens,
} from "./surface/classify";
export { DemotionLog } from "./surface/demotion-log";
export { cutAtWord, ToolHintCache, toolHint } from "./surface/discovery";
export { ProcessBookkeeping } from "./surface/process-bookkeeping";
export {
  DEFAULT_PROCESS_IDLE_TTL_MS,
  ProcessRecordCaches,
  ProcessRecords,
  readProcessRecord,
  SpawnRequestSchema,
  storedProcessRecord,
} from "./surface/process-records";
export { packSubFamily, toolFamily } from "./surface/tool-family";
export { type Manifest, ToolSurface } from "./surface/tool-surface";
export { manifestBytes, manifestJson, wireTool } from "./surface/wire";
export {
  ServiceMetrics,
  serverSpanUnder,
  TRACER_NAME,
  TraceAttributes,
  tracedExchange,
  tracedFetch,
  tracedScripts,
} from "./telemetry/telemetry";
export { controlCharacterProblem, stripControls, trimChar } from "./text";
export { TimeAllowance } from "./time-allowance";
export { builtInToolTypes } from "./tool-types/builtin-types";
export { OpenJsonSchema } from "./tool-types/common";
export { mcpServerDocumentJsonSchema, toolDocumentJsonSchema } from "./tool-types/document-schemas";
export { NO_INPUT_SCHEMA } from "./tool-types/inputs";
export { loadLazyEngines } from "./tool-types/lazy-engines";
export { McpServerCaches, mcpOutcome } from "./tool-types/mcp";
export {
  MCP_SERVER_DOCUMENTS_DIR,
  mcpServerNameFromPath,
  parseMcpServerDocument,
} from "./tool-types/mcp-server";
export {
  MAX_OPENAPI_SPEC_BYTES,
  ObjectStoreCompiledOperations,
  OpenApiParametersSchema,
  OpenApiType,
  operationTarget,
  readOperations,
} from "./tool-types/openapi/index";
export { openApiShapeProblem } from "./tool-types/openapi/spec-shape";
export { parseToolDocument } from "./tool-types/parse";
export { stripJsonFence } from "./tool-types/prompt-template/index";
export { ToolTypeRegistry } from "./tool-types/registry";
export { RestType } from "./tool-types/rest/index";
export { scriptSyntaxMessage, scriptSyntaxProblem } from "./tool-types/script-syntax";
export { MAX_SCRIPT_TIMEOUT_MS, UNBINDABLE_INPUT_NAMES } from "./tool-types/scripted";
export {
  defineToolType,
  type InvocationContext,
  type SourceContext,
  type SourceList,
  type SourceTool,
} from "./tool-types/tool-type";
export {
  CompiledLayerBuilder,
  CompiledToolLayers,
  compiledLayerKey,
  compiledToolsFingerprint,
  type RebuildOutcome,
} from "./tools/compiled-tool-layers";
export {
  DEFAULT_PARSED_CACHE_BYTES,
  DEFAULT_SNAPSHOT_CACHE_BYTES,
  type PackSource,
  type ResolvedTool,
  reservedName,
  ServerToolService,
  type ToolSnapshot,
  type WriteOptions,
} from "./tools/server-tool-service";
export { ToolUsage } from "./usage/tool-usage";
export {
  type CompiledSchemaSource,
  type InputSchemaCheck,
  JSON_SCHEMA_CACHE_LIMITS,
  JsonSchemaValidator,
  OFFLOAD_MIN_NODES,
  type SchemaCompileCounts,
  type SchemaCompileOffload,
} from "./validation/json-schema-validator";
