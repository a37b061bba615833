import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  putMcpServer,
  type RpcMessage,
  sseEvent,
  startHostileMcp,
  startTarget,
  type Target,
} from "./support";

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
});

function rpc(message: RpcMessage, result: unknown) {
  return { jsonrpc: "2.0", id: message.id, result };
}
