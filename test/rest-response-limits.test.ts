import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { createGuardedFetch } from "@vance/adapters";
import {
  builtInToolTypes,
  createNetworkPolicy,
  type InvocationContext,
  parseToolDocument,
  RestType,
  ToolTypeRegistry,
} from "@vance/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { restContext } from "./support/rest-context";

const T = "/v1/tenants/acme/projects/shop";
const MiB = 1024 * 1024;
const DEFAULT_LIMIT = 10 * MiB;
/** The limit of the second app, set through VANCE_REST_MAX_RESPONSE_BYTES. */
const SMALL_LIMIT = 4096;
const BOMB_BYTES = 1024 * MiB;

type App = Awaited<ReturnType<typeof testApp>>["app"];

let upstream: Server;
let base: string;
let brotliBomb: Buffer;
let gzipBomb: Buffer;
/** Requests to /never the upstream received, and those whose connection the client has closed. */
const received: string[] = [];
const abandoned: string[] = [];

/** Streams `total` zero bytes through a compressor, on zlib's thread pool. */
async function compressZeros(compressor: zlib.BrotliCompress | zlib.Gzip, total: number): Promise<Buffer> {
  const out: Buffer[] = [];
  compressor.on("data", (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => compressor.on("end", resolve));
  const zeros = Buffer.alloc(MiB);
  for (let sent = 0; sent < total; sent += zeros.length) {
    if (!compressor.write(zeros)) await new Promise((resolve) => compressor.once("drain", resolve));
  }
  compressor.end();
  await ended;
  return Buffer.concat(out);
}

/** A JSON body of exactly `size` bytes. */
function jsonOfSize(size: number): string {
  return JSON.stringify({ pad: "x".repeat(size - '{"pad":""}'.length) });
}

function encode(coding: string, body: string): Buffer {
  if (coding === "br") return zlib.brotliCompressSync(body);
  if (coding === "deflate") return zlib.deflateSync(body);
  if (coding === "identity") return Buffer.from(body);
  return zlib.gzipSync(body);
}

function respond(req: IncomingMessage, res: ServerResponse): void {
  // The client hangs up in the middle of a bomb; that is the point, not a server failure.
  res.on("error", () => {});
  const url = new URL(req.url ?? "/", "http://x");
  const coding = url.searchParams.get("coding") ?? "gzip";
  const send = (encoding: string, body: Buffer) =>
    res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding }).end(body);
  if (url.pathname === "/bomb.br") {
    send("br", brotliBomb);
  } else if (url.pathname === "/bomb.gz") {
    send("gzip", gzipBomb);
  } else if (url.pathname === "/small") {
    send(coding, encode(coding, JSON.stringify({ ok: true, coding, text: "grüße ".repeat(50) })));
  } else if (url.pathname.startsWith("/sized/")) {
    send(coding, encode(coding, jsonOfSize(Number(url.pathname.slice("/sized/".length)))));
  } else if (url.pathname === "/corrupt") {
    send(coding, Buffer.from("this was never compressed with anything"));
  } else if (url.pathname === "/empty") {
    send("gzip", Buffer.alloc(0));
  } else if (url.pathname === "/never") {
    received.push(url.pathname);
    req.socket.on("close", () => abandoned.push(url.pathname));
  } else {
    res.writeHead(404).end();
  }
}

beforeAll(async () => {
  // Brotli quality 4 shrinks 1 GiB of zeros to ~1.6 KB in about a second (11 takes 40 s).
  brotliBomb = await compressZeros(
    zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
    BOMB_BYTES,
  );
  // Gzip members concatenate (RFC 1952 §2.2): 64 copies of 16 MiB of zeros decode to 1 GiB.
  const member = await compressZeros(zlib.createGzip({ level: 9 }), 16 * MiB);
  gzipBomb = Buffer.concat(Array.from({ length: BOMB_BYTES / (16 * MiB) }, () => member));

  upstream = createServer(respond);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

/** Runs `work` while sampling RSS every 5 ms; the growth of its peak over the start. */
async function watched<R>(work: () => Promise<R>): Promise<{ result: R; rssGrowth: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, rssGrowth: peak - before };
  } finally {
    clearInterval(timer);
  }
}

describe("rest over HTTP: decompression bombs", () => {
  let app: App;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } }));
    headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
    for (const [name, path] of [
      ["bomb_br", "/bomb.br"],
      ["bomb_gz", "/bomb.gz"],
    ]) {
      const res = await app.request(`${T}/tools/${name}`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/yaml" },
        body: `type: rest\ndescription: A hostile endpoint.\nparameters:\n  url: ${base}${path}\n`,
      });
      expect(res.status).toBeLessThan(300);
    }
  });

  async function invoke(name: string) {
    const res = await app.request(`${T}/tools/${name}/invoke`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ params: {} }),
    });
    return (await res.json()) as Record<string, unknown>;
  }

  it.each([
    ["brotli", "bomb_br", () => brotliBomb],
    ["gzip", "bomb_gz", () => gzipBomb],
  ])(
    "a %s bomb of 1 GiB is ResponseTooLarge; memory stays bounded and health answers",
    async (_coding, name, bomb) => {
      expect(bomb().length).toBeLessThan(BOMB_BYTES / 1000);
      const { result, rssGrowth } = await watched(() =>
        Promise.all([invoke(name), app.request("/v1/health")]),
      );
      const [outcome, healthDuring] = result;
      expect(outcome).toMatchObject({
        error: "ResponseTooLarge",
        message: expect.stringContaining(`larger than ${DEFAULT_LIMIT} bytes`),
      });
      // Decoded as a stream and cut at the limit: a gigabyte is never held.
      expect(rssGrowth).toBeLessThan(100 * MiB);
      expect(healthDuring.status).toBe(200);
      expect((await app.request("/v1/health")).status).toBe(200);
    },
  );
});

