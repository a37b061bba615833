import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type McpBehaviour,
  putMcpServer,
  type RpcMessage,
  sseEvent,
  startHostileMcp,
  startTarget,
  type Target,
} from "./support";

/** The largest upstream answer the service reads, counted after decompression (its default). */
const RESPONSE_CAP = 10 * 1024 * 1024;
/** Just over the cap: enough to prove it, and cheap to build and send. */
const OVER_CAP = RESPONSE_CAP + 256 * 1024;
/** The calls each exchange case makes at once, on each path (unless it says otherwise). */
const AT_ONCE = 4;

/** Hostile MCP servers against the real server: each attack bounded, the event loop never blocked. */
describe("attack suite: hostile MCP servers", () => {
  let target: Target;
  const T = "/v1/tenants/hostile/projects/mcp";
  const invoke = async (name: string, params: Record<string, unknown> = {}) => {
    const answer = await target.request(`${T}/tools/${name}/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ params }),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  };
  const tool = (name: string, inputSchema: unknown = { type: "object" }) => ({
    name,
    description: `the ${name} tool`,
    inputSchema,
  });

  beforeAll(async () => {
    target = await startTarget();
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  it("a tools/call answered by a stream of 20,000 pings fails after a handful, answered by as few POSTs", async () => {
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list") return { json: rpc(message, { tools: [tool("echo")] }) };
      if (message.method !== "tools/call") return undefined;
      const pings = Array.from({ length: 20_000 }, (_, index) =>
        sseEvent({ jsonrpc: "2.0", id: `ping-${index}`, method: "ping" }),
      ).join("");
      return { sse: pings + sseEvent(rpc(message, { content: [{ type: "text", text: "done" }] })) };
    });
    try {
      await putMcpServer(target, "mcp", "pinger", server.url, {
        name: "pinged",
        type: "mcp",
        toolName: "echo",
      });
      const answer = await target.attack(
        "MCP tools/call streaming 20,000 pings (1.5 MB)",
        () => invoke("pinged"),
        (result) => `${result.status} ${String(result.body.error)}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ error: "McpProtocolError" });
      expect(String(answer.body.message)).toMatch(/more than 4 requests of its own/);
      const answered = server.messages.filter((message) => String(message.id).startsWith("ping-"));
      expect(answered.length).toBeLessThanOrEqual(4);
    } finally {
      await server.close();
    }
  });

  it("a structuredContent of 400,000 keys (5.5 MB, under the byte cap) is refused before it is parsed", async () => {
    const keys = Object.fromEntries(Array.from({ length: 400_000 }, (_, index) => [`k${index}`, 1]));
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list") return { json: rpc(message, { tools: [tool("wide")] }) };
      if (message.method !== "tools/call") return undefined;
      return { json: rpc(message, { content: [], structuredContent: keys }) };
    });
    try {
      await putMcpServer(target, "mcp", "wide", server.url, {
        name: "wide_result",
        type: "mcp",
        toolName: "wide",
      });
      const answer = await target.attack(
        "MCP structuredContent with 400,000 keys (5.5 MB)",
        () => invoke("wide_result"),
        (result) => `${result.status} ${String(result.body.error)}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ error: "ResponseTooLarge" });
      expect(String(answer.body.message)).toMatch(/more than 100000 values/);
    } finally {
      await server.close();
    }
  });

  it("tools/list answering empty pages with fresh cursors for ever is read to 50 pages", async () => {
    let page = 0;
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/list") return undefined;
      page += 1;
      const tools = page === 1 ? [tool("first")] : [];
      return { json: rpc(message, { tools, nextCursor: `cursor-${page}` }) };
    });
    const warned = target.warnings.length;
    try {
      await putMcpServer(target, "mcp", "pager", server.url, { name: "pages", type: "mcp_server" });
      const answer = await target.attack(
        "MCP tools/list with endless empty pages",
        () => target.request(`${T}/tools`),
        (result) => `${result.status}, ${page} pages read`,
      );
      expect(answer.status).toBe(200);
      const listed = (await answer.json()) as { tools: { name: string }[] };
      expect(listed.tools.map((entry) => entry.name)).toContain("pages__first");
      expect(page).toBe(50);
      // Each page waited on a signal of its own: one signal for all 50 held a listener per page.
      expect(target.warnings.slice(warned).filter((line) => line.includes("MaxListeners"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("a tools/list that stops answering at page 20 times out, and only that page is cancelled", async () => {
    let page = 0;
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/list") return undefined;
      page += 1;
      if (page < 20)
        return { json: rpc(message, { tools: [tool(`t${page}`)], nextCursor: `cursor-${page}` }) };
      return {
        sse: async function* () {
          // Never answers: the listing's deadline ends it.
          await new Promise(() => {});
          yield "";
        },
      };
    });
    try {
      await putMcpServer(target, "mcp", "stalled", server.url, { name: "stalled", type: "mcp_server" }, 1000);
      const answer = await target.attack(
        "MCP tools/list stalling at page 20",
        () =>
          target.request(`${T}/tools/stalled__t1/invoke`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ params: {} }),
          }),
        (result) => `${result.status}, ${page} pages asked`,
      );
      expect(page).toBe(20);
      const listed = server.messages.filter((m) => m.method === "tools/list").map((m) => String(m.id));
      const cancelled = () =>
        server.messages
          .filter((m) => m.method === "notifications/cancelled")
          .map((m) => String(m.params?.requestId));
      // The stalled page is cancelled once; the 19 answered before it are not.
      await expect.poll(cancelled).toEqual([listed[19]]);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ error: "SourceUnavailable" });
    } finally {
      await server.close();
    }
  });

  it("a 2 MB tools/list cursor is never sent back: the list stops at the page that carried it", async () => {
    const cursor = "c".repeat(2 * 1024 * 1024);
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/list") return undefined;
      return { json: rpc(message, { tools: [tool("only")], nextCursor: cursor }) };
    });
    try {
      await putMcpServer(target, "mcp", "cursor", server.url, { name: "cursor", type: "mcp_server" });
      const answer = await target.attack(
        "MCP tools/list with a 2 MB cursor",
        () => target.request(`${T}/tools`),
        (result) =>
          `${result.status}, ${server.messages.filter((m) => m.method === "tools/list").length} list request(s)`,
      );
      expect(answer.status).toBe(200);
      const lists = server.messages.filter((message) => message.method === "tools/list");
      expect(lists).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("control characters in a server's tool descriptions never reach the listing", async () => {
    const description = "\u001b[31mred\u001b[0m \u202eevil\u202c\r\nnext\u0000line\tkept";
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/list") return undefined;
      return {
        json: rpc(message, { tools: [{ name: "painted", description, inputSchema: { type: "object" } }] }),
      };
    });
    try {
      await putMcpServer(target, "mcp", "painter", server.url, { name: "painter", type: "mcp_server" });
      const answer = await target.attack(
        "MCP tool description with ESC, U+202E, CR and NUL",
        () => target.request(`${T}/tools`),
        (result) => `${result.status}`,
      );
      const listed = (await answer.json()) as { tools: { name: string; description: string }[] };
      const painted = listed.tools.find((entry) => entry.name === "painter__painted");
      expect(painted?.description).toBe("[31mred[0m evil\nnextline\tkept");
    } finally {
      await server.close();
    }
  });

  it("a server's 200 tools with 40,000-character descriptions are listed cut at 1,024 characters, as an OpenAPI operation's", async () => {
    const server = await startHostileMcp((message) => {
      if (message.method !== "tools/list") return undefined;
      const tools = Array.from({ length: 200 }, (_, index) => ({
        name: `wordy_${index}`,
        description: `tool ${index} `.padEnd(40_000, "blah "),
        inputSchema: { type: "object" },
      }));
      return { json: rpc(message, { tools }) };
    });
    try {
      await putMcpServer(target, "mcp", "wordy", server.url, { name: "wordy", type: "mcp_server" });
      const answer = await target.attack(
        "200 MCP tools with 40,000-character descriptions",
        () => target.request(`${T}/tools`),
        (result) => `${result.status}`,
      );
      const listed = (await answer.json()) as { tools: { name: string; description: string }[] };
      const wordy = listed.tools.filter((entry) => entry.name.startsWith("wordy__"));
      expect(wordy).toHaveLength(200);
      for (const entry of wordy) expect(entry.description).toHaveLength(1_024);
      expect(wordy[0]?.description.endsWith("…")).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("a 1.4 MB input schema offered by the server is refused before Ajv compiles it", async () => {
    const properties = Object.fromEntries(
      Array.from({ length: 700 }, (_, index) => [
        `field_${index}`,
        { type: "string", description: "x".repeat(2000), pattern: `^v${index}$` },
      ]),
    );
    const schema = { type: "object", properties };
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list") return { json: rpc(message, { tools: [tool("huge", schema)] }) };
      if (message.method === "tools/call")
        return { json: rpc(message, { content: [{ type: "text", text: "ran" }] }) };
      return undefined;
    });
    try {
      await putMcpServer(target, "mcp", "huge", server.url, {
        name: "huge_schema",
        type: "mcp",
        toolName: "huge",
      });
      const answer = await target.attack(
        "MCP tool with a 1.4 MB input schema, invoked",
        () => invoke("huge_schema"),
        (result) => `${result.status} ${String(result.body.code)}`,
      );
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({ code: "invalid_document" });
      expect(String(answer.body.detail)).toMatch(/too large/);
      expect(server.messages.filter((message) => message.method === "tools/call")).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  /** One tool call's failure as the caller sees it, whichever path it came by. */
  interface CallFailure {
    readonly status: number;
    readonly error: unknown;
    readonly message: string;
  }

  /** `tools/call` on the process's MCP endpoint: the tool's failure from the result's `structuredContent`. */
  const mcpCall = async (processId: string, name: string, id: number): Promise<CallFailure> => {
    const answer = await target.request(`${T}/processes/${processId}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } }),
    });
    const text = await answer.text();
    const data = answer.headers.get("content-type")?.startsWith("text/event-stream")
      ? text
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice("data: ".length))
          .at(-1)
      : text;
    const message = JSON.parse(data ?? "null") as {
      result?: { isError?: boolean; structuredContent?: { error?: unknown; message?: unknown } };
    };
    const failure = message.result?.isError === true ? message.result.structuredContent : undefined;
    return { status: answer.status, error: failure?.error, message: String(failure?.message) };
  };

  const failures = (results: readonly CallFailure[]) =>
    [...new Set(results.map((result) => `${result.status} ${String(result.error)}`))].join(", ");

  /**
   * An upstream exchange case: a hostile MCP server behind an `mcp_server` pack answers
   * `initialize` and `tools/list` properly and every `tools/call` with `answer`; the pack's tool
   * is called `atOnce` times at once through the direct invoke, then as many through a process's
   * MCP endpoint. Each call must fail with `error` (its message matching `message`), the serving
   * thread must stay free meanwhile, every connection a `tools/call` came on must end closed (the
   * service hangs up on what it refuses rather than leaving it open, or reading on), and the
   * server must print no listener-leak warning meanwhile.
   */
  async function exchangeCase(options: {
    label: string;
    server: string;
    answer: McpBehaviour;
    error: string;
    message: RegExp;
    timeoutMs?: number;
    atOnce?: number;
    /** What else the upstream must have seen, checked before it closes. */
    saw?: (server: Awaited<ReturnType<typeof startHostileMcp>>) => Promise<void>;
  }) {
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list") return { json: rpc(message, { tools: [tool("call")] }) };
      if (message.method !== "tools/call") return undefined;
      return options.answer(message);
    });
    const warned = target.warnings.length;
    try {
      await putMcpServer(
        target,
        "mcp",
        options.server,
        server.url,
        { name: options.server, type: "mcp_server" },
        options.timeoutMs,
      );
      const name = `${options.server}__call`;
      const atOnce = options.atOnce ?? AT_ONCE;
      const direct = await target.attack(
        `${options.label}, ${atOnce} direct invokes at once`,
        () =>
          Promise.all(
            Array.from({ length: atOnce }, async () => {
              const { status, body } = await invoke(name);
              return { status, error: body.error, message: String(body.message) };
            }),
          ),
        failures,
      );
      const spawned = await target.request(`${T}/processes`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ allowedToolsAdd: [options.server], models: ["openai/gpt-4.1"] }),
      });
      expect(spawned.status, await spawned.clone().text()).toBe(201);
      const { processId } = (await spawned.json()) as { processId: string };
      const served = await target.attack(
        `${options.label}, ${atOnce} tools/call at once on a process's MCP endpoint`,
        () => Promise.all(Array.from({ length: atOnce }, (_, index) => mcpCall(processId, name, index + 1))),
        failures,
      );
      for (const result of [...direct, ...served]) {
        expect(result).toMatchObject({ status: 200, error: options.error });
        expect(result.message).toMatch(options.message);
      }
      // Each call reached the upstream once (a refused answer is not asked for again) …
      expect(server.calls).toHaveLength(2 * atOnce);
      // … and the service hung up on every one: no answer ends by itself (one just over the cap
      // is still arriving at it), and the upstream closes no connection of its own.
      await expect.poll(() => server.calls.filter((call) => !call.closed).length).toBe(0);
      // Read no further than the cap: what was written beyond it is what the sockets' buffers held.
      for (const call of server.calls) expect(call.written).toBeLessThan(4 * RESPONSE_CAP);
      await options.saw?.(server);
      // No call waited on a signal shared with the others: Node warns of a listener leak past 10.
      expect(target.warnings.slice(warned).filter((line) => line.includes("MaxListeners"))).toEqual([]);
    } finally {
      await server.close();
    }
  }

  it("a gzip bomb that never ends (1 MiB of JSON per 1 KB member) is refused at the cap counted after decompression", async () => {
    const opening = gzipSync('{"jsonrpc":"2.0","id":"bomb","result":{"content":[{"type":"text","text":"');
    const member = gzipSync("a".repeat(1024 * 1024), { level: 9 });
    await exchangeCase({
      label: `MCP tools/call answered by a gzip bomb that never ends (${member.length} bytes → 1 MiB, for ever)`,
      server: "bomb",
      answer: () => ({
        raw: {
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
          // Gzip members one after another decode as one body.
          body: async function* () {
            yield opening;
            for (;;) yield member;
          },
        },
      }),
      error: "ResponseTooLarge",
      message: new RegExp(`larger than ${RESPONSE_CAP} bytes \\(counted after decompression\\)`),
    });
  });

  it("endless garbage labelled content-encoding: gzip is McpUnavailable, not valid gzip", async () => {
    const garbage = randomBytes(64 * 1024);
    garbage[0] = 0; // never gzip's magic number
    await exchangeCase({
      label: "MCP tools/call answered by garbage as gzip, for ever",
      server: "garbage",
      answer: () => ({
        raw: {
          headers: { "content-type": "application/json", "content-encoding": "gzip" },
          body: async function* () {
            for (;;) yield garbage;
          },
        },
      }),
      error: "McpUnavailable",
      message: /not valid 'gzip' data/,
    });
  });

  it("one event-stream event over the cap is refused as too large", async () => {
    const event = sseEvent(rpc({ id: "big" }, { content: [{ type: "text", text: "e".repeat(OVER_CAP) }] }));
    await exchangeCase({
      label: `MCP tools/call answered by one event of ${event.length} bytes`,
      server: "bigevent",
      answer: () => ({ sse: event }),
      error: "ResponseTooLarge",
      message: new RegExp(`${RESPONSE_CAP}`),
    });
  });

  it("an event line that never ends is cut at the cap", async () => {
    const chunk = "x".repeat(64 * 1024);
    await exchangeCase({
      label: "MCP tools/call answered by an event line that never ends",
      server: "endless",
      answer: () => ({
        sse: async function* () {
          yield 'event: message\ndata: {"jsonrpc":"2.0","id":"endless","result":{"text":"';
          for (;;) yield chunk;
        },
      }),
      error: "ResponseTooLarge",
      message: new RegExp(`${RESPONSE_CAP}`),
    });
  });

  it("an answer dripping one byte every 50 ms ends at the document's deadline, cancelled on the server", async () => {
    await exchangeCase({
      label: "MCP tools/call answered one byte every 50 ms, for ever (timeoutMs 1000)",
      server: "drip",
      timeoutMs: 1_000,
      // More calls waiting at once than Node's 10 listeners per signal (see `exchangeCase`).
      atOnce: 12,
      answer: () => ({
        sse: async function* () {
          yield "event: message\ndata: {";
          for (;;) {
            // The attack's own pace, not a wait of the test's.
            await sleep(50);
            yield "x";
          }
        },
      }),
      error: "TimeoutError",
      message: /within 1000 ms/,
      // MCP asks a client to cancel a request it gave up on: each call was.
      saw: async (server) => {
        const asked = server.messages.filter((m) => m.method === "tools/call").map((m) => String(m.id));
        const cancelled = () =>
          server.messages
            .filter((m) => m.method === "notifications/cancelled")
            .map((m) => String(m.params?.requestId));
        await expect.poll(() => cancelled().sort()).toEqual(asked.sort());
      },
    });
  });
});

function rpc(message: Pick<RpcMessage, "id">, result: unknown) {
  return { jsonrpc: "2.0", id: message.id, result };
}
