import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardedFetch, dnsHostResolver } from "@vance/adapters";
import {
  builtInToolTypes,
  createNetworkPolicy,
  type HostResolver,
  type HttpFetch,
  type InvocationContext,
  type NetworkPolicy,
  parseToolDocument,
  RestType,
  type ServerToolConfig,
  ToolTypeRegistry,
  type VanceError,
} from "@vance/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { restContext } from "./support/rest-context";

const TOKEN = "tok-Sup3rS3cret-9f8e7d6c5b4a";
/** Characters that change under URL encoding, to catch a leak of the encoded form. */
const API_KEY = "k3y/with+odd=chars&more?";

const allowLoopback = createNetworkPolicy(["127.0.0.1"]);
const strict = createNetworkPolicy([]);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let base: string;
let port: number;
const seen: Seen[] = [];
/** Requests the server never answered whose connection the client closed. */
const abandoned: string[] = [];

function respond(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? "/", "http://x");
  const json = (status: number, value: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
  if (url.pathname.startsWith("/echo/")) {
    json(200, {
      method: req.method,
      path: req.url?.split("?")[0],
      query: [...url.searchParams],
      headers: req.headers,
      body: body === "" ? null : JSON.parse(body),
    });
  } else if (url.pathname === "/echo-secret-ok") {
    // A 200 that repeats the credential as a key, deep inside, and URL-encoded.
    const auth = String(req.headers.authorization);
    json(200, {
      [auth]: "as a key",
      nested: [{ deep: `token was ${auth}` }],
      encoded: `?k=${encodeURIComponent(auth)}`,
    });
  } else if (url.pathname === "/text") {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("plain words");
  } else if (url.pathname === "/missing") {
    res.writeHead(404, { "content-type": "text/plain" }).end(`no item at ${url.pathname}${"!".repeat(400)}`);
  } else if (url.pathname === "/echo-auth") {
    res.writeHead(401, { "content-type": "text/plain" }).end(`rejected ${req.headers.authorization}`);
  } else if (url.pathname === "/echo-auth-late") {
    // The secret straddles the 200-character cut of the error message.
    res
      .writeHead(500, { "content-type": "text/plain" })
      .end(`${"x".repeat(190)}${req.headers.authorization}`);
  } else if (url.pathname === "/echo-url") {
    res.writeHead(403, { "content-type": "text/plain" }).end(`forbidden: ${req.url}`);
  } else if (url.pathname === "/slow") {
    // Never answers: only the client's deadline or signal ends the request.
    res.on("close", () => abandoned.push(url.pathname));
  } else if (url.pathname === "/to-metadata") {
    res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
  } else if (url.pathname === "/to-loopback") {
    res.writeHead(307, { location: `${base}/target` }).end();
  } else if (url.pathname === "/item") {
    json(200, { id: "not-a-number", name: "widget" });
  } else {
    json(404, { error: "unknown route" });
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      respond(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
});

/** An InvocationContext over the real adapters; options replace single parts. */
function contextFor(
  options: {
    policy?: NetworkPolicy;
    secrets?: Record<string, string>;
    fetch?: HttpFetch;
    resolveHost?: HostResolver;
  } = {},
): InvocationContext {
  return restContext({
    ...options,
    policy: options.policy ?? allowLoopback,
    secrets: options.secrets ?? { API_TOKEN: TOKEN, API_KEY },
  });
}

/** No network policy on write, so that the call-time guard and `check` can be tested apart. */
const unchecked = new ToolTypeRegistry(builtInToolTypes());

/** Parses a rest tool document (JSON is YAML) the way the service does, defaults filled. */
function restTool(parameters: Record<string, unknown>): ServerToolConfig {
  const result = parseToolDocument(
    JSON.stringify({ type: "rest", description: "a rest tool under test", parameters }),
    "under_test",
    unchecked,
  );
  if (!result.ok) throw new Error(`${result.error.message}: ${JSON.stringify(result.error.errors)}`);
  return result.config;
}

async function invoke(
  parameters: Record<string, unknown>,
  input: Record<string, unknown> = {},
  context: InvocationContext = contextFor(),
) {
  const config = restTool(parameters);
  if (!RestType.invoke) throw new Error("rest has no invoke");
  return RestType.invoke(config, config.parameters, input, context);
}

function echoed(outcome: unknown) {
  expect(outcome).toHaveProperty("value");
  return (
    outcome as {
      value: {
        method: string;
        path: string;
        query: string[][];
        headers: Record<string, string>;
        body: unknown;
      };
    }
  ).value;
}

describe("rest: request mapping against a real server", () => {
  it("GET fills path placeholders (encoded), query templates and sends unreferenced inputs as query", async () => {
    const outcome = await invoke(
      {
        url: `${base}/echo/items/{id}`,
        query: { search: "{q}", fixed: "yes", optional: "{maybe}" },
        headers: { "x-user": "user-{user}" },
        inputs: [
          { name: "id", type: "string" },
          { name: "q", type: "string" },
          { name: "user", type: "string" },
          { name: "maybe", type: "string", required: false },
          { name: "limit", type: "integer" },
          { name: "tags", type: "array" },
        ],
      },
      { id: "a b/c?d", q: "red shoes", user: "ann", limit: 5, tags: ["x", "y"] },
    );
    const value = echoed(outcome);
    expect(value.method).toBe("GET");
    expect(value.path).toBe("/echo/items/a%20b%2Fc%3Fd");
    expect(value.query).toEqual([
      ["search", "red shoes"],
      ["fixed", "yes"],
      ["limit", "5"],
      ["tags", "x"],
      ["tags", "y"],
    ]);
    expect(value.headers["x-user"]).toBe("user-ann");
    expect(value.body).toBeNull();
  });

  it("POST with a bodyTemplate substitutes typed values, interpolates strings and drops absent optionals", async () => {
    const outcome = await invoke(
      {
        url: `${base}/echo/orders`,
        method: "POST",
        bodyTemplate: {
          item: { name: "{title}", count: "{count}", label: "n={count}", tags: "{tags}", note: "{note}" },
          list: ["{flag}", "{note}", 7],
          fixed: true,
        },
        inputs: [
          { name: "title", type: "string" },
          { name: "count", type: "integer" },
          { name: "tags", type: "array" },
          { name: "flag", type: "boolean" },
          { name: "note", type: "string", required: false },
        ],
      },
      { title: "Widget", count: 3, tags: ["a", "b"], flag: false },
    );
    const value = echoed(outcome);
    expect(value.method).toBe("POST");
    expect(value.headers["content-type"]).toBe("application/json");
    expect(value.body).toEqual({
      item: { name: "Widget", count: 3, label: "n=3", tags: ["a", "b"] },
      list: [false, null, 7],
      fixed: true,
    });
    expect(value.query).toEqual([]);
  });

  it("POST without a bodyTemplate sends the inputs no template uses as a JSON object", async () => {
    const outcome = await invoke(
      {
        url: `${base}/echo/projects/{project}/issues`,
        method: "POST",
        inputs: [
          { name: "project", type: "string" },
          { name: "title", type: "string" },
          { name: "priority", type: "integer" },
          { name: "meta", type: "object" },
        ],
      },
      { project: "VAN", title: "Broken", priority: 2, meta: { a: [1] } },
    );
    const value = echoed(outcome);
    expect(value.path).toBe("/echo/projects/VAN/issues");
    expect(value.body).toEqual({ title: "Broken", priority: 2, meta: { a: [1] } });
  });

  it("returns text for non-JSON responses", async () => {
    expect(await invoke({ url: `${base}/text` })).toEqual({ value: "plain words" });
  });
});

describe("rest: secrets", () => {
  it("a secret in a header reaches the server, and its echo in the result is scrubbed", async () => {
    const value = echoed(
      await invoke({ url: `${base}/echo/me`, headers: { authorization: "Bearer ${secret:API_TOKEN}" } }),
    );
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(value.headers.authorization).toBe("Bearer ***");
  });

  it("a successful response echoing a secret in keys, nested strings and URL-encoded form arrives scrubbed", async () => {
    const outcome = await invoke({
      url: `${base}/echo-secret-ok`,
      headers: { authorization: "${secret:API_KEY}" },
    });
    expect(seen[0]?.headers.authorization).toBe(API_KEY);
    expect(outcome).toEqual({
      value: { "***": "as a key", nested: [{ deep: "token was ***" }], encoded: "?k=***" },
    });
    expect(JSON.stringify(outcome)).not.toContain("k3y");
  });

  it("an upstream error that echoes the Authorization header does not leak the secret", async () => {
    const outcome = await invoke({
      url: `${base}/echo-auth`,
      headers: { authorization: "Bearer ${secret:API_TOKEN}" },
    });
    expect(outcome).toMatchObject({ error: "HttpError", status: 401 });
    const message = (outcome as { message: string }).message;
    expect(message).toContain("rejected Bearer ***");
    expect(message).not.toContain(TOKEN);
  });

  it("the secret is scrubbed before the body is cut to 200 characters, so no prefix leaks", async () => {
    const outcome = await invoke({
      url: `${base}/echo-auth-late`,
      headers: { authorization: "${secret:API_TOKEN}" },
    });
    expect(outcome).toMatchObject({ error: "HttpError", status: 500 });
    expect((outcome as { message: string }).message).not.toContain(TOKEN.slice(0, 5));
  });

  it("a secret in the query is not leaked in its URL-encoded form either", async () => {
    const outcome = await invoke({ url: `${base}/echo-url`, query: { key: "${secret:API_KEY}" } });
    expect(seen[0]?.url).toContain(`key=${encodeURIComponent(API_KEY)}`);
    expect(outcome).toMatchObject({ error: "HttpError", status: 403 });
    const message = (outcome as { message: string }).message;
    expect(message).toContain("key=***");
    expect(message).not.toContain(encodeURIComponent(API_KEY));
  });

  it("a missing secret is SecretNotFound naming it, and nothing is sent", async () => {
    const outcome = await invoke({
      url: `${base}/echo/me`,
      headers: { authorization: "Bearer ${secret:NOT_CONFIGURED}", "x-other": "${secret:API_TOKEN}" },
    });
    expect(outcome).toEqual({
      error: "SecretNotFound",
      message: expect.stringContaining("'NOT_CONFIGURED'"),
    });
    expect(JSON.stringify(outcome)).not.toContain(TOKEN);
    expect(seen).toHaveLength(0);
  });

  it("an input that looks like a secret reference is sent literally, never expanded", async () => {
    const value = echoed(
      await invoke(
        { url: `${base}/echo/q`, query: { q: "{q}" }, inputs: [{ name: "q", type: "string" }] },
        { q: "${secret:API_TOKEN}" },
      ),
    );
    expect(value.query).toEqual([["q", "${secret:API_TOKEN}"]]);
  });
});

describe("rest: {input} in a URL path cannot walk the upstream path", () => {
  const byPath = () => ({ url: `${base}/echo/items/{id}/detail`, inputs: [{ name: "id", type: "string" }] });

  it.each([".", ".."])("refuses %j as a whole path segment, and sends nothing", async (id) => {
    const outcome = await invoke(byPath(), { id });
    expect(outcome).toEqual({
      error: "InvalidRequest",
      message: expect.stringContaining("would change the upstream path"),
    });
    expect(seen).toHaveLength(0);
  });

  it("refuses a segment that two placeholders or a literal %2e make into a dot segment", async () => {
    const pair = await invoke(
      {
        url: `${base}/echo/{a}{b}/x`,
        inputs: [
          { name: "a", type: "string" },
          { name: "b", type: "string" },
        ],
      },
      { a: ".", b: "." },
    );
    expect(pair).toMatchObject({ error: "InvalidRequest" });
    const encoded = await invoke(
      { url: `${base}/echo/%2E{a}/x`, inputs: [{ name: "a", type: "string" }] },
      { a: "." },
    );
    expect(encoded).toMatchObject({ error: "InvalidRequest" });
    expect(seen).toHaveLength(0);
  });

  it("sends values that only look like dot segments encoded, within the template's path", async () => {
    for (const id of ["%2e%2e", "../..", "...", ".hidden", "a..b"]) {
      const value = echoed(await invoke(byPath(), { id }));
      expect(value.path).toBe(`/echo/items/${encodeURIComponent(id)}/detail`);
    }
  });

  it("'..' in the query or outside the path is just a value", async () => {
    const value = echoed(
      await invoke(
        { url: `${base}/echo/q?x={id}`, query: { y: "{id}" }, inputs: [{ name: "id", type: "string" }] },
        { id: ".." },
      ),
    );
    expect(value.path).toBe("/echo/q");
    expect(value.query).toEqual([
      ["x", ".."],
      ["y", ".."],
    ]);
  });
});

describe("rest: failures come back as values", () => {
  it("a 404 is an HttpError with the status and the first 200 characters of the body", async () => {
    const outcome = await invoke({ url: `${base}/missing` });
    const body = `no item at /missing${"!".repeat(400)}`;
    expect(outcome).toEqual({
      error: "HttpError",
      status: 404,
      message: `HTTP 404 Not Found: ${body.slice(0, 200)}`,
    });
  });

  it("a slow endpoint is a TimeoutError at timeoutMs, and the request is given up", async () => {
    abandoned.length = 0;
    const outcome = await invoke({ url: `${base}/slow`, timeoutMs: 300 });
    expect(outcome).toEqual({ error: "TimeoutError", message: expect.stringContaining("300 ms") });
    await expect.poll(() => abandoned).toEqual(["/slow"]);
  });

  it("a response that does not match responseSchema is a ResponseSchemaError; a matching one passes", async () => {
    const outcome = await invoke({
      url: `${base}/item`,
      responseSchema: {
        type: "object",
        required: ["id", "name", "price"],
        properties: { id: { type: "integer" }, name: { type: "string" } },
      },
    });
    expect(outcome).toEqual({
      error: "ResponseSchemaError",
      message: expect.stringContaining("/id must be integer"),
    });
    expect((outcome as { message: string }).message).toContain("price");

    const ok = await invoke({
      url: `${base}/item`,
      responseSchema: { type: "object", properties: { name: { const: "widget" } } },
    });
    expect(ok).toEqual({ value: { id: "not-a-number", name: "widget" } });
  });

  it("a redirect to the metadata service is not followed: HttpError 302 naming the location", async () => {
    const outcome = await invoke({ url: `${base}/to-metadata` });
    expect(outcome).toEqual({
      error: "HttpError",
      status: 302,
      message: expect.stringContaining("redirects are not followed (Location: http://169.254.169.254/"),
    });
    expect(seen.map((request) => request.url)).toEqual(["/to-metadata"]);
  });

  it("a redirect is not followed even to an allowed address", async () => {
    const outcome = await invoke({ url: `${base}/to-loopback` });
    expect(outcome).toMatchObject({ error: "HttpError", status: 307 });
    expect(seen.map((request) => request.url)).toEqual(["/to-loopback"]);
  });

  it("a closed port is a NetworkError", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await invoke({ url: `http://127.0.0.1:${closedPort}/x` });
    expect(outcome).toEqual({ error: "NetworkError", message: expect.stringContaining("ECONNREFUSED") });
  });
});

