import * as v from "valibot";
import type { ToolOutcome } from "../../calls/built-in-tool";
import { MODEL_SIZES } from "../../catalog/model-catalog";
import { ModelIdSchema } from "../../ids";
import { jsonShapeProblem } from "../../json-shape";
import type { LlmEndpoint } from "../../ports/tool-runtime";
import { SecretScrubber } from "../../secrets/scrub";
import { inputsToJsonSchema, type ToolInput, ToolInputsSchema } from "../inputs";
import { exchangeRest, isHttpSuccess, scrubOutcome } from "../rest/index";
import { defineToolType, type InvocationContext } from "../tool-type";
import { LLM_WIRES, type LlmAnswer } from "./llm-wire";

/** How much of an endpoint's error body an `LlmHttpError` quotes (scrubbed first). */
const ERROR_BODY_CHARS = 200;

const PositiveWhole = (name: string, max: number) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.integer(`${name} must be an integer`),
    v.minValue(1, `${name} must be at least 1`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

/** The `parameters` of a `prompt_template` tool document (spec §3). */
export const PromptTemplateParametersSchema = v.pipe(
  v.strictObject({
    /** The fixed system message: the same bytes every call, so endpoints can cache it. */
    promptPrefix: v.pipe(v.string(), v.minLength(1, "promptPrefix must not be empty")),
    /** A catalog model, `instance/slug`; wins over `modelSize`. */
    model: v.optional(ModelIdSchema),
    /** The first model of this size (by slug) in the tenant's default instance. */
    modelSize: v.optional(v.picklist(MODEL_SIZES, `modelSize must be one of ${MODEL_SIZES.join(", ")}`)),
    inputs: v.optional(ToolInputsSchema, [
      { name: "input", type: "string", description: "Text for the model", required: true },
    ]),
    /** `json`: the answer must be one JSON value, and the tool returns it parsed. */
    responseFormat: v.optional(v.picklist(["text", "json"], "responseFormat must be text or json"), "text"),
    maxTokens: v.optional(PositiveWhole("maxTokens", 200_000)),
    timeoutMs: v.optional(PositiveWhole("timeoutMs", 120_000), 30_000),
  }),
  v.check(
    (parameters) => parameters.model !== undefined || parameters.modelSize !== undefined,
    "one of model and modelSize is required",
  ),
);

export type PromptTemplateParameters = v.InferOutput<typeof PromptTemplateParametersSchema>;

/** `prompt_template`: an LLM call with a fixed prompt prefix — a mini-agent (spec §3). */
export const PromptTemplateType = defineToolType({
  typeId: "prompt_template",
  description:
    "Calls a model of the model catalog once: promptPrefix is the system message, the call's inputs are rendered into the user message. model names a catalog model (instance/slug); else modelSize picks the first model of that size in the default instance. responseFormat json returns the answer parsed. Errors: LlmHttpError (with status), TimeoutError, LlmEmptyResponse, LlmInvalidJson.",
  parametersSchema: PromptTemplateParametersSchema,
  inputSchema: (parameters) => inputsToJsonSchema(parameters.inputs),
  invoke: (_config, parameters, input, context) => invokePromptTemplate(parameters, input, context),
});

/**
 * The inputs as the user message: a single input is its text alone; several are each wrapped in
 * a tag of their name (`<topic>…</topic>`), in declaration order. Absent optional inputs are left out.
 */
export function renderInputs(inputs: readonly ToolInput[], input: Readonly<Record<string, unknown>>): string {
  const given = inputs.filter(
    (declared) => input[declared.name] !== undefined && input[declared.name] !== null,
  );
  if (inputs.length === 1 && given.length === 1) return textOf(input[given[0]!.name]);
  return given.map(({ name }) => `<${name}>\n${textOf(input[name])}\n</${name}>`).join("\n\n");
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** One call: the model picked, the request sent through the guarded fetch, the answer classified and scrubbed of the key. */
async function invokePromptTemplate(
  parameters: PromptTemplateParameters,
  input: Readonly<Record<string, unknown>>,
  context: InvocationContext,
): Promise<ToolOutcome> {
  const models = context.models;
  if (!models) {
    return {
      error: "ModelUnavailable",
      message: "this deployment has no model catalog for prompt_template calls",
    };
  }
  const endpoint = await models.pick({
    ...(parameters.model === undefined ? {} : { model: parameters.model }),
    ...(parameters.modelSize === undefined ? {} : { size: parameters.modelSize }),
  });
  if ("error" in endpoint) return endpoint;
  const wire = LLM_WIRES[endpoint.wireType];
  if (!wire) {
    return {
      error: "ModelNotConfigured",
      message: `'${endpoint.model}' speaks wireType '${endpoint.wireType}'; prompt_template speaks ${Object.keys(LLM_WIRES).join(" and ")}`,
    };
  }
  const scrubber = new SecretScrubber(endpoint.apiKey === undefined ? [] : [endpoint.apiKey]);
  const json = parameters.responseFormat === "json";
  const request = wire.request(endpoint, {
    system: parameters.promptPrefix,
    user: renderInputs(parameters.inputs, input),
    maxTokens: parameters.maxTokens,
    json,
  });
  const exchanged = await exchangeRest(request, parameters.timeoutMs, context);
  if ("error" in exchanged) return scrubOutcome(exchanged, scrubber);
  const { response, body } = exchanged;
  if (!isHttpSuccess(response))
    return scrubOutcome(llmHttpError(endpoint, response, scrubber.text(body)), scrubber);
  let parsed: unknown;
  try {
    parsed = jsonShapeProblem(body) === null ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined;
  }
  const answer = parsed === undefined ? null : wire.answer(parsed);
  if (answer === null) {
    return {
      error: "LlmResponseParseError",
      message: `'${endpoint.model}' answered HTTP ${response.status} with a body that is not a ${endpoint.wireType} completion`,
    };
  }
  return scrubOutcome(answerOutcome(endpoint, answer, json), scrubber);
}

/**
 * `LlmHttpError` with the status. A refused credential (401, 403) is said in words: an endpoint
 * may echo part of the key in its error, and the key is the platform's, never a tenant's to see.
 */
function llmHttpError(endpoint: LlmEndpoint, response: Response, scrubbedBody: string): ToolOutcome {
  const status = response.status;
  const label = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""} from '${endpoint.model}'`;
  if (status === 401 || status === 403) {
    return {
      error: "LlmHttpError",
      message: `${label}: the endpoint refused the platform's credentials for this instance`,
      status,
    };
  }
  const detail = scrubbedBody.slice(0, ERROR_BODY_CHARS);
  return { error: "LlmHttpError", message: detail ? `${label}: ${detail}` : label, status };
}

