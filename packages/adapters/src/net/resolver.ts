import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  bareHost,
  type HostResolver,
  type HttpExchange,
  type HttpExchangeAnswer,
  type HttpFetch,
  type NetworkPolicy,
  RESPONSE_TOO_LARGE_ERROR_NAME,
} from "@vance/core";

const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Resolves a host name through the operating system's resolver (all v4 and v6 addresses, in its order). */
export const dnsHostResolver: HostResolver = async (hostname) => {
  const host = bareHost(hostname);
  if (isIP(host)) return [host];
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
};

/** Options of {@link createGuardedFetch}. */
export interface GuardedFetchOptions {
  /** Resolves host names at connect time; the operating system's resolver by default. */
  readonly resolve?: HostResolver;
  /**
   * Bodies larger than this, counted after decompression, fail the call with an error named
   * `ResponseTooLargeError`, so one response cannot exhaust the function's memory; 10 MiB by default.
   */
  readonly maxResponseBytes?: number;
}

/**
 * A fetch for tenant-controlled URLs that enforces `policy` on the address it actually connects
 * to, so DNS rebinding between an earlier check and the connect cannot reach an internal host.
 * Redirects are never followed (a 3xx is returned as is). Refused addresses reject with an
 * error named `BlockedAddressError`. gzip, deflate and br bodies are decoded as streams. Bodies
 * are read whole before the answer, except `text/event-stream` ones, which are handed on as they
 * arrive (MCP servers keep them open).
 *
 * @example const fetch = createGuardedFetch(createNetworkPolicy(["127.0.0.1"]));
 */
export function createGuardedFetch(policy: NetworkPolicy, options: GuardedFetchOptions = {}): HttpFetch {
  return createGuardedHttp(policy, options).fetch;
}

/** A guarded fetch and its {@link HttpExchange}, sharing their connections and their policy. */
export interface GuardedHttp {
  readonly fetch: HttpFetch;
  /**
   * The same requests below fetch (see {@link HttpExchange}): what an MCP connection's calls use.
   * Every answer, event stream or not, is handed on once its head has arrived.
   */
  readonly exchange: HttpExchange;
}

/**
 * {@link createGuardedFetch}'s fetch, and an exchange with the same rules (the policy judges the
 * address every new connection goes to, redirects are not followed, bodies are decoded and capped
 * alike) over the same keep-alive connections.
 *
 * @example const { fetch, exchange } = createGuardedHttp(createNetworkPolicy(["127.0.0.1"]));
 */
