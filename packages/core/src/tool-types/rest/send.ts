import type { ToolOutcome } from "../../calls/built-in-tool";
import { boundByCaller, type CallerBoundSignal, untilAborted } from "../../concurrency";
import { bareHost, isIpLiteral } from "../../net/network-policy";
import type { SecretScrubber } from "../../secrets/scrub";
import type { CompiledJsonSchema } from "../../validation/json-schema-validator";
import type { InvocationContext } from "../tool-type";
import { describeError, fetchError, httpError, type RestFailure } from "./errors";
import type { RestRequest } from "./request";
import { responseValue } from "./response";

/**
 * What sending a tenant-controlled request needs: the platform's fetch and resolver, the address
 * rules, and the signal of whoever waits for the answer.
 */
export type RestSendContext = Pick<InvocationContext, "runtime" | "networkPolicy" | "signal">;

/** How one request is bounded and what its 2xx answer must look like. */
export interface RestSendOptions {
  readonly timeoutMs: number;
  /** The tool's `responseSchema` as compiled (an unusable one fails the call with its reason). */
  readonly responseSchema?: CompiledJsonSchema;
}

/** A completed exchange: the answer, whatever its status, with its body read within the size cap. */
export interface RestExchange {
  readonly response: Response;
  readonly body: string;
}

/**
 * Every `${secret:NAME}` a call uses, looked up in one go before anything is filled;
 * `SecretNotFound` for the first one (in `names` order) that the caller has no value for.
 */
export async function resolveSecrets(
  names: readonly string[],
  lookup: (name: string) => Promise<string | undefined>,
): Promise<Map<string, string> | RestFailure> {
  const values = await Promise.all(names.map(async (name) => [name, await lookup(name)] as const));
  const missing = values.find(([, value]) => value === undefined);
  if (missing) {
    return {
      error: "SecretNotFound",
      message: `the secret '${missing[0]}' is not set; a tenant sets it with PUT /v1/tenants/{tenant}/secrets/${missing[0]}`,
    };
  }
  return new Map(values as (readonly [string, string])[]);
}

/**
 * Sends a built request the way every tenant-configured HTTP call goes (`rest`, `openapi`
 * sub-tools): the network policy checked on every resolved address, redirects never followed,
 * bounded by `timeoutMs` and the caller's signal, the body read within the fetch's size cap.
 * A non-2xx answer is an `HttpError`, a 2xx one its value; the outcome is scrubbed of every
 * secret the scrubber knows.
 */
export async function sendRestRequest(
  request: RestRequest,
  options: RestSendOptions,
  scrubber: SecretScrubber,
  context: RestSendContext,
): Promise<ToolOutcome> {
  const exchanged = await exchangeRest(request, options.timeoutMs, context);
  let outcome: ToolOutcome;
  if ("error" in exchanged) {
    outcome = exchanged;
  } else {
    const { response, body } = exchanged;
    outcome = isHttpSuccess(response)
      ? responseValue(response, body, options.responseSchema)
      : // Scrubbed before the body is cut, so no prefix of a secret survives the cut.
        httpError(response, scrubber.text(body));
  }
  return scrubOutcome(outcome, scrubber);
}

/** An outcome with every secret the scrubber knows removed from its message or value. */
export function scrubOutcome(outcome: ToolOutcome, scrubber: SecretScrubber): ToolOutcome {
  return "error" in outcome
    ? { ...outcome, message: scrubber.text(outcome.message) }
    : { value: scrubber.value(outcome.value) };
}

/** Whether the answer is a 2xx one (a redirect never is: it is not followed). */
export function isHttpSuccess(response: Response): boolean {
  return response.type !== "opaqueredirect" && response.status >= 200 && response.status <= 299;
}

/**
 * One guarded HTTP exchange: the host resolved and every address judged by the network policy,
 * then fetched without following redirects, bounded by `timeoutMs` and the caller's signal
 * (`TimeoutError`, or `Cancelled` when the caller ended first). Answers whatever status came.
 */
export async function exchangeRest(
  request: RestRequest,
  timeoutMs: number,
  context: RestSendContext,
): Promise<RestExchange | RestFailure> {
  // The caller's signal ends the call too: a rest call inside a script whose deadline passed
  // must not keep its connection (and the script's budget) open until its own timeout.
  const bound = boundByCaller(context.signal, timeoutMs);
  try {
    return await exchange(request, bound, timeoutMs, context);
  } finally {
    bound.done();
  }
}

async function exchange(
  { url, init }: RestRequest,
  bound: CallerBoundSignal,
  timeoutMs: number,
  context: RestSendContext,
): Promise<RestExchange | RestFailure> {
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
          message: `${init.method} ${url.host} did not answer within ${timeoutMs} ms`,
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

  try {
    // A redirect could point at an internal address after the guard passed: never follow one.
    const response = await context.runtime.fetch(url.href, { ...init, redirect: "manual", signal });
    return { response, body: await response.text() };
  } catch (error) {
    if (signal.aborted) return stopped();
    return fetchError(error, init.method, url.host);
  }
}
