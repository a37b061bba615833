import { describe, expect, it } from "vitest";
import type { CascadeHit, Layer } from "../cascade/document-cascade";
import type { ServerToolConfig } from "../config/schema";
import { VanceError } from "../errors";
import {
  BLOCKED_ADDRESS_ERROR_NAME,
  createNetworkPolicy,
  RESPONSE_TOO_LARGE_ERROR_NAME,
} from "../net/network-policy";
import {
  MCP_ERROR_RESPONSE_NAME,
  MCP_TIMEOUT_ERROR_NAME,
  type McpCallResult,
  type McpClient,
  McpFailure,
  type McpFailureReason,
  type McpServerTarget,
  type ToolRuntime,
} from "../ports/tool-runtime";
import { SecretScrubber } from "../secrets/scrub";
import { JsonSchemaValidator } from "../validation/json-schema-validator";
import { MCP_ERROR_MESSAGE_CHARS, McpServerCaches, mcpOutcome, mcpToolTypes, sizeOf } from "./mcp";
import type { InvocationContext, SourceContext, SourceTool } from "./tool-type";

/** The two types with caches of this file's own. */
const { McpType, McpServerType } = mcpToolTypes(new McpServerCaches());

const TOKEN = "tok-9f8e7d6c5b4a-s3cret";
const SERVER_DOC =
  "url: https://mcp.example.com/mcp\nheaders:\n  Authorization: Bearer ${secret:MCP_TOKEN}\ntimeoutMs: 300\n";

const config = (type: string, parameters: Record<string, unknown>): ServerToolConfig =>
  ({ name: "jira", type, description: "x", parameters }) as unknown as ServerToolConfig;

/** A fake MCP client that records what it was asked and answers as told. */
function fakeClient(answer: (target: McpServerTarget, name: string) => Promise<McpCallResult>) {
  const calls: { target: McpServerTarget; name: string; args: unknown }[] = [];
  let current = true;
  const client: McpClient = {
    listTools: async (target) => {
      calls.push({ target, name: "tools/list", args: null });
      return {
        tools: [
          {
            name: "get-issue",
            description: `Reads an issue (auth ${TOKEN})`,
            inputSchema: { type: "object" },
          },
          { name: "search", inputSchema: { type: "object", properties: { q: { type: "string" } } } },
        ],
        current: () => current,
      };
    },
    callTool: async (target, name, args) => {
      calls.push({ target, name, args });
      return answer(target, name);
    },
  };
  return { client, calls, changeList: () => (current = false) };
}

interface Setup {
  documents?: Record<string, string>;
  layer?: Layer;
  secrets?: Record<string, string>;
  mcp?: McpClient;
  signal?: AbortSignal;
}

function hitFor(documents: Record<string, string>, layer: Layer) {
  return async (path: string): Promise<CascadeHit | null> => {
    const body = documents[path];
    if (body === undefined) return null;
    const bundled = layer === "bundled";
    return {
      layer: layer as CascadeHit["layer"],
      path,
      key: bundled ? null : `acme/shop/${path}`,
      body,
      etag: bundled ? null : '"etag-1"',
      contentType: "application/yaml",
      audit: null,
    };
  };
}

function runtime(mcp: McpClient | undefined): ToolRuntime {
  return {
    fetch: async () => {
      throw new Error("no fetch");
    },
    resolveHost: async () => [],
    scripts: {
      run: async () => {
        throw new Error("no scripts");
      },
    },
    now: () => Date.now(),
    ...(mcp ? { mcp } : {}),
  };
}

function sourceContext(setup: Setup = {}): SourceContext {
  const secrets = setup.secrets ?? { MCP_TOKEN: TOKEN };
  return {
    tenant: "acme",
    project: "shop",
    runtime: runtime(setup.mcp),
    networkPolicy: createNetworkPolicy([]),
    readHit: hitFor(setup.documents ?? { "mcp-servers/jira.yaml": SERVER_DOC }, setup.layer ?? "tenant"),
    secretsFor: (layer) => async (name) => (layer === "bundled" ? undefined : secrets[name]),
  };
}