export function createGuardedHttp(policy: NetworkPolicy, options: GuardedFetchOptions = {}): GuardedHttp {
  const resolve = options.resolve ?? dnsHostResolver;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  // Own agents: a pooled socket of the global agent may have been connected without the policy.
  const agents = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true }),
  };

  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = refusal(policy, hostname, addresses);
        if (refused) return callback(refused, "", 0);
        const usable = addresses
          .map((address): LookupAddress => ({ address, family: isIP(address) }))
          .filter((entry) => familyMatches(lookupOptions, entry.family));
        const first = usable[0];
        if (!first) return callback(notFound(hostname), "", 0);
        if (lookupOptions.all) return callback(null, usable);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };

  const fetch: HttpFetch = async (input, init) => {
    const request = await outgoingRequest(input, init);
    const target = urlTarget(policy, request.url);
    if (target.refused) throw target.refused;
    const { body, headers } = request;
    if (body) headers["content-length"] = String(body.length);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();

    return new Promise<Response>((resolvePromise, reject) => {
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        outcome();
      };
      const fail = (error: unknown) => finish(() => reject(error));
      const onAbort = () => {
        fail(signal?.reason);
        outgoing.destroy();
      };

      const outgoing = target.transport.request({
        protocol: target.protocol,
        hostname: target.host,
        port: target.port,
        path: target.path,
        method: request.method,
        headers,
        agent: agents[target.protocol],
        lookup: guardedLookup,
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", fail);
      outgoing.on("response", (incoming) => {
        const responseHeaders = headersOf(incoming);
        // Without Accept-Encoding a server may still pick any coding (RFC 9110), so undo the common ones.
        const coding = responseHeaders.get("content-encoding")?.trim().toLowerCase();
        const encoded = coding !== undefined && coding !== "" && coding !== "identity";
        const status = incoming.statusCode ?? 502;
        if (isEventStream(responseHeaders) && !NULL_BODY_STATUSES.has(status)) {
          // An event stream (MCP's Streamable HTTP) may stay open for good: its events are handed
          // on as they arrive, under the same byte limit, and the signal still ends it.
          if (encoded) {
            responseHeaders.delete("content-encoding");
            responseHeaders.delete("content-length");
          }
          const stream = streamBody(incoming, encoded ? coding : undefined, maxBytes, signal);
          finish(() =>
            resolvePromise(
              new Response(stream, {
                status,
                statusText: incoming.statusMessage ?? "",
                headers: responseHeaders,
              }),
            ),
          );
          return;
        }
        readBody(incoming, encoded ? coding : undefined, maxBytes)
          .then((decoded) => {
            if (encoded) {
              responseHeaders.delete("content-encoding");
              responseHeaders.delete("content-length");
            }
            return new Response(NULL_BODY_STATUSES.has(status) ? null : new Uint8Array(decoded), {
              status,
              statusText: incoming.statusMessage ?? "",
              headers: responseHeaders,
            });
          })
          .then(
            (response) => finish(() => resolvePromise(response)),
            (error: unknown) => {
              fail(error);
              outgoing.destroy();
            },
          );
      });
      outgoing.end(body);
    });
  };

  const targets = new UrlTargets(policy);
  const exchange: HttpExchange = (url, request) => {
    const signal = request.signal;
    try {
      signal?.throwIfAborted();
      const target = targets.of(url);
      if (target.refused) throw target.refused;
      const method = fetchMethod(request.method);
      // A text body goes out as text: Node writes it with the head in one piece.
      const body = request.body;
      if (body !== undefined && (method === "GET" || method === "HEAD"))
        throw new TypeError(`a ${method} request cannot have a body`);
      // Object.assign, not `{ ...request.headers }`: a spread then a new property costs V8 ~1 µs.
      const headers: Record<string, string> = Object.assign({}, request.headers);
      if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body, "utf8"));
      const outgoing = target.transport.request({
        protocol: target.protocol,
        hostname: target.host,
        port: target.port,
        path: target.path,
        method,
        headers,
        agent: agents[target.protocol],
        lookup: guardedLookup,
      });
      return new Promise<HttpExchangeAnswer>((resolvePromise, reject) => {
        new PendingExchange(outgoing, maxBytes, signal, resolvePromise, reject);
        outgoing.end(body, "utf8");
      });
    } catch (error) {
      return Promise.reject(toFetchError(error));
    }
  };

  return { fetch, exchange };
}

/** Where a request URL goes, parsed and judged once per URL (an MCP connection posts to one URL for good). */
interface UrlTarget {
  readonly protocol: "http:" | "https:";
  readonly transport: typeof http | typeof https;
  readonly host: string;
  readonly port: number | undefined;
  readonly path: string;
  /** The policy's refusal of an IP literal host (names are judged at connect time, by the lookup). */
  readonly refused: Error | null;
}

/** The targets of the URLs seen last: a few, since each MCP connection has one. */
class UrlTargets {
  private static readonly MAX = 256;
  private readonly known = new Map<string, UrlTarget>();

  constructor(private readonly policy: NetworkPolicy) {}

  of(input: string): UrlTarget {
    const cached = this.known.get(input);
    if (cached) return cached;
    const target = urlTarget(this.policy, input);
    if (this.known.size >= UrlTargets.MAX) this.known.clear();
    this.known.set(input, target);
    return target;
  }
}

