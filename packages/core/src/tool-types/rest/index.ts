import type { ToolOutcome } from "../../calls/built-in-tool";
import type { FieldError } from "../../errors";
import { bareHost, isIpLiteral } from "../../net/network-policy";
import { SecretScrubber } from "../../secrets/scrub";
import { inputsToJsonSchema } from "../inputs";
import { defineToolType, type InvocationContext } from "../tool-type";
import { type RestParameters, RestParametersSchema } from "./parameters";
import { buildRequest, parseUrl } from "./request";
import { type RestSendOptions, resolveSecrets, scrubOutcome, sendRestRequest } from "./send";
import { hasPlaceholder, secretNames, TemplateFiller } from "./templates";

// The machinery every tenant-configured HTTP call goes through, for the types that build their
// requests another way (`openapi` sub-tools).
export { describeError, httpError, type RestFailure } from "./errors";
export type { RestRequest } from "./request";
export {
  exchangeRest,
  isHttpSuccess,
  type RestExchange,
  type RestSendContext,
  type RestSendOptions,
  resolveSecrets,
  scrubOutcome,
  sendRestRequest,
} from "./send";
export { isDotSegment, secretNames, TemplateFiller } from "./templates";

/** `rest`: a generic HTTP call with parameter mapping. */
export const RestType = defineToolType({
  typeId: "rest",
  description:
    "Calls an HTTP endpoint. {input} placeholders in the URL, query values, header values and body template are filled from the call's params (a body string that is exactly {input} takes the param's JSON value); params no template uses go to the query string (GET, DELETE) or, without a body template, into a JSON body. ${secret:NAME} is the tenant's secret (PUT /v1/tenants/{tenant}/secrets/{NAME}); values are scrubbed from results and errors. A '.' or '..' path segment from a value is refused. Redirects are not followed; internal addresses are refused.",
  parametersSchema: RestParametersSchema,
  inputSchema: (parameters) => inputsToJsonSchema(parameters.inputs),
  check: (parameters, environment) => {
    const problems: FieldError[] = [];
    const url = parseUrl(parameters.url);
    if (url) {
      const host = bareHost(url.hostname);
      // Only literal addresses can be judged on write; host names resolve differently later.
      const problem = isIpLiteral(host) ? environment.networkPolicy.addressProblem(host) : null;
      if (problem) problems.push({ path: "url", message: problem });
    } else if (!hasPlaceholder(parameters.url)) {
      problems.push({ path: "url", message: "url is not a valid URL" });
    }
    if (parameters.bodyTemplate !== undefined && parameters.method === "GET") {
      problems.push({
        path: "bodyTemplate",
        message: "a GET request has no body; use query or another method",
      });
    }
    if (parameters.responseSchema) {
      const compiled = environment.jsonSchemas.compile(parameters.responseSchema);
      if (!compiled.ok)
        problems.push({ path: "responseSchema", message: `responseSchema is ${compiled.message}` });
    }
    return problems;
  },
  invoke: (_config, parameters, input, context) => invokeRest(parameters, input, context),
});

/**
 * The tool's timeout, and its response schema compiled by the instance's validator: once per
 * schema text, in the caller's tenant's compile turn (a large one on the worker thread).
 */
async function sendOptions(parameters: RestParameters, context: InvocationContext): Promise<RestSendOptions> {
  const { timeoutMs, responseSchema } = parameters;
  if (responseSchema === undefined) return { timeoutMs };
  const [compiled] = await context.jsonSchemas.compileAsTenant(context.caller.tenant, [responseSchema]);
  if (!compiled) throw new Error("compileAsTenant answered no schema for one asked");
  return { timeoutMs, responseSchema: compiled };
}

/** One call: secrets resolved, templates filled, the answer scrubbed of every secret value it used. */
async function invokeRest(
  parameters: RestParameters,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const names = secretNames([
    parameters.url,
    Object.values(parameters.query),
    Object.values(parameters.headers),
    parameters.bodyTemplate,
  ]);
  const secrets = await resolveSecrets(names, (name) => context.secret(name));
  if ("error" in secrets) return secrets;
  const scrubber = new SecretScrubber(secrets.values());
  const declared = parameters.inputs.map((declaration) => declaration.name);
  const built = buildRequest(parameters, new TemplateFiller(declared, input, secrets));
  return "error" in built
    ? scrubOutcome(built, scrubber)
    : sendRestRequest(built, await sendOptions(parameters, context), scrubber, context);
}