function invocationContext(setup: Setup = {}): InvocationContext {
  const source = sourceContext(setup);
  return {
    caller: { tenant: "acme", project: "shop" },
    runtime: source.runtime,
    networkPolicy: source.networkPolicy,
    jsonSchemas: new JsonSchemaValidator(),
    signal: setup.signal ?? new AbortController().signal,
    depth: 0,
    readDocument: async (path) => (await source.readHit(path))?.body ?? null,
    readHit: source.readHit,
    secret: async () => undefined,
    secretsFor: source.secretsFor,
    callTool: async () => ({ error: "NotAvailable", message: "none" }),
  };
}

const mcpParameters = { server: "jira", toolName: "get-issue" };

/** `context` with its cascade reads counted. */
function countingLookups(context: InvocationContext) {
  let lookups = 0;
  const counting: InvocationContext = {
    ...context,
    readHit: (path) => {
      lookups++;
      return context.readHit(path);
    },
  };
  return { counting, lookups: () => lookups };
}
const invokeMcp = (setup: Setup, input: Record<string, unknown> = {}) =>
  McpType.invoke!(config("mcp", mcpParameters), mcpParameters, input, invocationContext(setup));

describe("mcpOutcome: a tools/call result as the tool answers it", () => {
  it("answers structuredContent when present", () => {
    expect(mcpOutcome({ content: [{ type: "text", text: '{"a":1}' }], structuredContent: { a: 1 } })).toEqual(
      { value: { a: 1 } },
    );
  });

  it("joins text blocks with newlines; a single JSON text stays a string", () => {
    expect(mcpOutcome({ content: [{ type: "text", text: '{"a":1}' }] })).toEqual({ value: '{"a":1}' });
    expect(
      mcpOutcome({
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      }),
    ).toEqual({ value: "one\ntwo" });
    expect(mcpOutcome({ content: [] })).toEqual({ value: "" });
  });

  it("turns images, audio and resources into placeholders with kind, MIME type and size, never their bytes", () => {
    const data = "A".repeat(16_796); // 12,597 bytes once decoded
    const outcome = mcpOutcome({
      content: [
        { type: "image", mimeType: "image/png", data },
        { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "héllo" } },
        { type: "resource", resource: { uri: "file:///a.bin", blob: "AAAAAA==" } },
        {
          type: "resource_link",
          uri: "https://x.example/r",
          name: "r",
          mimeType: "application/pdf",
          size: 3_145_728,
        },
        { type: "hologram" },
      ],
    });
    expect(outcome).toEqual({
      value: [
        "[image: image/png, 12.3 KiB]",
        "[audio: audio/wav, 3 B]",
        "[resource: file:///notes.md, text/markdown, 6 B]",
        "[resource: file:///a.bin, 4 B]",
        "[resource: https://x.example/r, application/pdf, 3.0 MiB]",
        "[hologram content]",
      ].join("\n"),
    });
    expect(JSON.stringify(outcome)).not.toContain("AAAA");
  });

  it("keeps placeholders short and on one line whatever the server puts in them", () => {
    const outcome = mcpOutcome({
      content: [{ type: "resource_link", uri: `x:${"y".repeat(500)}\n]`, name: "r" }],
    });
    const value = (outcome as { value: string }).value;
    expect(value.length).toBeLessThan(220);
    expect(value).not.toContain("\n");
  });

  it("answers isError as McpToolError with the text, scrubbed before it is cut", () => {
    expect(mcpOutcome({ isError: true, content: [{ type: "text", text: "boom" }] })).toEqual({
      error: "McpToolError",
      message: "boom",
    });
    const straddling = `${"x".repeat(MCP_ERROR_MESSAGE_CHARS - 5)}${TOKEN}`;
    const cut = mcpOutcome(
      { isError: true, content: [{ type: "text", text: straddling }] },
      new SecretScrubber([TOKEN]),
    );
    expect(cut).toEqual({ error: "McpToolError", message: `${"x".repeat(MCP_ERROR_MESSAGE_CHARS - 5)}***` });
    expect(mcpOutcome({ isError: true, content: [{ type: "text", text: "y".repeat(5000) }] })).toMatchObject({
      message: `${"y".repeat(MCP_ERROR_MESSAGE_CHARS)}…`,
    });
    expect(mcpOutcome({ isError: true, content: [], structuredContent: { code: 7 } })).toEqual({
      error: "McpToolError",
      message: '{"code":7}',
    });
  });

  it("formats sizes in B, KiB and MiB", () => {
    expect([sizeOf(0), sizeOf(1023), sizeOf(1024), sizeOf(12_595), sizeOf(5 * 1024 * 1024)]).toEqual([
      "0 B",
      "1023 B",
      "1.0 KiB",
      "12.3 KiB",
      "5.0 MiB",
    ]);
  });
});