describe("rest: SSRF guard at call time", () => {
  it("without the allowlist, 127.0.0.1 is a BlockedAddress and no request reaches the server", async () => {
    const outcome = await invoke({ url: `${base}/echo/x` }, {}, contextFor({ policy: strict }));
    expect(outcome).toEqual({
      error: "BlockedAddress",
      message: expect.stringMatching(/127\.0\.0\.1.*loopback/),
    });
    expect(seen).toHaveLength(0);
  });

  it("without the allowlist, the host name localhost is resolved and refused, nothing sent", async () => {
    const outcome = await invoke(
      { url: `http://localhost:${port}/echo/x` },
      {},
      contextFor({ policy: strict }),
    );
    expect(outcome).toEqual({
      error: "BlockedAddress",
      message: expect.stringMatching(/localhost.*loopback/),
    });
    expect(seen).toHaveLength(0);
  });

  it("a host placeholder filled with the metadata address is refused before any connection", async () => {
    const outcome = await invoke(
      { url: "http://{host}/latest/meta-data", inputs: [{ name: "host", type: "string" }] },
      { host: "169.254.169.254" },
    );
    expect(outcome).toEqual({ error: "BlockedAddress", message: expect.stringContaining("metadata") });
  });

  it("refuses when any resolved address is internal, even if another is allowed", async () => {
    const outcome = await invoke(
      { url: `http://mixed.test:${port}/echo/x` },
      {},
      contextFor({ resolveHost: async () => ["127.0.0.1", "10.0.0.1"] }),
    );
    expect(outcome).toEqual({ error: "BlockedAddress", message: expect.stringContaining("10.0.0.1") });
    expect(seen).toHaveLength(0);
  });

  it("DNS rebinding: a name that checked as public but connects to loopback is refused by the guarded fetch", async () => {
    const context = contextFor({
      policy: strict,
      resolveHost: async () => ["93.184.216.34"],
      fetch: createGuardedFetch(strict, { resolve: async () => ["127.0.0.1"] }),
    });
    const outcome = await invoke({ url: `http://rebind.test:${port}/echo/x` }, {}, context);
    expect(outcome).toEqual({
      error: "BlockedAddress",
      message: expect.stringMatching(/rebind\.test.*loopback/),
    });
    expect(seen).toHaveLength(0);
  });
});

