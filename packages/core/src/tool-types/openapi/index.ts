import type { ToolOutcome } from "../../calls/built-in-tool";
import type { FieldError } from "../../errors";
import { bareHost, isIpLiteral, type NetworkPolicy } from "../../net/network-policy";
import { SecretScrubber } from "../../secrets/scrub";
import { resolveSecrets, scrubOutcome, secretNames, sendRestRequest, TemplateFiller } from "../rest/index";
import { defineToolType, type InvocationContext, type SourceTool } from "../tool-type";
import { operationTarget } from "./operations";
import { baseUrlOf, type OpenApiParameters, OpenApiParametersSchema, specUrl } from "./parameters";
import { buildOperationRequest } from "./request";
import { openSpec } from "./spec";

export {
  compiledKey,
  MAX_COMPILED_BYTES,
  ObjectStoreCompiledOperations,
} from "./compiled-store";
export {
  OPERATION_LIST_FORMAT,
  type OperationList,
  type OperationListOptions,
  type OperationTarget,
  operationTarget,
  type ParameterTarget,
  readOperations,
} from "./operations";
export { MAX_OPENAPI_SPEC_BYTES, type OpenApiParameters, OpenApiParametersSchema } from "./parameters";

/** `openapi`: a pack with one sub-tool per operation of an OpenAPI 3.x document. */
export const OpenApiType = defineToolType({
  typeId: "openapi",
  description:
    "A pack: every operation (GET, PUT, POST, DELETE, PATCH) of an OpenAPI 3.x document becomes a sub-tool {name}__{op}, op the operationId in snake_case (else method and path), shortened by rule to fit 64 characters. spec is a document path of the cascade or an https URL; only refs within the document are followed. The input schema holds the path, query and header parameters and the JSON request body as 'body'. baseUrl replaces the document's servers; headers (values may hold ${secret:NAME}) go with every call; operations (operationIds or 'METHOD /path') and tags (OpenAPI tags) limit the pack; a spec document is parsed once per ETag and its compiled list kept beside it. Calls are sent like rest calls: internal addresses refused, redirects not followed, secrets scrubbed.",
  parametersSchema: OpenApiParametersSchema,
  inputSchema: () => ({ type: "object" }),
  check: (parameters, environment) => [
    ...addressProblems("spec", specUrl(parameters.spec), environment.networkPolicy),
    ...addressProblems("baseUrl", baseUrlOf(parameters), environment.networkPolicy),
  ],
  sourcing: {
    kind: "pack",
    promptHint: (parameters) => parameters.promptHint,
    open: (config, parameters, context) => openSpec(config.name, parameters, context),
    invokeSubTool: (_config, parameters, tool, input, context) =>
      invokeOperation(parameters, tool, input, context),
  },
});

/** A URL whose host is a literal address the policy refuses; host names resolve differently later. */
function addressProblems(path: string, url: URL | null, policy: NetworkPolicy): FieldError[] {
  const host = url ? bareHost(url.hostname) : "";
  const problem = url && isIpLiteral(host) ? policy.addressProblem(host) : null;
  return problem ? [{ path, message: problem }] : [];
}

/** One operation call: the pack's header secrets resolved, the request built and sent the way `rest` sends. */
async function invokeOperation(
  parameters: OpenApiParameters,
  tool: SourceTool,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const target = operationTarget(tool);
  if (!target) {
    return {
      error: "InvalidRequest",
      message: `'${tool.sourceName}' is not an operation of an OpenAPI document`,
    };
  }
  const serverUrl = parameters.baseUrl ?? target.serverUrl;
  if (serverUrl === null) {
    return {
      error: "InvalidRequest",
      message: `${target.method} ${target.path}: the OpenAPI document names no absolute server URL; set baseUrl in the pack's parameters`,
    };
  }
  const templates = Object.entries(parameters.headers);
  const secrets = await resolveSecrets(secretNames(templates.map(([, template]) => template)), (name) =>
    context.secret(name),
  );
  if ("error" in secrets) return secrets;
  const scrubber = new SecretScrubber(secrets.values());
  const filler = new TemplateFiller([], {}, secrets);
  const headers = templates.map(([name, template]) => [name, filler.text(template).text] as const);
  const built = buildOperationRequest(target, serverUrl, input, headers);
  return "error" in built
    ? scrubOutcome(built, scrubber)
    : sendRestRequest(built, { timeoutMs: parameters.timeoutMs }, scrubber, context);
}