describe("rest over HTTP: VANCE_REST_MAX_RESPONSE_BYTES counts decoded bytes", () => {
  let app: App;
  let headers: Record<string, string>;

  beforeAll(async () => {
    ({ app } = await testApp({
      env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1", VANCE_REST_MAX_RESPONSE_BYTES: String(SMALL_LIMIT) },
    }));
    headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
  });

  async function invokeUrl(path: string) {
    const put = await app.request(`${T}/tools/sized`, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/yaml" },
      body: `type: rest\ndescription: A sized body.\nparameters:\n  url: "${base}${path}"\n`,
    });
    expect(put.status).toBeLessThan(300);
    const res = await app.request(`${T}/tools/sized/invoke`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ params: {} }),
    });
    return (await res.json()) as Record<string, unknown>;
  }

  it.each(["gzip", "br", "identity"])(
    "%s: a body of exactly the limit passes, one byte more fails",
    async (coding) => {
      expect(await invokeUrl(`/sized/${SMALL_LIMIT}?coding=${coding}`)).toMatchObject({
        value: JSON.parse(jsonOfSize(SMALL_LIMIT)),
      });
      expect(await invokeUrl(`/sized/${SMALL_LIMIT + 1}?coding=${coding}`)).toMatchObject({
        error: "ResponseTooLarge",
        message: expect.stringContaining(`larger than ${SMALL_LIMIT} bytes`),
      });
    },
  );
});

const allowLoopback = createNetworkPolicy(["127.0.0.1"]);
const registry = new ToolTypeRegistry(builtInToolTypes());

function contextFor(signal: AbortSignal = new AbortController().signal): InvocationContext {
  return restContext({ policy: allowLoopback, signal });
}

async function invokeRest(parameters: Record<string, unknown>, context = contextFor()) {
  const parsed = parseToolDocument(
    JSON.stringify({ type: "rest", description: "a rest tool under test", parameters }),
    "under_test",
    registry,
  );
  if (!parsed.ok) throw new Error(parsed.error.message);
  if (!RestType.invoke) throw new Error("rest has no invoke");
  return RestType.invoke(parsed.config, parsed.config.parameters, {}, context);
}

describe("rest: content codings", () => {
  it.each(["gzip", "x-gzip", "deflate", "br"])(
    "a small %s JSON body decodes to its value",
    async (coding) => {
      expect(await invokeRest({ url: `${base}/small?coding=${coding}` })).toEqual({
        value: { ok: true, coding, text: "grüße ".repeat(50) },
      });
    },
  );

  it("the decoded Response carries neither content-encoding nor the compressed content-length", async () => {
    const response = await createGuardedFetch(allowLoopback)(`${base}/small?coding=br`, {});
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(response.headers.get("content-length")).toBeNull();
    expect(await response.json()).toMatchObject({ ok: true, coding: "br" });
  });

  it("an empty body labelled gzip is an empty value, not a decoding error", async () => {
    expect(await invokeRest({ url: `${base}/empty` })).toEqual({ value: null });
  });

  it.each(["gzip", "deflate", "br"])(
    "a corrupt %s body is a NetworkError naming the coding",
    async (coding) => {
      expect(await invokeRest({ url: `${base}/corrupt?coding=${coding}` })).toEqual({
        error: "NetworkError",
        message: expect.stringContaining(`not valid '${coding}' data`),
      });
    },
  );

  it("an unknown content coding is a NetworkError naming it", async () => {
    expect(await invokeRest({ url: `${base}/corrupt?coding=zstd` })).toEqual({
      error: "NetworkError",
      message: expect.stringContaining("unsupported content encoding 'zstd'"),
    });
  });

  it("the guarded fetch rejects a bomb with ResponseTooLargeError at its own maxResponseBytes", async () => {
    const fetch = createGuardedFetch(allowLoopback, { maxResponseBytes: MiB });
    await expect(fetch(`${base}/bomb.br`, {})).rejects.toMatchObject({
      name: "ResponseTooLargeError",
      message: expect.stringContaining(`larger than ${MiB} bytes`),
    });
  });
});

describe("rest: the caller's signal", () => {
  it("a call aborted by context.signal ends at once as Cancelled and closes the connection", async () => {
    const caller = new AbortController();
    // The longest timeout allowed: Cancelled (not TimeoutError) says the caller's signal ended it.
    const call = invokeRest({ url: `${base}/never`, timeoutMs: 30_000 }, contextFor(caller.signal));
    // The caller leaves once the upstream holds the request.
    await expect.poll(() => received).toContain("/never");
    caller.abort(new Error("the script's deadline passed"));
    expect(await call).toEqual({
      error: "Cancelled",
      message: expect.stringContaining("the script's deadline passed"),
    });
    await expect.poll(() => abandoned).toContain("/never");
  });

  it("its own timeout is still a TimeoutError while the caller lives", async () => {
    const outcome = await invokeRest({ url: `${base}/never`, timeoutMs: 150 });
    expect(outcome).toEqual({ error: "TimeoutError", message: expect.stringContaining("150 ms") });
  });
});