describe("rest: check on write", () => {
  const strictRegistry = new ToolTypeRegistry(builtInToolTypes(), { networkPolicy: strict });

  function checkUrl(url: string, policy: NetworkPolicy = strict) {
    const config = restTool({ url });
    if (!RestType.check) throw new Error("rest has no check");
    return RestType.check(config.parameters, {
      networkPolicy: policy,
      jsonSchemas: strictRegistry.environment.jsonSchemas,
    });
  }

  it.each([
    ["http://169.254.169.254/latest/meta-data", /cloud instance metadata/],
    ["http://10.0.0.1/", /private/],
    ["http://0xA9FEA9FE/", /metadata/],
    ["http://[::ffff:a9fe:a9fe]/", /metadata/],
    ["http://[::1]:8080/x", /loopback/],
  ])("refuses the literal address in %s at path url", (url, reason) => {
    expect(checkUrl(url)).toEqual([{ path: "url", message: expect.stringMatching(reason) }]);
  });

  it.each(["http://93.184.216.34/", "https://api.example.com/items/{id}", "http://localhost:8080/"])(
    "accepts %s (host names are checked when the tool runs)",
    (url) => {
      expect(checkUrl(url)).toEqual([]);
    },
  );

  it("accepts an allowlisted literal", () => {
    expect(checkUrl("http://127.0.0.1:8080/", allowLoopback)).toEqual([]);
  });

  it("parseToolDocument answers 422 validation_failed at parameters.url with the YAML line", () => {
    const text = [
      "type: rest",
      "description: Reads instance metadata.",
      "parameters:",
      "  method: GET",
      "  url: http://169.254.169.254/latest/meta-data",
      "",
    ].join("\n");
    const result = parseToolDocument(text, "meta", strictRegistry);
    expect(result.ok).toBe(false);
    const error = (result as { error: VanceError }).error;
    expect(error.status).toBe(422);
    expect(error.code).toBe("validation_failed");
    expect(error.errors).toEqual([
      { path: "parameters.url", line: 5, message: expect.stringContaining("169.254.169.254") },
    ]);
  });

  it("parseToolDocument refuses 10.0.0.1 unless the allowlist names it", () => {
    const text = `type: rest\ndescription: internal\nparameters:\n  url: http://10.0.0.1/api\n`;
    expect(parseToolDocument(text, "internal", strictRegistry).ok).toBe(false);
    const allowing = new ToolTypeRegistry(builtInToolTypes(), {
      networkPolicy: createNetworkPolicy(["10.0.0.0/8"]),
    });
    expect(parseToolDocument(text, "internal", allowing).ok).toBe(true);
  });

  it("reports an invalid responseSchema and a GET body on write", () => {
    const text = `type: rest\ndescription: bad\nparameters:\n  url: https://api.example.com/\n  bodyTemplate: {a: 1}\n  responseSchema: {type: 12}\n`;
    const result = parseToolDocument(text, "bad", strictRegistry);
    expect(result.ok).toBe(false);
    const paths = (result as { error: VanceError }).error.errors.map((error) => error.path);
    expect(paths).toEqual(["parameters.bodyTemplate", "parameters.responseSchema"]);
  });
});

