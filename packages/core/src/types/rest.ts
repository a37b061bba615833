import * as v from "valibot";
import type { ToolOutcome } from "../builtins/built-in-tool";
import { boundByCaller, type CallerBoundSignal } from "../concurrency";
import type { FieldError } from "../errors";
import { compileJsonSchema } from "../json-schema-validator";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  isIpLiteral,
  RESPONSE_TOO_LARGE_ERROR_NAME,
} from "../net/network-policy";
import { SecretScrubber } from "../secrets/scrub";
import { OpenJsonSchema } from "./common";
import { inputsToJsonSchema, ToolInputsSchema } from "./inputs";
import { defineToolType, type InvocationContext } from "./tool-type";

const RestParametersSchema = v.strictObject({
  url: v.pipe(
    v.string(),
    v.regex(
      /^https?:\/\/[^\s]+$/,
      "url must be an absolute http(s) URL; {input} placeholders and ${secret:NAME} may appear in it",
    ),
  ),
  method: v.optional(v.picklist(["GET", "POST", "PUT", "PATCH", "DELETE"]), "GET"),
  headers: v.optional(v.record(v.string(), v.string()), {}),
  query: v.optional(v.record(v.string(), v.string()), {}),
  bodyTemplate: v.optional(v.unknown()),
  responseSchema: v.optional(OpenJsonSchema),
  timeoutMs: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(30_000, "timeoutMs must be at most 30000")),
    10_000,
  ),
  inputs: v.optional(ToolInputsSchema, []),
});

