import { ProviderHttpError } from "./provider-errors.js";

/**
 * POSTs a request builder's JSON to a provider with `fetch` and answers the parsed JSON; a
 * non-2xx answer throws {@link ProviderHttpError} with its text, which `onProviderError` reads.
 */
export async function postJson<Answer>(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  fetchOnce: typeof fetch = globalThis.fetch,
): Promise<Answer> {
  const response = await fetchOnce(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new ProviderHttpError(response.status, text);
  return JSON.parse(text) as Answer;
}