describe("createGuardedFetch", () => {
  it("refuses localhost at connect time when it is not allowlisted, even when called directly", async () => {
    const fetch = createGuardedFetch(strict);
    await expect(fetch(`http://localhost:${port}/echo/direct`, {})).rejects.toMatchObject({
      name: "BlockedAddressError",
      message: expect.stringContaining("loopback"),
    });
    expect(seen).toHaveLength(0);
  });

  it("refuses a literal loopback address before connecting", async () => {
    await expect(createGuardedFetch(strict)(`${base}/echo/direct`, {})).rejects.toMatchObject({
      name: "BlockedAddressError",
    });
    expect(seen).toHaveLength(0);
  });

  it("refuses a name resolving to the metadata service, or to any internal address among others", async () => {
    const fetch = createGuardedFetch(allowLoopback, {
      resolve: async (host) => (host === "metadata.test" ? ["169.254.169.254"] : ["127.0.0.1", "10.0.0.1"]),
    });
    await expect(fetch("http://metadata.test/latest/meta-data", {})).rejects.toMatchObject({
      name: "BlockedAddressError",
      message: expect.stringContaining("metadata"),
    });
    await expect(fetch(`http://mixed.test:${port}/echo/x`, {})).rejects.toMatchObject({
      name: "BlockedAddressError",
      message: expect.stringContaining("10.0.0.1"),
    });
    expect(seen).toHaveLength(0);
  });

  it("connects to an allowed address and returns status, headers and body as a Response", async () => {
    const fetch = createGuardedFetch(allowLoopback, { resolve: async () => ["127.0.0.1"] });
    const response = await fetch(`http://service.test:${port}/echo/direct?x=1`, {
      method: "PUT",
      headers: { "x-test": "yes" },
      body: JSON.stringify({ a: 1 }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    const value = (await response.json()) as {
      method: string;
      query: string[][];
      headers: Record<string, string>;
      body: unknown;
    };
    expect(value).toMatchObject({ method: "PUT", query: [["x", "1"]], body: { a: 1 } });
    expect(value.headers).toMatchObject({ host: `service.test:${port}`, "x-test": "yes" });
  });

  it("returns a redirect as is, with its Location", async () => {
    const response = await createGuardedFetch(allowLoopback)(`${base}/to-metadata`, { redirect: "follow" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("http://169.254.169.254/latest/meta-data/");
    expect(seen).toHaveLength(1);
  });

  it("honours the abort signal, and closes the request it ends", async () => {
    abandoned.length = 0;
    await expect(
      createGuardedFetch(allowLoopback)(`${base}/slow`, { signal: AbortSignal.timeout(150) }),
    ).rejects.toMatchObject({ name: "TimeoutError" });
    await expect.poll(() => abandoned).toEqual(["/slow"]);
  });
});

describe("dnsHostResolver", () => {
  it("returns IP literals as they are and resolves localhost to loopback", async () => {
    expect(await dnsHostResolver("[::1]")).toEqual(["::1"]);
    expect(await dnsHostResolver("127.0.0.1")).toEqual(["127.0.0.1"]);
    const addresses = await dnsHostResolver("localhost");
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses) expect(strict.addressProblem(address)).toMatch(/loopback/);
  });
});