type RestParameters = v.InferOutput<typeof RestParametersSchema>;

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
    } else if (!TEMPLATE.test(parameters.url)) {
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

/** `${secret:NAME}` or an `{input}` placeholder; one pass, so filled-in values are never re-expanded. */
const PLACEHOLDER = /\$\{secret:([A-Za-z0-9_.-]+)\}|\{([A-Za-z_$][A-Za-z0-9_$]*)\}/g;
const TEMPLATE = /\$\{secret:[A-Za-z0-9_.-]+\}|\{[A-Za-z_$][A-Za-z0-9_$]*\}/;
const WHOLE_INPUT = /^\{([A-Za-z_$][A-Za-z0-9_$]*)\}$/;
/** What the URL parser resolves as `.` or `..` (RFC 3986 §5.2.4, WHATWG "single/double-dot segment"). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
const ABSENT = Symbol("absent");
const ERROR_BODY_CHARS = 200;

type Failure = Extract<ToolOutcome, { error: string }>;

async function invokeRest(
  parameters: RestParameters,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const secrets = await resolveSecrets(parameters, context);
  if ("error" in secrets) return secrets;
  const scrubber = new SecretScrubber(secrets.values());
  const outcome = await call(parameters, new TemplateFiller(parameters, input, secrets), scrubber, context);
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
): Promise<Map<string, string> | Failure> {
  const names = new Set<string>();
  const collect = (template: unknown): void => {
    if (typeof template === "string") {
      for (const match of template.matchAll(PLACEHOLDER)) if (match[1] !== undefined) names.add(match[1]);
    } else if (Array.isArray(template)) {
      for (const item of template) collect(item);
    } else if (typeof template === "object" && template !== null) {
      for (const item of Object.values(template)) collect(item);
    }
  };
  collect(parameters.url);
  collect(Object.values(parameters.query));
  collect(Object.values(parameters.headers));
  collect(parameters.bodyTemplate);
  const values = await Promise.all(
    [...names].map(async (name) => [name, await context.secret(name)] as const),
  );
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
  parameters: RestParameters,
  templates: TemplateFiller,
  scrubber: SecretScrubber,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const built = buildRequest(parameters, templates);
  if ("error" in built) return built;
  const { url, init } = built;
  const host = bareHost(url.hostname);
  // The caller's signal ends the call too: a rest call inside a script whose deadline passed
  // must not keep its connection (and the script's budget) open until its own timeout.
  const bound = boundByCaller(context.signal, parameters.timeoutMs);
  try {
    return await send(url, init, host, bound, parameters, scrubber, context);
  } finally {
    bound.done();
  }
}

async function send(
  url: URL,
  init: RequestInit & { method: string },
  host: string,
  bound: CallerBoundSignal,
  parameters: RestParameters,
  scrubber: SecretScrubber,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const { signal } = bound;
  // `Cancelled` rather than `TimeoutError` when the caller ended first: this endpoint did not
  // overrun its timeoutMs, and a caller reading TimeoutError would raise the wrong limit.
  const stopped = (): Failure =>
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
    if (error instanceof Error && error.name === BLOCKED_ADDRESS_ERROR_NAME) {
      return { error: "BlockedAddress", message: error.message };
    }
    if (error instanceof Error && error.name === RESPONSE_TOO_LARGE_ERROR_NAME) {
      return { error: "ResponseTooLarge", message: `${init.method} ${url.host}: ${error.message}` };
    }
    return { error: "NetworkError", message: `${init.method} ${url.host} failed: ${describeError(error)}` };
  }

  if (response.type === "opaqueredirect" || response.status < 200 || response.status > 299) {
    // Scrubbed before the body is cut, so no prefix of a secret survives the cut.
    return httpError(response, scrubber.text(body));
  }
  const value = parseBody(response, body);
  if (value === ABSENT) {
    return {
      error: "ResponseParseError",
      message: `the response is labelled ${response.headers.get("content-type")} but is not valid JSON`,
    };
  }
  if (parameters.responseSchema) {
    const compiled = compileJsonSchema(parameters.responseSchema);
    if (!compiled.ok)
      return { error: "ResponseSchemaError", message: `responseSchema is ${compiled.message}` };
    const problems = compiled.validate(value);
    if (problems.length > 0) {
      return {
        error: "ResponseSchemaError",
        message: `the response does not match responseSchema: ${summarise(problems)}`,
      };
    }
  }
  return { value };
}

function buildRequest(
  parameters: RestParameters,
  templates: TemplateFiller,
): { url: URL; init: RequestInit & { method: string } } | Failure {
  const urlText = fillUrl(parameters.url, templates);
  if (typeof urlText !== "string") return urlText;
  const url = parseUrl(urlText);
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return {
      error: "InvalidRequest",
      message: "the URL is not a valid http(s) URL once its placeholders are filled",
    };
  }
  for (const [name, template] of Object.entries(parameters.query)) {
    const filled = templates.text(template);
    if (!filled.absent) url.searchParams.append(name, filled.text);
  }
  const headers = new Headers();
  for (const [name, template] of Object.entries(parameters.headers)) {
    const filled = templates.text(template);
    if (filled.absent) continue;
    try {
      headers.set(name, filled.text);
    } catch {
      // The platform's message quotes the value, which may hold a secret.
      return { error: "InvalidRequest", message: `header '${name}' has an invalid name or value` };
    }
  }
  const body = parameters.bodyTemplate === undefined ? ABSENT : templates.json(parameters.bodyTemplate);

  const method = parameters.method;
  const unreferenced = templates.unreferencedInputs();
  let payload: unknown = body;
  if (method === "GET" || method === "DELETE") {
    for (const [name, value] of unreferenced) appendQuery(url.searchParams, name, value);
  } else if (parameters.bodyTemplate === undefined) {
    payload = Object.fromEntries(unreferenced);
  }
  if (payload !== ABSENT && !headers.has("content-type")) headers.set("content-type", "application/json");
  if (!headers.has("accept")) headers.set("accept", "application/json, text/plain;q=0.9, */*;q=0.5");
  return {
    url,
    init: { method, headers, ...(payload === ABSENT ? {} : { body: JSON.stringify(payload) }) },
  };
}

/**
 * Fills the URL template, its path segment by segment: the URL parser would resolve a `.` or `..`
 * segment and so walk the upstream path, so a value that makes one is refused rather than sent.
 * (`/` in a value is already encoded.)
 */
