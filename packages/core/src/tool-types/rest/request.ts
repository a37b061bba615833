import type { RestFailure } from "./errors";
import type { RestParameters } from "./parameters";
import { ABSENT, fillUrl, stringify, type TemplateFiller } from "./templates";

/** The request a `rest` call sends. */
export interface RestRequest {
  readonly url: URL;
  readonly init: RequestInit & { method: string };
}

/**
 * The request of one call: URL, query, headers and body filled from the templates; inputs no
 * template uses go to the query string (GET, DELETE) or, without a body template, into a JSON body.
 */
export function buildRequest(
  parameters: RestParameters,
  templates: TemplateFiller,
): RestRequest | RestFailure {
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

/** `text` as a URL, or null when it is none. */
export function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
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