/**
 * Where `input` goes, for the fetch and the exchange alike: http(s) only, no credentials, and an
 * IP literal host judged by the policy here (the platform connects to one without a lookup; a
 * name is judged at connect time, by the guarded lookup).
 */
function urlTarget(policy: NetworkPolicy, input: string): UrlTarget {
  const url = new URL(input);
  if (url.username !== "" || url.password !== "")
    throw new TypeError("a request URL may not include credentials");
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`unsupported protocol ${url.protocol}`);
  }
  const host = bareHost(url.hostname);
  return {
    protocol: url.protocol,
    transport: url.protocol === "https:" ? https : http,
    host,
    port: url.port === "" ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    refused: isIP(host) ? refusal(policy, host, [host]) : null,
  };
}

/** Node's own errors for a header it refuses, as the TypeError fetch throws for it. */
function toFetchError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (
    code === "ERR_INVALID_HTTP_TOKEN" ||
    code === "ERR_INVALID_CHAR" ||
    code === "ERR_HTTP_INVALID_HEADER_VALUE"
  )
    return new TypeError((error as Error).message);
  return error;
}

/**
 * One exchange waiting for its answer's head: settles once — the answer, the request's error, or
 * the signal's reason. Its handlers are assigned to its members, not declared as named closures:
 * the bundles' `keepNames` renames every named closure with `Object.defineProperty` (~0.7 µs
 * each), and an MCP call made a dozen of them.
 */
class PendingExchange {
  private settled = false;
  private readonly onAbort: () => void;

  constructor(
    outgoing: http.ClientRequest,
    maxBytes: number,
    signal: AbortSignal | undefined,
    resolve: (answer: HttpExchangeAnswer) => void,
    reject: (error: unknown) => void,
  ) {
    this.onAbort = () => {
      if (this.settled) return;
      this.settled = true;
      reject(signal?.reason);
      outgoing.destroy();
    };
    outgoing.on("error", (error) => {
      if (this.settled) return;
      this.settled = true;
      signal?.removeEventListener("abort", this.onAbort);
      reject(error);
    });
    outgoing.on("response", (incoming) => {
      if (this.settled) return void incoming.destroy();
      this.settled = true;
      signal?.removeEventListener("abort", this.onAbort);
      resolve(new GuardedAnswer(incoming, maxBytes, signal));
    });
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }
}

/**
 * An exchange's answer over the `IncomingMessage`: headers read from the raw list as asked for,
 * the body decoded and counted under `maxBytes` as it arrives, handed on as Buffers.
 */
class GuardedAnswer implements HttpExchangeAnswer {
  readonly status: number;
  readonly statusText: string;
  private readonly coding: string | undefined;
  private used = false;

  constructor(
    private readonly incoming: http.IncomingMessage,
    private readonly maxBytes: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.status = incoming.statusCode ?? 502;
    this.statusText = incoming.statusMessage ?? "";
    const coding = this.rawHeader("content-encoding")?.trim().toLowerCase();
    this.coding = coding === undefined || coding === "" || coding === "identity" ? undefined : coding;
  }

  header(name: string): string | undefined {
    // The body handed on is decoded: its coding and length are no longer the body's.
    if (this.coding !== undefined && (name === "content-encoding" || name === "content-length"))
      return undefined;
    return this.rawHeader(name);
  }