function fillUrl(template: string, templates: TemplateFiller): string | Failure {
  const fill = (part: string) => templates.text(part, encodeURIComponent).text;
  // The schema guarantees `http(s)://`; placeholders hold no `/`, `?` or `#`, so these split the template as they split the URL.
  const authority = template.indexOf("://") + 3;
  const authorityLength = template.slice(authority).search(/[/?#]/);
  // Without a path in the template the URL's path is `/`, whatever the values are.
  if (authorityLength === -1 || template[authority + authorityLength] !== "/") return fill(template);
  const pathStart = authority + authorityLength;
  const pathLength = template.slice(pathStart).search(/[?#]/);
  const pathEnd = pathLength === -1 ? template.length : pathStart + pathLength;
  const segments = template.slice(pathStart, pathEnd).split("/");
  const filled: string[] = [];
  for (const segment of segments) {
    const text = fill(segment);
    if (TEMPLATE.test(segment) && DOT_SEGMENT.test(text)) {
      return {
        error: "InvalidRequest",
        message: `a value would make the URL path segment '${segment}' read '${text}', which would change the upstream path; '.' and '..' are refused there`,
      };
    }
    filled.push(text);
  }
  return fill(template.slice(0, pathStart)) + filled.join("/") + fill(template.slice(pathEnd));
}

/**
 * Fills templates for one call with the secrets already resolved, and records which inputs are
 * referenced (the rest go to query or body).
 */
class TemplateFiller {
  private readonly referenced = new Set<string>();
  private readonly names: ReadonlySet<string>;

  constructor(
    parameters: RestParameters,
    private readonly input: Readonly<Record<string, unknown>>,
    private readonly secrets: ReadonlyMap<string, string>,
  ) {
    this.names = new Set([...parameters.inputs.map((declared) => declared.name), ...Object.keys(input)]);
  }

  /** Interpolates a string; `absent` says it referenced an input the call did not give. */
  text(
    template: string,
    encode: (text: string) => string = (text) => text,
  ): { text: string; absent: boolean } {
    let absent = false;
    const text = template.replace(PLACEHOLDER, (whole, secretName?: string, inputName?: string) => {
      if (secretName !== undefined) return encode(this.secrets.get(secretName) ?? "");
      if (inputName === undefined || !this.names.has(inputName)) return whole;
      this.referenced.add(inputName);
      const value = this.input[inputName];
      if (value === undefined || value === null) {
        absent = true;
        return "";
      }
      return encode(stringify(value));
    });
    return { text, absent };
  }

  /** Fills a JSON body template: a string that is exactly `{input}` becomes the input's typed value. */
  json(template: unknown): unknown {
    if (typeof template === "string") {
      const name = WHOLE_INPUT.exec(template)?.[1];
      if (name === undefined || !this.names.has(name)) return this.text(template).text;
      this.referenced.add(name);
      return this.input[name] === undefined ? ABSENT : this.input[name];
    }
    if (Array.isArray(template)) {
      return template.map((item) => {
        const filled = this.json(item);
        return filled === ABSENT ? null : filled;
      });
    }
    if (typeof template === "object" && template !== null) {
      const entries = Object.entries(template).map(([key, item]) => [key, this.json(item)] as const);
      return Object.fromEntries(entries.filter(([, item]) => item !== ABSENT));
    }
    return template;
  }

  /** Inputs given to the call that no template mentions, in call order. */
  unreferencedInputs(): [string, unknown][] {
    return Object.entries(this.input).filter(
      ([name, value]) => !this.referenced.has(name) && value !== undefined,
    );
  }
}

function httpError(response: Response, body: string): Failure {
  const status = response.status;
  const label = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}`;
  if (response.type === "opaqueredirect" || (status >= 300 && status <= 399)) {
    const location = response.headers.get("location");
    return {
      error: "HttpError",
      message: `${label}: redirects are not followed${location ? ` (Location: ${location})` : ""}`,
      status,
    };
  }
  return { error: "HttpError", message: `${label}: ${body.slice(0, ERROR_BODY_CHARS)}`, status };
}

function parseBody(response: Response, body: string): unknown {
  if (body === "") return null;
  const type = response.headers.get("content-type") ?? "";
  if (!/^application\/([\w.-]+\+)?json\b/i.test(type)) return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return ABSENT;
  }
}

function appendQuery(params: URLSearchParams, name: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value) && value.every((item) => typeof item !== "object" || item === null)) {
    for (const item of value) params.append(name, stringify(item));
  } else {
    params.append(name, stringify(value));
  }
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** URL host names keep IPv6 in brackets; resolvers and policies want it bare. */
function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
}

function summarise(errors: readonly FieldError[]): string {
  const shown = errors.slice(0, 5).map((error) => `/${error.path.split(".").join("/")} ${error.message}`);
  return errors.length > shown.length
    ? `${shown.join("; ")}; and ${errors.length - shown.length} more`
    : shown.join("; ");
}