describe("mcp and mcp_server sourcing: open", () => {
  it("mcp takes the server's schema for toolName, unless its document fixes one", () => {
    expect(McpType.sourcing?.kind).toBe("schema");
    expect(McpType.sourcing?.schemaTool?.(mcpParameters)).toBe("get-issue");
    expect(McpType.sourcing?.schemaTool?.({ ...mcpParameters, inputSchema: { type: "object" } })).toBeNull();
    expect(McpServerType.sourcing?.kind).toBe("pack");
    expect(McpServerType.sourcing?.promptHint?.({ server: "jira", promptHint: "Jira issues" })).toBe(
      "Jira issues",
    );
  });

  it("opens the server document's target: secrets filled, key by tenant, layer, document and ETag", async () => {
    const { client, calls, changeList } = fakeClient(async () => ({ content: [] }));
    const source = await McpServerType.sourcing!.open(
      config("mcp_server", { server: "jira" }),
      { server: "jira" },
      sourceContext({ mcp: client }),
    );
    expect(source.key).toBe('acme\ntenant\nacme/shop/mcp-servers/jira.yaml\n"etag-1"');
    const list = await source.load(new AbortController().signal);
    expect(calls[0]?.target).toEqual({
      key: source.key,
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: `Bearer ${TOKEN}` },
      timeoutMs: 300,
    });
    expect(list.tools).toEqual([
      {
        sourceName: "get-issue",
        description: "Reads an issue (auth ***)",
        inputSchema: { type: "object" },
        inputSchemaText: '{"type":"object"}',
      },
      {
        sourceName: "search",
        description: "",
        inputSchema: { type: "object", properties: { q: { type: "string" } } },
        // The text its compiled validator is found by, computed once per listing.
        inputSchemaText: '{"type":"object","properties":{"q":{"type":"string"}}}',
      },
    ]);
    expect(list.current?.()).toBe(true);
    changeList();
    expect(list.current?.()).toBe(false);
  });

  it("keys a bundled server document by its path, per tenant", async () => {
    const source = await McpType.sourcing!.open(
      config("mcp", mcpParameters),
      mcpParameters,
      sourceContext({
        layer: "bundled",
        documents: { "mcp-servers/jira.yaml": "url: https://x.example/mcp\n" },
      }),
    );
    expect(source.key).toBe("acme\nbundled\nmcp-servers/jira.yaml\nbundled");
  });

  it("throws invalid_document naming what is wrong: no document or an invalid one on open, a missing secret on load", async () => {
    const open = (setup: Setup) =>
      McpType.sourcing!.open(config("mcp", mcpParameters), mcpParameters, sourceContext(setup));
    const missing = await open({ documents: {} }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(VanceError);
    expect(missing).toMatchObject({
      code: "invalid_document",
      message: expect.stringContaining("mcp-servers/jira.yaml"),
    });
    const invalid = await open({ documents: { "mcp-servers/jira.yaml": "url: nope\n" } }).catch(
      (error: unknown) => error,
    );
    expect(invalid).toMatchObject({
      code: "invalid_document",
      message: expect.stringContaining("in the tenant layer is invalid"),
      errors: [expect.objectContaining({ path: "url", line: 1 })],
    });
    // Listings open the source every time: the secrets are read only when the list loads.
    const { client, calls } = fakeClient(async () => ({ content: [] }));
    const source = await open({ secrets: {}, mcp: client });
    await expect(source.load(new AbortController().signal)).rejects.toMatchObject({
      code: "invalid_document",
      message: expect.stringContaining("'MCP_TOKEN'"),
    });
    expect(calls).toEqual([]);
  });

  it("fails the load with the client's reason, scrubbed; and without a client", async () => {
    const failing: McpClient = {
      listTools: async () => {
        throw new Error(`connection refused (sent Bearer ${TOKEN})`);
      },
      callTool: async () => ({ content: [] }),
    };
    const source = await McpType.sourcing!.open(
      config("mcp", mcpParameters),
      mcpParameters,
      sourceContext({ mcp: failing }),
    );
    await expect(source.load(new AbortController().signal)).rejects.toThrow(
      "MCP server 'jira': connection refused (sent Bearer ***)",
    );
    const withoutClient = await McpType.sourcing!.open(
      config("mcp", mcpParameters),
      mcpParameters,
      sourceContext(),
    );
    await expect(withoutClient.load(new AbortController().signal)).rejects.toThrow("no MCP client");
  });
});