  private rawHeader(name: string): string | undefined {
    const raw = this.incoming.rawHeaders;
    let value: string | undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const key = raw[i]!;
      if (key.length === name.length && key.toLowerCase() === name)
        value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
    }
    return value;
  }

  cancel(): void {
    if (this.used) return;
    this.used = true;
    this.drop();
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    await this.read((chunk) => {
      chunks.push(chunk as Buffer);
      return true;
    });
    return chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
  }

  read(each: (chunk: Uint8Array) => boolean): Promise<void> {
    if (this.used) return Promise.reject(new TypeError("the body of this answer was read already"));
    this.used = true;
    if (NULL_BODY_STATUSES.has(this.status)) {
      this.drop();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      new BodyRead(this, this.incoming, this.coding, this.maxBytes, this.signal, each, resolve, reject);
    });
  }

  /**
   * Lets go of a body nobody reads: one whose message has fully arrived is drained, so that its
   * connection goes back to the pool; any other closes its connection (an event stream may never end).
   */
  drop(decoder?: Transform): void {
    const incoming = this.incoming;
    if (incoming.complete) {
      decoder?.destroy();
      if (decoder) incoming.unpipe(decoder);
      incoming.resume();
      return;
    }
    incoming.destroy();
    decoder?.destroy();
  }
}

/**
 * One read of an answer's body ({@link GuardedAnswer.read}): decoded, counted under `maxBytes`,
 * handed to `each` chunk by chunk until it says stop, the body ends, or something fails. Its
 * handlers are members, not named closures (see {@link PendingExchange}).
 */
class BodyRead {
  private readonly decoder: Transform | undefined;
  private readonly source: Readable;
  private received = 0;
  private decoded = 0;
  private done = false;
  private readonly onAbort: () => void;
  private readonly onReceived: (chunk: Buffer) => void;
  private readonly onDecoded: (chunk: Buffer) => void;
  private readonly onEnd: () => void;
  private readonly onError: (error: Error) => void;
  private readonly onClose: () => void;

  constructor(
    private readonly answer: GuardedAnswer,
    private readonly incoming: http.IncomingMessage,
    coding: string | undefined,
    maxBytes: number,
    private readonly signal: AbortSignal | undefined,
    each: (chunk: Uint8Array) => boolean,
    private readonly resolve: () => void,
    private readonly reject: (error: unknown) => void,
  ) {
    const decoder = coding === undefined ? undefined : DECODERS.get(coding)?.();
    this.decoder = decoder;
    const source: Readable = decoder ? incoming.pipe(decoder) : incoming;
    this.source = source;
    this.onAbort = () => this.finish(signal?.reason);
    this.onReceived = (chunk) => {
      // Only a body needs decoding, so an unknown coding on an empty one passes.
      if (coding !== undefined && !this.decoder)
        return this.finish(new Error(`unsupported content encoding '${coding}'`));
      this.received += chunk.length;
      if (this.received > maxBytes) this.finish(responseTooLarge(maxBytes));
    };
    this.onDecoded = (chunk) => {
      if (this.done) return;
      this.decoded += chunk.length;
      if (this.decoded > maxBytes) return this.finish(responseTooLarge(maxBytes));
      if (!each(chunk)) this.finish(undefined, true);
    };
    this.onEnd = () => this.finish();
    this.onError = (error) => {
      if (this.decoder && isDecodingError(error)) {
        // An empty body holds no compressed stream at all (a 204, a HEAD answer): nothing to undo.
        if (this.received === 0) return this.finish();
        return this.finish(new Error(`the response body is not valid '${coding}' data: ${error.message}`));
      }
      this.finish(error);
    };
    this.onClose = () => {
      if (!incoming.complete) this.finish(new Error("the connection closed before the response body ended"));
    };
    if (signal?.aborted) {
      this.onAbort();
      return;
    }
    signal?.addEventListener("abort", this.onAbort, { once: true });
    // Without a coding the bytes decoded are the bytes received: one count bounds both.
    if (decoder || coding !== undefined) incoming.on("data", this.onReceived);
    source.on("data", this.onDecoded);
    source.on("end", this.onEnd);
    source.on("error", this.onError);
    if (decoder) incoming.on("error", this.onError);
    incoming.on("close", this.onClose);
  }

