import type { ToolOutcome } from "../../builtins/built-in-tool";
import { boundByCaller, type CallerBoundSignal } from "../../concurrency";
import type { FieldError } from "../../errors";
import { compileJsonSchema } from "../../json-schema-validator";
import { bareHost, isIpLiteral } from "../../net/network-policy";
import { SecretScrubber } from "../../secrets/scrub";
import { inputsToJsonSchema } from "../inputs";
import { defineToolType, type InvocationContext } from "../tool-type";
import { describeError, fetchError, httpError, type RestFailure } from "./errors";
import { type RestParameters, RestParametersSchema } from "./parameters";
import { buildRequest, parseUrl, type RestRequest } from "./request";
import { responseValue } from "./response";
import { hasPlaceholder, secretNames, TemplateFiller } from "./templates";

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
      const compiled = compileJsonSchema(parameters.responseSchema);
      if (!compiled.ok)
        problems.push({ path: "responseSchema", message: `responseSchema is ${compiled.message}` });
    }
    return problems;
  },
  invoke: (_config, parameters, input, context) => invokeRest(parameters, input, context),
});

/** One call: secrets resolved, templates filled, the answer scrubbed of every secret value it used. */
async function invokeRest(
  parameters: RestParameters,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const secrets = await resolveSecrets(parameters, context);
  if ("error" in secrets) return secrets;
  const scrubber = new SecretScrubber(secrets.values());
  const declared = parameters.inputs.map((declaration) => declaration.name);
  const built = buildRequest(parameters, new TemplateFiller(declared, input, secrets));
  const outcome = "error" in built ? built : await call(built, parameters, scrubber, context);
  return "error" in outcome
    ? { ...outcome, message: scrubber.text(outcome.message) }
    : { value: scrubber.value(outcome.value) };
}

/**
 * Every `${secret:NAME}` the templates use, looked up in one go before anything is filled;
 * `SecretNotFound` for the first one (in template order) that the caller has no value for.
 */
async function resolveSecrets(
  parameters: RestParameters,
  context: InvocationContext,
): Promise<Map<string, string> | RestFailure> {
  const names = secretNames([
    parameters.url,
    Object.values(parameters.query),
    Object.values(parameters.headers),
    parameters.bodyTemplate,
  ]);
  const values = await Promise.all(names.map(async (name) => [name, await context.secret(name)] as const));
  const missing = values.find(([, value]) => value === undefined);
  if (missing) {
    return {
      error: "SecretNotFound",
      message: `the secret '${missing[0]}' is not set; a tenant sets it with PUT /v1/tenants/{tenant}/secrets/${missing[0]}`,
    };
  }
  return new Map(values as (readonly [string, string])[]);
}

async function call(
  request: RestRequest,
  parameters: RestParameters,
  scrubber: SecretScrubber,
  context: InvocationContext,
): Promise<ToolOutcome> {
  // The caller's signal ends the call too: a rest call inside a script whose deadline passed
  // must not keep its connection (and the script's budget) open until its own timeout.
  const bound = boundByCaller(context.signal, parameters.timeoutMs);
  try {
    return await send(request, bound, parameters, scrubber, context);
  } finally {
    bound.done();
  }
}

async function send(
  { url, init }: RestRequest,
  bound: CallerBoundSignal,
  parameters: RestParameters,
  scrubber: SecretScrubber,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const { signal } = bound;
  const host = bareHost(url.hostname);
  // `Cancelled` rather than `TimeoutError` when the caller ended first: this endpoint did not
  // overrun its timeoutMs, and a caller reading TimeoutError would raise the wrong limit.
  const stopped = (): RestFailure =>
    bound.callerEnded()
      ? {
          error: "Cancelled",
          message: `${init.method} ${url.host} was abandoned because its caller ended (${describeError(context.signal.reason)})`,
        }
      : {
          error: "TimeoutError",
          message: `${init.method} ${url.host} did not answer within ${parameters.timeoutMs} ms`,
        };

  let addresses: readonly string[];
  try {
    addresses = isIpLiteral(host) ? [host] : await untilAborted(context.runtime.resolveHost(host), signal);
  } catch (error) {
    if (signal.aborted) return stopped();
    return { error: "NetworkError", message: `could not resolve ${host}: ${describeError(error)}` };
  }
  if (addresses.length === 0) return { error: "NetworkError", message: `could not resolve ${host}` };
  for (const address of addresses) {
    const problem = context.networkPolicy.addressProblem(address);
    if (problem) return { error: "BlockedAddress", message: `refusing to call ${host}: ${problem}` };
  }

  let response: Response;
  let body: string;
  try {
    // A redirect could point at an internal address after the guard passed: never follow one.
    response = await context.runtime.fetch(url.href, { ...init, redirect: "manual", signal });
    body = await response.text();
  } catch (error) {
    if (signal.aborted) return stopped();
    return fetchError(error, init.method, url.host);
  }

  if (response.type === "opaqueredirect" || response.status < 200 || response.status > 299) {
    // Scrubbed before the body is cut, so no prefix of a secret survives the cut.
    return httpError(response, scrubber.text(body));
  }
  return responseValue(response, body, parameters.responseSchema);
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
