import type { LlmEndpoint } from "../../ports/tool-runtime";
import type { RestRequest } from "../rest/index";

/** One chat call as `prompt_template` makes it: the fixed prefix, the rendered inputs, the limits. */
export interface LlmPrompt {
  /** The tool's fixed `promptPrefix`: the system message. */
  readonly system: string;
  /** The call's inputs, rendered: the user message. */
  readonly user: string;
  readonly maxTokens: number | undefined;
  /** Ask the endpoint for a JSON answer where its wire format can say so. */
  readonly json: boolean;
}

/** What a completion said: its text (null when it had none) and why it stopped. */
export interface LlmAnswer {
  readonly text: string | null;
  readonly finishReason: string | null;
}

/** A wire format: how a prompt becomes a request, and an answer's body becomes text. */
export interface LlmWire {
  request(endpoint: LlmEndpoint, prompt: LlmPrompt): RestRequest;
  /** The answer in a 2xx body, or null when the body is not this wire format's answer. */
  answer(body: unknown): LlmAnswer | null;
}

/** Anthropic requires `max_tokens`; this is sent when the tool sets none. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 1024;

/** The Messages API version this wire format speaks. */
const ANTHROPIC_VERSION = "2023-06-01";

/** `{baseUrl}/{path}`, whether or not the base URL ends with a slash. */
function endpointUrl(baseUrl: string, path: string): URL {
  return new URL(path, baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
}

function post(url: URL, headers: Record<string, string>, body: unknown): RestRequest {
  return {
    url,
    init: {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...headers },
      body: JSON.stringify(body),
    },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** OpenAI chat completions (`wireType: openai`), which OpenAI-compatible gateways speak too. */
const OPENAI_CHAT: LlmWire = {
  request(endpoint, prompt) {
    return post(
      endpointUrl(endpoint.baseUrl, "chat/completions"),
      endpoint.apiKey === undefined ? {} : { authorization: `Bearer ${endpoint.apiKey}` },
      {
        model: endpoint.slug,
        messages: [
          { role: "system", content: prompt.system },
          { role: "user", content: prompt.user },
        ],
        ...(prompt.maxTokens === undefined ? {} : { max_tokens: prompt.maxTokens }),
        ...(prompt.json ? { response_format: { type: "json_object" } } : {}),
      },
    );
  },
  answer(body) {
    if (!isRecord(body) || !Array.isArray(body.choices)) return null;
    const choice: unknown = body.choices[0];
    if (choice === undefined) return { text: null, finishReason: null };
    if (!isRecord(choice)) return null;
    const message = isRecord(choice.message) ? choice.message : {};
    return {
      text: typeof message.content === "string" ? message.content : null,
      finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    };
  },
};

/** Anthropic Messages (`wireType: anthropic`): the prefix as `system`, the key as `x-api-key`. */
const ANTHROPIC_MESSAGES: LlmWire = {
  request(endpoint, prompt) {
    return post(
      endpointUrl(endpoint.baseUrl, "messages"),
      {
        "anthropic-version": ANTHROPIC_VERSION,
        ...(endpoint.apiKey === undefined ? {} : { "x-api-key": endpoint.apiKey }),
      },
      {
        model: endpoint.slug,
        system: prompt.system,
        messages: [{ role: "user", content: prompt.user }],
        max_tokens: prompt.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
      },
    );
  },
  answer(body) {
    if (!isRecord(body) || !Array.isArray(body.content)) return null;
    const texts = body.content.flatMap((block: unknown) =>
      isRecord(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : [],
    );
    return {
      text: texts.length > 0 ? texts.join("") : null,
      finishReason: typeof body.stop_reason === "string" ? body.stop_reason : null,
    };
  },
};

/** The wire formats `prompt_template` speaks, by the catalog's `wireType`. */
export const LLM_WIRES: Readonly<Record<string, LlmWire>> = {
  openai: OPENAI_CHAT,
  anthropic: ANTHROPIC_MESSAGES,
};