  private finish(error?: unknown, stopped = false): void {
    if (this.done) return;
    this.done = true;
    const { incoming, source, decoder } = this;
    this.signal?.removeEventListener("abort", this.onAbort);
    incoming.off("data", this.onReceived);
    source.off("data", this.onDecoded);
    source.off("end", this.onEnd);
    source.off("error", this.onError);
    incoming.off("error", this.onError);
    incoming.off("close", this.onClose);
    if (error !== undefined) {
      incoming.destroy();
      decoder?.destroy();
      this.reject(error);
      return;
    }
    if (stopped) this.answer.drop(decoder);
    this.resolve();
  }
}

/** A request as it goes out: the URL, method, headers (lower-case names) and body bytes. */
interface OutgoingRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
}

/**
 * What `fetch(input, init)` would send. A text body (JSON-RPC, JSON) is taken as it is, with the
 * headers normalised and checked by `Headers` — what a `Request` does for it, at a fraction of
 * the cost on every MCP call; any other body shape goes through a `Request`, which normalises
 * every `BodyInit` the way fetch would. Neither is given the signal: a Request stays listening
 * on it until it is collected, and an MCP connection's signal lives as long as the connection.
 */
async function outgoingRequest(input: string, init: RequestInit): Promise<OutgoingRequest> {
  if (init.body == null || typeof init.body === "string") {
    const url = new URL(input);
    if (url.username !== "" || url.password !== "")
      throw new TypeError("a request URL may not include credentials");
    const method = fetchMethod(init.method ?? "GET");
    const headers = new Headers(init.headers);
    if (typeof init.body === "string" && (method === "GET" || method === "HEAD"))
      throw new TypeError(`a ${method} request cannot have a body`);
    if (typeof init.body === "string" && !headers.has("content-type"))
      headers.set("content-type", "text/plain;charset=UTF-8");
    return {
      url: url.href,
      method,
      headers: Object.fromEntries(headers),
      body: init.body == null ? undefined : Buffer.from(init.body, "utf8"),
    };
  }
  const request = new Request(input, { ...init, signal: null });
  return {
    url: request.url,
    method: request.method,
    headers: Object.fromEntries(request.headers),
    body: Buffer.from(await request.arrayBuffer()),
  };
}

/** The methods fetch writes in upper case; any other is sent as given. */
const NORMALISED_METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A method as fetch sends it, or the TypeError fetch throws for it. */
function fetchMethod(method: string): string {
  const upper = method.toUpperCase();
  if (!METHOD_TOKEN.test(method) || FORBIDDEN_METHODS.has(upper))
    throw new TypeError(`'${method}' is not a valid HTTP method`);
  return NORMALISED_METHODS.has(upper) ? upper : method;
}

function refusal(policy: NetworkPolicy, host: string, addresses: readonly string[]): Error | null {
  for (const address of addresses) {
    const problem = policy.addressProblem(address);
    if (problem) {
      const error = new Error(`refusing to connect to ${host}: ${problem}`);
      error.name = BLOCKED_ADDRESS_ERROR_NAME;
      return error;
    }
  }
  return null;
}

function notFound(hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`no usable address for ${hostname}`);
  error.code = "ENOTFOUND";
  return error;
}

function familyMatches(options: LookupOptions, family: number): boolean {
  const wanted = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : (options.family ?? 0);
  return wanted === 0 || wanted === family;
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

function headersOf(incoming: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
    headers.append(incoming.rawHeaders[i] ?? "", incoming.rawHeaders[i + 1] ?? "");
  }
  return headers;
}

