import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import zlib from "node:zlib";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  type HostResolver,
  type HttpFetch,
  type NetworkPolicy,
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
  /** Bodies larger than this fail the call, so one response cannot exhaust the function's memory. */
  readonly maxResponseBytes?: number;
}

/**
 * A fetch for tenant-controlled URLs that enforces `policy` on the address it actually connects
 * to, so DNS rebinding between an earlier check and the connect cannot reach an internal host.
 * Redirects are never followed (a 3xx is returned as is). Refused addresses reject with an
 * error named `BlockedAddressError`.
 *
 * @example const fetch = createGuardedFetch(createNetworkPolicy(["127.0.0.1"]));
 */
export function createGuardedFetch(policy: NetworkPolicy, options: GuardedFetchOptions = {}): HttpFetch {
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

  return async (input, init) => {
    // Request normalises every HeadersInit and BodyInit shape the way fetch would.
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`unsupported protocol ${url.protocol}`);
    }
    const host = bareHost(url.hostname);
    // The platform connects to IP literals without a lookup, so they are judged here.
    if (isIP(host)) {
      const refused = refusal(policy, host, [host]);
      if (refused) throw refused;
    }
    const body = init.body == null ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = Object.fromEntries(request.headers);
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

      const transport = url.protocol === "https:" ? https : http;
      const outgoing = transport.request({
        protocol: url.protocol,
        hostname: host,
        port: url.port === "" ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        agent: agents[url.protocol as "http:" | "https:"],
        lookup: guardedLookup,
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", fail);
      outgoing.on("response", (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            fail(new Error(`the response is larger than ${maxBytes} bytes`));
            outgoing.destroy();
            return;
          }
          chunks.push(chunk);
        });
        incoming.on("error", fail);
        incoming.on("end", () => {
          try {
            const response = toResponse(incoming, Buffer.concat(chunks));
            finish(() => resolvePromise(response));
          } catch (error) {
            fail(error);
          }
        });
      });
      outgoing.end(body);
    });
  };
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

function toResponse(incoming: http.IncomingMessage, raw: Buffer): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
    headers.append(incoming.rawHeaders[i] ?? "", incoming.rawHeaders[i + 1] ?? "");
  }
  // Without Accept-Encoding a server may still pick any coding (RFC 9110), so undo the common ones.
  const coding = headers.get("content-encoding")?.trim().toLowerCase();
  let body = raw;
  if (coding && coding !== "identity" && raw.length > 0) {
    body = decode(coding, raw);
    headers.delete("content-encoding");
    headers.delete("content-length");
  }
  const status = incoming.statusCode ?? 502;
  return new Response(NULL_BODY_STATUSES.has(status) ? null : new Uint8Array(body), {
    status,
    statusText: incoming.statusMessage ?? "",
    headers,
  });
}

function decode(coding: string, raw: Buffer): Buffer {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib.gunzipSync(raw);
    case "deflate":
      return zlib.inflateSync(raw);
    case "br":
      return zlib.brotliDecompressSync(raw);
    default:
      throw new Error(`unsupported content encoding '${coding}'`);
  }
}

function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}
