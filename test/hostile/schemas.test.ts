import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADD_NUMBERS } from "../support/spec-examples";
import {
  putMcpServer,
  putTool,
  type RpcMessage,
  schemaAtTheCaps,
  startHostileMcp,
  startTarget,
  type Target,
} from "./support";

/**
 * Issue 35 §2 against the real server: large JSON Schemas a call needs compiled — client tools',
 * tool documents', an MCP server's — compile on the worker thread; the serving thread only loads
 * their code. `/v1/metrics`' `schemaCompiles` counts where each compile ran: the serving thread
 * compiles none of 200 nodes or more while a tenant floods it with fresh schemas at the caps,
 * another tenant's calls all answer 200 with their sums, and `target.attack` holds /v1/health
 * under the suite's rule.
 */
describe("attack suite: fresh JSON Schemas at the caps, compiled at a call", () => {
  let target: Target;
  let victim: string;
  const VICTIM = "/v1/tenants/schema-victim/projects/p";

  const fresh = (prefix: string) => `${prefix}${Math.random().toString(36).slice(2, 8)}`;

  interface Compiles {
    servingThread: number;
    servingThreadLarge: number;
    worker: number;
  }
  const compiles = async (): Promise<Compiles> =>
    ((await (await target.request("/v1/metrics")).json()) as { schemaCompiles: Compiles }).schemaCompiles;

  beforeAll(async () => {
    target = await startTarget();
    victim = await target.token_("schema-victim", ["read"]);
    await putTool(target, `${VICTIM}/tools/add_numbers`, ADD_NUMBERS);
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  /**
   * Runs `attack` while the victim tenant calls its scripted `add_numbers` one call after another
   * (at least 5 calls, and until the attack is over): each answer must be a 200 with its sum.
   */
  async function withVictim<T>(attack: () => Promise<T>): Promise<{ result: T; victimCalls: number }> {
    let over = false;
    const attacking = attack().finally(() => {
      over = true;
    });
    const answers: { status: number; value: unknown; code?: unknown }[] = [];
    for (let i = 0; !over || i < 5; i++) {
      const response = await target.request(`${VICTIM}/tools/add_numbers/invoke`, {
        method: "POST",
        token: victim,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ params: { a: i, b: 1 } }),
      });
      const body = (await response.json()) as { value?: unknown; code?: unknown };
      answers.push(
        response.status === 200
          ? { status: 200, value: body.value }
          : { status: response.status, value: body.value, code: body.code },
      );
    }
    const result = await attacking;
    expect(answers, "the victim's add_numbers while the attack ran").toEqual(
      answers.map((_, i) => ({ status: 200, value: i + 1 })),
    );
    return { result, victimCalls: answers.length };
  }

  it("a read token calling 6 client tools with fresh schemas at the caps, 2 in flight: each compiles on the worker", async () => {
    const reader = await target.token_("schema-flood", ["read"]);
    const T = "/v1/tenants/schema-flood/projects/p";
    const post = (path: string, body: unknown) =>
      target.request(`${T}${path}`, {
        method: "POST",
        token: reader,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // Three tools per process: 2,979 nodes, within a spawn's budget of 3,000.
    const processes: { id: string; tools: string[] }[] = [];
    for (let p = 0; p < 2; p++) {
      const tools = [0, 1, 2].map((t) => ({
        name: `wide_${p}_${t}`,
        description: "wide",
        inputSchema: schemaAtTheCaps(fresh(`c${p}${t}x`)),
      }));
      const spawned = await post("/processes", { models: [], clientTools: tools });
      expect(spawned.status, await spawned.clone().text()).toBe(201);
      processes.push({
        id: ((await spawned.json()) as { processId: string }).processId,
        tools: tools.map((tool) => tool.name),
      });
    }
    const before = await compiles();
    const { result: answers, victimCalls } = await target.attack(
      "6 calls of client tools with fresh schemas at the caps, 2 in flight (read token)",
      () =>
        withVictim(async () => {
          const seen: { status: number; route: unknown }[] = [];
          for (let t = 0; t < 3; t++) {
            const pair = await Promise.all(
              processes.map(async ({ id, tools }) => {
                const answer = await post(`/processes/${id}/invoke`, { name: tools[t], params: {} });
                return { status: answer.status, route: ((await answer.json()) as { route?: unknown }).route };
              }),
            );
            seen.push(...pair);
          }
          return seen;
        }),
      (run) =>
        `${run.result.map((answer) => answer.status).join(" ")}; victim add_numbers ${run.victimCalls} × 200`,
    );
    expect(answers).toEqual(Array.from({ length: 6 }, () => ({ status: 200, route: "client" })));
    expect(victimCalls).toBeGreaterThanOrEqual(5);
    const after = await compiles();
    expect(after.servingThreadLarge - before.servingThreadLarge, "large compiles on the serving thread").toBe(
      0,
    );
    expect(after.worker - before.worker, "validators compiled on the worker").toBe(6);
  });

  it("a write token storing 4 mcp tool documents whose inputSchema is at the caps, then calling them: compiled on the worker", async () => {
    const writer = await target.token_("schema-docs", ["read", "write"]);
    const T = "/v1/tenants/schema-docs/projects/p";
    const names = [0, 1, 2, 3].map((i) => `wide_doc_${i}`);
    const putDocument = async (name: string) => {
      const document = [
        "type: mcp",
        "description: a tool whose input schema is at the caps",
        "parameters:",
        "  server: nowhere",
        "  toolName: wide",
        `  inputSchema: ${JSON.stringify(schemaAtTheCaps(fresh("d")))}`,
      ].join("\n");
      const answer = await target.request(`${T}/tools/${name}`, {
        method: "PUT",
        token: writer,
        headers: { "content-type": "application/yaml" },
        body: document,
      });
      await answer.body?.cancel();
      return answer.status;
    };
    const before = await compiles();
    const { result } = await target.attack(
      "4 mcp tool documents with fresh inputSchemas at the caps, written one at a time, then called at once (write token)",
      () =>
        withVictim(async () => {
          // One write at a time, as an engine's push does: each parses its 20 KB schema in YAML.
          const written: number[] = [];
          for (const name of names) written.push(await putDocument(name));
          const called = await Promise.all(
            names.map(async (name) => {
              const answer = await target.request(`${T}/tools/${name}/invoke`, {
                method: "POST",
                token: writer,
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ params: {} }),
              });
              await answer.body?.cancel();
              return answer.status;
            }),
          );
          return { written, called };
        }),
      (run) => `PUT ${run.result.written.join(" ")}; invoke ${run.result.called.join(" ")}`,
    );
    expect(result.written).toEqual([201, 201, 201, 201]);
    // The server named nowhere is not configured: each call answers, after its params were checked.
    expect(result.called.every((status) => status < 500)).toBe(true);
    const after = await compiles();
    expect(after.servingThreadLarge - before.servingThreadLarge, "large compiles on the serving thread").toBe(
      0,
    );
    expect(after.worker - before.worker, "validators compiled on the worker").toBe(4);
  });

  it("an MCP server listing 4 tools whose schemas are at the caps: each sub-tool's first call compiles on the worker", async () => {
    const schemas = [0, 1, 2, 3].map(() => schemaAtTheCaps(fresh("m")));
    const rpc = (message: RpcMessage, result: unknown) => ({ jsonrpc: "2.0", id: message.id, result });
    const server = await startHostileMcp((message) => {
      if (message.method === "tools/list") {
        const tools = schemas.map((inputSchema, i) => ({
          name: `wide${i}`,
          description: "wide",
          inputSchema,
        }));
        return { json: rpc(message, { tools }) };
      }
      if (message.method !== "tools/call") return undefined;
      return { json: rpc(message, { content: [{ type: "text", text: "ok" }] }) };
    });
    try {
      await putMcpServer(target, "schemas", "widemcp", server.url, { name: "widepack", type: "mcp_server" });
      const T = "/v1/tenants/hostile/projects/schemas";
      // The pack's tools once its server was listed (a call before gets `source_unavailable`).
      await vi.waitFor(
        async () => {
          const listing = (await (await target.request(`${T}/tools`)).json()) as {
            packs: { status: string }[];
          };
          expect(listing.packs.map((pack) => pack.status)).toEqual(["current"]);
        },
        { timeout: 60_000, interval: 100 },
      );
      const before = await compiles();
      const { result: statuses } = await target.attack(
        "an MCP server's 4 tools with fresh inputSchemas at the caps, each called once",
        () =>
          withVictim(async () =>
            Promise.all(
              [0, 1, 2, 3].map(async (i) => {
                const answer = await target.request(`${T}/tools/widepack__wide${i}/invoke`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({ params: {} }),
                });
                const body = (await answer.json()) as { value?: unknown };
                return `${answer.status} ${JSON.stringify(body.value ?? null).slice(0, 40)}`;
              }),
            ),
          ),
        (run) => run.result.join(", "),
      );
      expect(statuses).toEqual(['200 "ok"', '200 "ok"', '200 "ok"', '200 "ok"']);
      const after = await compiles();
      expect(
        after.servingThreadLarge - before.servingThreadLarge,
        "large compiles on the serving thread",
      ).toBe(0);
      expect(after.worker - before.worker, "validators compiled on the worker").toBe(4);
    } finally {
      await server.close();
    }
  });
});