function isEventStream(headers: Headers): boolean {
  return (headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase() === "text/event-stream";
}

/**
 * An event stream's body as a web stream, decoded, failing once the bytes received or decoded
 * pass `maxBytes` (as {@link readBody} does) and when `signal` aborts; cancelling it, or any
 * failure, destroys the message and with it the socket.
 */
function streamBody(
  incoming: http.IncomingMessage,
  coding: string | undefined,
  maxBytes: number,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  const decoder = coding === undefined ? undefined : DECODERS.get(coding)?.();
  const source: Readable = decoder ? incoming.pipe(decoder) : incoming;
  let finished = false;
  let received = 0;
  let decoded = 0;
  const onAbort = () => end(signal?.reason);
  let end: (error?: unknown) => void = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      end = (error) => {
        if (finished) return;
        finished = true;
        signal?.removeEventListener("abort", onAbort);
        if (error === undefined) controller.close();
        else controller.error(error);
        if (error !== undefined || !incoming.complete) {
          incoming.destroy();
          decoder?.destroy();
        }
      };
      incoming.on("data", (chunk: Buffer) => {
        if (coding !== undefined && !decoder)
          return end(new Error(`unsupported content encoding '${coding}'`));
        received += chunk.length;
        if (received > maxBytes) end(responseTooLarge(maxBytes));
      });
      source.on("data", (chunk: Buffer) => {
        if (finished) return;
        decoded += chunk.length;
        if (decoded > maxBytes) return end(responseTooLarge(maxBytes));
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.on("end", () => end());
      source.on("error", (error) => end(error));
      incoming.on("error", (error) => end(error));
      incoming.on("close", () => {
        if (!incoming.complete) end(new Error("the connection closed before the event stream ended"));
      });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    },
    pull() {
      source.resume();
    },
    cancel() {
      finished = true;
      signal?.removeEventListener("abort", onAbort);
      incoming.destroy();
      decoder?.destroy();
    },
  });
}

/** A Map, so that a coding named like an Object.prototype member finds nothing. */
const DECODERS: ReadonlyMap<string, () => Transform> = new Map([
  ["gzip", () => zlib.createGunzip()],
  ["x-gzip", () => zlib.createGunzip()],
  ["deflate", () => zlib.createInflate()],
  ["br", () => zlib.createBrotliDecompress()],
]);

/**
 * Reads a body and undoes its content `coding` as a stream on zlib's thread pool, failing as soon
 * as the bytes received or the bytes decoded pass `maxBytes`: a few KB of brotli expand to
 * gigabytes, so only the decoded count bounds memory (DESIGN §7). On failure the pipeline destroys
 * the message and with it the socket, so the sender stops too.
 */
async function readBody(incoming: Readable, coding: string | undefined, maxBytes: number): Promise<Buffer> {
  const decoder = coding === undefined ? undefined : DECODERS.get(coding)?.();
  let received = 0;
  async function* counted(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      // Only a body needs decoding, so an unknown coding on an empty one (a HEAD answer) passes.
      if (coding !== undefined && !decoder) throw new Error(`unsupported content encoding '${coding}'`);
      received += chunk.length;
      if (received > maxBytes) throw responseTooLarge(maxBytes);
      yield chunk;
    }
  }
  const chunks: Buffer[] = [];
  let size = 0;
  async function collect(source: AsyncIterable<Buffer>): Promise<void> {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > maxBytes) throw responseTooLarge(maxBytes);
      chunks.push(chunk);
    }
  }
  try {
    await (decoder ? pipeline(incoming, counted, decoder, collect) : pipeline(incoming, counted, collect));
  } catch (error) {
    if (!isDecodingError(error)) throw error;
    // An empty body holds no compressed stream at all (a 204, a HEAD answer): nothing to undo.
    if (received === 0) return Buffer.alloc(0);
    throw new Error(`the response body is not valid '${coding}' data: ${error.message}`);
  }
  return Buffer.concat(chunks);
}

function responseTooLarge(maxBytes: number): Error {
  const error = new Error(`the response is larger than ${maxBytes} bytes (counted after decompression)`);
  error.name = RESPONSE_TOO_LARGE_ERROR_NAME;
  return error;
}

/** zlib reports corrupt or truncated input as `Z_DATA_ERROR`, `Z_BUF_ERROR`, brotli as `ERR__ERROR_FORMAT_…`. */
function isDecodingError(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" && (code.startsWith("Z_") || code.startsWith("ERR__"));
}