/** The text (or, for `json`, the parsed value); an empty answer is `LlmEmptyResponse`. */
function answerOutcome(endpoint: LlmEndpoint, answer: LlmAnswer, json: boolean): ToolOutcome {
  const text = answer.text?.trim() ?? "";
  if (text === "") {
    return {
      error: "LlmEmptyResponse",
      message: `'${endpoint.model}' answered no text (finish reason: ${answer.finishReason ?? "none given"})`,
    };
  }
  if (!json) return { value: answer.text };
  const unfenced = stripJsonFence(text);
  const tooComplex = jsonShapeProblem(unfenced);
  if (tooComplex) {
    return {
      error: "LlmInvalidJson",
      message: `'${endpoint.model}' answered JSON too complex to read: ${tooComplex}`,
    };
  }
  try {
    return { value: JSON.parse(unfenced) as unknown };
  } catch {
    return {
      error: "LlmInvalidJson",
      message: `'${endpoint.model}' was asked for JSON but answered text that is not JSON (${text.length} characters)`,
    };
  }
}

/** A code fence's opening and closing mark. */
const FENCE = "```";

/**
 * The body of a Markdown code fence around a whole (trimmed) answer — models often fence JSON
 * even when asked not to — or the text unchanged: "```json", blanks up to a line break, the body,
 * an optional line break and "```" at the very end. A linear scan: the answer is the model's.
 *
 * @example stripJsonFence("```json\n{\"a\":1}\n```") // '{"a":1}'
 */
export function stripJsonFence(text: string): string {
  if (text.length < 2 * FENCE.length || !text.startsWith(FENCE) || !text.endsWith(FENCE)) return text;
  const close = text.length - FENCE.length;
  let at = FENCE.length;
  if (text.slice(at, at + 4).toLowerCase() === "json") at += 4;
  let bodyStart = -1;
  for (let i = at; i < close && isBlank(text.charCodeAt(i)); i++) {
    if (text.charCodeAt(i) === 10) bodyStart = i + 1;
  }
  if (bodyStart < 0) return text;
  const bodyEnd = close > bodyStart && text.charCodeAt(close - 1) === 10 ? close - 1 : close;
  return text.slice(bodyStart, bodyEnd);
}

/** What JavaScript's `\s` matches, for one UTF-16 unit. */
function isBlank(code: number): boolean {
  return (
    (code >= 9 && code <= 13) ||
    code === 32 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
