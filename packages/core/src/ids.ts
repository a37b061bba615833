/**
 * The rules of names and ids, one per file under `ids/` (each rule gives its schema, its assert
 * and its message), re-exported here so every module imports them from one place.
 */
export { commaList } from "./ids/comma-list";
export {
  assertDocumentPath,
  DocumentPathSchema,
  documentPathProblem,
  MAX_PATH_LENGTH,
  STORE_META_SUFFIX,
  STORE_TEMP_SUFFIX,
} from "./ids/document-path";
export { ID_PATTERN } from "./ids/id";
export { LabelSchema } from "./ids/label";
export {
  innermostFirst,
  layerProjectOf,
  layerProjectsOf,
  type ReadLayers,
  readLayersOf,
} from "./ids/layers";
export { META_TOOL } from "./ids/meta-tools";
export { INSTANCE_PATTERN, ModelIdSchema, modelIdProblem, SLUG_PATTERN } from "./ids/model-id";
export { operationOf, PACK_SEPARATOR, packOf } from "./ids/pack";
export {
  assertProcessId,
  PROCESS_ID_PATTERN,
  ProcessIdSchema,
  processIdProblem,
} from "./ids/process-id";
export { assertProjectId, isProjectId, ProjectIdSchema, TENANT_PROJECT } from "./ids/project";
export { ruleOfIssue } from "./ids/rule-schema";
export {
  assertSecretName,
  SECRET_NAME_PATTERN,
  SecretNameSchema,
  secretNameProblem,
} from "./ids/secret-name";
export {
  COMPILED_PREFIX,
  isCompiledKey,
  layerDocumentKey,
  layerKeyPrefix,
  parseLayerDocumentKey,
} from "./ids/store-keys";
export { assertTenantId, isTenantId, TenantIdSchema } from "./ids/tenant";
export {
  isToolDocumentPath,
  SPEC_DOCUMENTS_DIR,
  TOOL_DOCUMENTS_DIR,
  toolDocumentPath,
  toolNameFromPath,
} from "./ids/tool-document";
export {
  assertToolName,
  InvocableToolNameSchema,
  invocableToolNameProblem,
  SubToolNameSchema,
  subToolNameProblem,
  TOOL_NAME_PATTERN,
  ToolNameSchema,
  toolNameProblem,
} from "./ids/tool-name";