describe("mcp and mcp_server: invoke", () => {
  it("calls toolName on the server and maps the result, scrubbed of the secrets it used", async () => {
    const { client, calls } = fakeClient(async (target) => ({
      content: [{ type: "text", text: `you sent ${target.headers.Authorization}` }],
    }));
    expect(await invokeMcp({ mcp: client }, { key: "ABC-1" })).toEqual({ value: "you sent Bearer ***" });
    expect(calls[0]).toMatchObject({ name: "get-issue", args: { key: "ABC-1" } });
  });

  it("a pack's sub-tool calls the source tool's own name", async () => {
    const { client, calls } = fakeClient(async () => ({ content: [], structuredContent: { found: 2 } }));
    const outcome = await McpServerType.sourcing!.invokeSubTool!(
      config("mcp_server", { server: "jira" }),
      { server: "jira" },
      { sourceName: "Search-Issues", description: "", inputSchema: { type: "object" } },
      { q: "bug" },
      invocationContext({ mcp: client }),
    );
    expect(outcome).toEqual({ value: { found: 2 } });
    expect(calls[0]).toMatchObject({ name: "Search-Issues", args: { q: "bug" } });
  });

  it("keeps its caches in the instance it was made with, which counts them for /v1/metrics", async () => {
    const caches = new McpServerCaches();
    const other = new McpServerCaches();
    const { McpServerType: pack } = mcpToolTypes(caches);
    const { client, calls } = fakeClient(async () => ({ content: [{ type: "text", text: "ok" }] }));
    const source = await pack.sourcing!.open(
      config("mcp_server", { server: "jira" }),
      { server: "jira" },
      sourceContext({ mcp: client }),
    );
    const listed = (await source.load(new AbortController().signal)).tools[1]!;
    expect(caches.cacheReports()).toEqual({
      serverOfSubTool: { hits: 0, misses: 0 },
      parsedServers: { hits: 0, misses: 1 },
    });
    const { counting, lookups } = countingLookups(invocationContext({ mcp: client }));
    const outcome = await pack.sourcing!.invokeSubTool!(
      config("mcp_server", { server: "jira" }),
      { server: "jira" },
      listed,
      { q: "bug" },
      counting,
    );
    expect([outcome, lookups(), calls.at(-1)?.name]).toEqual([{ value: "ok" }, 0, "search"]);
    expect(caches.cacheReports().serverOfSubTool).toEqual({ hits: 1, misses: 0 });
    expect(other.cacheReports()).toEqual({
      serverOfSubTool: { hits: 0, misses: 0 },
      parsedServers: { hits: 0, misses: 0 },
    });
  });

  it("a pack's warm calls reuse the opened target until a secret changes: the new value is sent and scrubbed", async () => {
    const caches = new McpServerCaches();
    const { McpServerType: pack } = mcpToolTypes(caches);
    const { client, calls } = fakeClient(async (target) => ({
      content: [{ type: "text", text: `you sent ${target.headers.Authorization}` }],
    }));
    const source = await pack.sourcing!.open(
      config("mcp_server", { server: "jira" }),
      { server: "jira" },
      sourceContext({ mcp: client }),
    );
    const listed = (await source.load(new AbortController().signal)).tools[1]!;
    const secrets: Record<string, string> = { MCP_TOKEN: TOKEN };
    const context = invocationContext({ mcp: client, secrets });
    const call = () =>
      pack.sourcing!.invokeSubTool!(
        config("mcp_server", { server: "jira" }),
        { server: "jira" },
        listed,
        {},
        context,
      );
    expect([await call(), await call()]).toEqual([
      { value: "you sent Bearer ***" },
      { value: "you sent Bearer ***" },
    ]);
    secrets.MCP_TOKEN = "tok-rotated-0a1b2c3d4e5f";
    expect(await call()).toEqual({ value: "you sent Bearer ***" });
    const sent = calls.filter((c) => c.name === "search").map((c) => c.target);
    expect(sent.map((target) => target.headers.Authorization)).toEqual([
      `Bearer ${TOKEN}`,
      `Bearer ${TOKEN}`,
      "Bearer tok-rotated-0a1b2c3d4e5f",
    ]);
    // The same document with the same secret is the same target: nothing opened again.
    expect([sent[1] === sent[0], sent[2] === sent[1]]).toEqual([true, false]);
  });

  it("an mcp tool given the source tool its schema came from calls without locating the server again", async () => {
    const caches = new McpServerCaches();
    const { McpType: single } = mcpToolTypes(caches);
    const { client } = fakeClient(async (target) => ({ content: [{ type: "text", text: target.url }] }));
    const source = await single.sourcing!.open(
      config("mcp", mcpParameters),
      mcpParameters,
      sourceContext({ mcp: client }),
    );
    const listed = (await source.load(new AbortController().signal)).tools[0]!;
    const { counting, lookups } = countingLookups(invocationContext({ mcp: client }));
    const call = (from?: SourceTool) =>
      single.invoke!(config("mcp", mcpParameters), mcpParameters, { key: "A-1" }, counting, from);
    expect([await call(listed), lookups()]).toEqual([{ value: "https://mcp.example.com/mcp" }, 0]);
    expect([await call(), lookups()]).toEqual([{ value: "https://mcp.example.com/mcp" }, 1]);
  });

  it("answers isError as McpToolError, scrubbed", async () => {
    const { client } = fakeClient(async () => ({
      isError: true,
      content: [{ type: "text", text: `denied for Bearer ${TOKEN}` }],
    }));
    expect(await invokeMcp({ mcp: client })).toEqual({
      error: "McpToolError",
      message: "denied for Bearer ***",
    });
  });

  it("names what is missing: the client, the server document, a secret", async () => {
    expect(await invokeMcp({})).toMatchObject({ error: "McpUnavailable" });
    const { client } = fakeClient(async () => ({ content: [] }));
    expect(await invokeMcp({ mcp: client, documents: {} })).toMatchObject({
      error: "McpServerNotFound",
      message: expect.stringContaining("mcp-servers/jira.yaml"),
    });
    expect(await invokeMcp({ mcp: client, secrets: {} })).toMatchObject({
      error: "SecretNotFound",
      message: expect.stringContaining("'MCP_TOKEN'"),
    });
    expect(
      await invokeMcp({ mcp: client, documents: { "mcp-servers/jira.yaml": "url: 12\n" } }),
    ).toMatchObject({
      error: "InvalidDocument",
    });
  });

  it("maps the client's failures by reason: unavailable, timeout, blocked, refused, protocol, too large", async () => {
    const rejecting = (reason: McpFailureReason, message: string): McpClient => ({
      listTools: async () => ({ tools: [], current: () => true }),
      callTool: async () => {
        throw new McpFailure(reason, message);
      },
    });
    expect(await invokeMcp({ mcp: rejecting("unavailable", `ECONNREFUSED (Bearer ${TOKEN})`) })).toEqual({
      error: "McpUnavailable",
      message: "MCP server 'jira': ECONNREFUSED (Bearer ***)",
    });
    expect(await invokeMcp({ mcp: rejecting("timeout", "late") })).toEqual({
      error: "TimeoutError",
      message: "MCP server 'jira' did not answer 'get-issue' within 300 ms",
    });
    expect(await invokeMcp({ mcp: rejecting("blocked_address", "refusing to connect to x") })).toMatchObject({
      error: "BlockedAddress",
    });
    expect(await invokeMcp({ mcp: rejecting("refused", "MCP error -32602: no such tool") })).toEqual({
      error: "McpToolError",
      message: "MCP server 'jira' refused 'get-issue': MCP error -32602: no such tool",
    });
    expect(await invokeMcp({ mcp: rejecting("protocol", "too many pings") })).toEqual({
      error: "McpProtocolError",
      message: "MCP server 'jira': too many pings",
    });
    expect(await invokeMcp({ mcp: rejecting("response_too_large", "a huge message") })).toEqual({
      error: "ResponseTooLarge",
      message: "MCP server 'jira': a huge message",
    });
    expect(await invokeMcp({ mcp: rejecting("aborted", "the caller ended the request") })).toMatchObject({
      error: "McpUnavailable",
    });
  });

  it("names each failure as the errors it replaced were named (logs, stack traces)", () => {
    expect(new McpFailure("blocked_address", "x").name).toBe(BLOCKED_ADDRESS_ERROR_NAME);
    expect(new McpFailure("response_too_large", "x").name).toBe(RESPONSE_TOO_LARGE_ERROR_NAME);
    expect(new McpFailure("timeout", "x").name).toBe(MCP_TIMEOUT_ERROR_NAME);
    expect(new McpFailure("refused", "x").name).toBe(MCP_ERROR_RESPONSE_NAME);
    expect(new McpFailure("aborted", "x")).toMatchObject({ name: "AbortError", reason: "aborted" });
  });

  it("reads the reason, not the name: an error merely named TimeoutError is the server unavailable", async () => {
    const named: McpClient = {
      listTools: async () => ({ tools: [], current: () => true }),
      callTool: async () => {
        const error = new Error("late");
        error.name = "TimeoutError";
        throw error;
      },
    };
    expect(await invokeMcp({ mcp: named })).toEqual({
      error: "McpUnavailable",
      message: "MCP server 'jira': late",
    });
  });

  it("answers by itself when a client overruns timeoutMs, and Cancelled when the caller ends first", async () => {
    const hanging: McpClient = {
      listTools: async () => ({ tools: [], current: () => true }),
      callTool: () => new Promise(() => {}),
    };
    // The document's 300 ms ended it, not the 10 s default.
    expect(await invokeMcp({ mcp: hanging })).toEqual({
      error: "TimeoutError",
      message: "MCP server 'jira' did not answer 'get-issue' within 300 ms",
    });

    const caller = new AbortController();
    // The caller ends once the call reached the client.
    const abandoned: McpClient = {
      ...hanging,
      callTool: () => {
        caller.abort(new Error("deadline of the script"));
        return new Promise(() => {});
      },
    };
    expect(await invokeMcp({ mcp: abandoned, signal: caller.signal })).toEqual({
      error: "Cancelled",
      message:
        "the call of 'get-issue' on MCP server 'jira' was abandoned because its caller ended (deadline of the script)",
    });
  });
});
