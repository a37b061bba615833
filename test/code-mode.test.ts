import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

// Code mode (issue 29): `execute_javascript` runs a model's program in the scripted sandbox,
// `vance.tools.call` reaching exactly the process's allow set; its description declares, as
// TypeScript, what the program can call.

type Client = Awaited<ReturnType<typeof projectClient>>;
type App = Awaited<ReturnType<typeof testApp>>["app"];

let upstream: Server;
let upstreamUrl: string;
/** Paths the fake records API was asked for, in order. */
const seen: string[] = [];

const CUSTOMERS: Record<string, number> = { "ada@example.com": 7 };
const ORDERS: Record<number, { id: string; amount: number }[]> = {
  7: [
    { id: "o1", amount: 12 },
    { id: "o2", amount: 30 },
  ],
};

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    seen.push(`${url.pathname}${url.search}`);
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (url.pathname === "/customers") {
      const id = CUSTOMERS[url.searchParams.get("email") ?? ""];
      return id === undefined ? send(404, { message: "no such customer" }) : send(200, { id });
    }
    const orders = /^\/customers\/(\d+)\/orders$/.exec(url.pathname);
    if (orders) return send(200, ORDERS[Number(orders[1])] ?? []);
    if (url.pathname === "/slow") return void setTimeout(() => send(200, { late: true }), 3_000);
    if (url.pathname === "/secret") return send(200, { secret: "never reached" });
    send(404, { message: "no route" });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

function writeCatalog(dataDir: string, path: string, yaml: string) {
  const full = join(dataDir, "catalog", path);
  mkdirSync(join(full, ".."), { recursive: true });
  writeFileSync(full, yaml);
}

const rest = (description: string, path: string, inputs: string, extra = "") =>
  `type: rest\ndescription: ${description}\n${extra}parameters:\n  url: ${upstreamUrl}${path}\n  inputs: ${inputs}\n`;

/** A project with the three tools of the chain, a tool no process below may call, and a slow one. */
async function project(
  env: Record<string, string> = {},
): Promise<{ app: App; client: Client; dataDir: string }> {
  const { app, dataDir } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1", ...env } });
  const client = await projectClient(app);
  await client.putTool(
    "find_customer",
    rest(
      "Finds a customer by email. Answers { id }.",
      "/customers?email={email}",
      "[{ name: email, type: string, description: The customer's email address }]",
    ),
  );
  await client.putTool(
    "list_orders",
    rest(
      "Lists a customer's orders as [{ id, amount }].",
      "/customers/{customerId}/orders",
      "[{ name: customerId, type: integer }]",
    ),
  );
  await client.putTool(
    "sum_amounts",
    `type: scripted
description: Adds up amounts.
parameters:
  inputs:
    - { name: amounts, type: array }
  source: amounts.reduce((sum, amount) => sum + amount, 0)
`,
  );
  await client.putTool("secret_tool", rest("Reads a secret.", "/secret", "[]"));
  await client.putTool("slow_tool", rest("Answers after three seconds.", "/slow", "[]"));
  return { app, client, dataDir };
}

const CHAIN = ["find_customer", "list_orders", "sum_amounts", "slow_tool"];

/** Spawns a code-mode process: `execute_javascript` named in `allowedToolsAdd`, `list_orders` deferred. */
async function spawnCodeMode(client: Client, extra: Record<string, unknown> = {}) {
  return client.spawn({
    engine: "shop-agent",
    engineDefault: CHAIN,
    allowedToolsAdd: ["execute_javascript", "find_customer", "sum_amounts"],
    allowedToolsDefer: ["list_orders"],
    ...extra,
  });
}

async function run(client: Client, processId: string, code: string, timeoutMs?: number) {
  const answer = await client.invoke(processId, "execute_javascript", {
    code,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  expect(answer.status).toBe(200);
  return answer.body;
}

function codeModeDescription(manifest: {
  tools: readonly { function: { name: string; description?: string } }[];
}) {
  return manifest.tools.find((tool) => tool.function.name === "execute_javascript")?.function.description;
}

describe("execute_javascript: one program, many tool calls", () => {
  it("chains three tools, each result feeding the next, and answers the last value with the console lines", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const from = seen.length;
    const body = await run(
      client,
      processId,
      `const customer = vance.tools.call("find_customer", { email: "ada@example.com" });
console.log("customer", customer.id);
const orders = vance.tools.call("list_orders", { customerId: customer.id });
console.log("orders", orders);
vance.tools.call("sum_amounts", { amounts: orders.map((order) => order.amount) })`,
    );
    expect(body).toMatchObject({
      value: { result: 42, logs: ["customer 7", 'orders [{"id":"o1","amount":12},{"id":"o2","amount":30}]'] },
    });
    // Each upstream request once, the second built from the first's answer.
    expect(seen.slice(from)).toEqual(["/customers?email=ada%40example.com", "/customers/7/orders"]);

    // The calls count as usage of the tools they reached, for the process's role, and activate
    // nothing: list_orders stays deferred although the program called it.
    const usage = await client.call("GET", "/insights/tool-usage");
    const counted = (usage.body.roles as { role: string; tools: { name: string; calls: number }[] }[])
      .find((role) => role.role === "shop-agent")!
      .tools.map((tool) => [tool.name, tool.calls]);
    expect(counted).toEqual([
      ["execute_javascript", 1],
      ["find_customer", 1],
      ["list_orders", 1],
      ["sum_amounts", 1],
    ]);
    expect((await client.process(processId)).activatedTools).toEqual({});
    expect((await client.manifest(processId)).deferred).toContain("list_orders");
    // Called directly, the deferred tool is activated (so the check above can fail).
    await client.invoke(processId, "list_orders", { customerId: 7 });
    expect(Object.keys((await client.process(processId)).activatedTools)).toEqual(["list_orders"]);
  });

  it("refuses a tool outside the allow set exactly as a direct call: same refusal, same message, nothing sent", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const direct = await client.invoke(processId, "secret_tool");
    expect(direct).toMatchObject({ status: 403, body: { code: "tool_not_allowed" } });
    const from = seen.length;

    const caught = await run(
      client,
      processId,
      `try { vance.tools.call("secret_tool", {}) } catch (e) { ({ name: e.name, code: e.code, tool: e.tool, message: e.message }) }`,
    );
    expect(caught).toEqual({
      value: {
        result: {
          name: "ToolNotAllowed",
          code: "ToolNotAllowed",
          tool: "secret_tool",
          message: direct.body.detail,
        },
        logs: [],
      },
      durationMs: expect.any(Number),
    });
    const uncaught = await run(client, processId, `vance.tools.call("secret_tool", {}); "not reached"`);
    expect(uncaught).toMatchObject({ error: "ToolNotAllowed", message: direct.body.detail });
    expect(seen.slice(from)).toEqual([]);
    // tool_description and invoke_tool from a program activate nothing either.
    await run(
      client,
      processId,
      `vance.tools.call("tool_description", { names: ["list_orders"] });
vance.tools.call("invoke_tool", { name: "list_orders", params: { customerId: 7 } })`,
    );
    expect((await client.process(processId)).activatedTools).toEqual({});
  });

  it("a tool's failure is an exception carrying its error code; bad params fail as a direct call's would", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const caught = await run(
      client,
      processId,
      `const out = [];
for (const email of ["nobody@example.com", "ada@example.com"]) {
  try { out.push(vance.tools.call("find_customer", { email }).id) } catch (e) { out.push(e.code) }
}
try { vance.tools.call("list_orders", { customerId: "seven" }) } catch (e) { out.push(e.code) }
out`,
    );
    expect(caught).toMatchObject({ value: { result: ["HttpError", 7, "InvalidParams"] } });
    const direct = await client.invoke(processId, "list_orders", { customerId: "seven" });
    expect(direct).toMatchObject({ status: 422, body: { code: "invalid_params" } });
    // The field errors the direct call lists reach the program too, in the error's message.
    const fields = (direct.body.errors as { path: string; message: string }[]).map(
      (field) => `${field.path}: ${field.message}`,
    );
    expect(fields.length).toBeGreaterThan(0);
    const invalid = await run(client, processId, `vance.tools.call("list_orders", { customerId: "seven" })`);
    expect(invalid).toMatchObject({ error: "InvalidParams" });
    expect(invalid.message).toBe(`${direct.body.detail}: ${fields.join("; ")}`);

    const uncaught = await run(
      client,
      processId,
      `vance.tools.call("find_customer", { email: "x@example.com" })`,
    );
    expect(uncaught).toMatchObject({ error: "HttpError", message: expect.stringContaining("HTTP 404") });
  });

  it("a timeout says how far the program got: calls answered, the one still running, the last console lines", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const looping = await run(
      client,
      processId,
      `for (let i = 0; i < 2; i++) { vance.tools.call("find_customer", { email: "ada@example.com" }); console.log("fetched", i) }
for (;;) {}`,
      400,
    );
    expect(looping).toMatchObject({ error: "TimeoutError" });
    expect(looping.message).toBe(
      'script exceeded its deadline of 400 ms; 2 tool calls had answered; its last console lines (of 2): "fetched 0", "fetched 1"',
    );

    const waiting = await run(
      client,
      processId,
      `console.log("before"); vance.tools.call("slow_tool", {})`,
      400,
    );
    expect(waiting).toMatchObject({ error: "TimeoutError" });
    expect(waiting.message).toContain("0 tool calls had answered; a call of 'slow_tool' was still running");
    expect(waiting.message).toContain('its last console lines (of 1): "before"');
  });

  it("takes one of its tenant's script slots, as a scripted tool does; the scripted tools it calls need none", async () => {
    const { client } = await project({
      VANCE_SCRIPT_MAX_RUNS_PER_TENANT: "1",
      VANCE_SCRIPT_MAX_QUEUED_PER_TENANT: "0",
    });
    const { processId } = await spawnCodeMode(client);
    // The scripted tool runs nested, in the program's slot.
    const nested = await run(client, processId, `vance.tools.call("sum_amounts", { amounts: [1, 2] })`);
    expect(nested).toMatchObject({ value: { result: 3 } });

    const from = seen.length;
    const holding = run(client, processId, `vance.tools.call("slow_tool", {})`, 1_500);
    // Once the upstream has the first program's call, that program holds the tenant's one slot.
    while (!seen.slice(from).includes("/slow")) await new Promise((resolve) => setTimeout(resolve, 10));
    const refused = await client.invoke(processId, "execute_javascript", { code: "1" });
    expect(refused).toMatchObject({ status: 429, body: { code: "busy" } });
    expect(await holding).toMatchObject({ error: "TimeoutError" });
  });

  it("bounds the result and the console lines, and says await is not needed", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const large = await run(client, processId, `"x".repeat(40000)`);
    expect(large).toMatchObject({
      error: "ResultTooLarge",
      message: expect.stringContaining("40002 characters of JSON, more than the 32768 allowed"),
    });
    const chatty = await run(
      client,
      processId,
      `for (let i = 0; i < 120; i++) console.log("line", i); "done"`,
    );
    const value = chatty.value as { result: string; logs: string[]; droppedLogLines: number };
    expect(value.result).toBe("done");
    expect(value.logs).toHaveLength(50);
    expect(value.logs[0]).toBe("line 70");
    expect(value.logs.at(-1)).toBe("line 119");
    expect(value.droppedLogLines).toBe(70);
    const awaited = await run(client, processId, `const c = await vance.tools.call("find_customer", {}); c`);
    expect(awaited).toMatchObject({
      error: "SyntaxError",
      message: expect.stringContaining("vance.tools.call is synchronous"),
    });
  });
});

describe("execute_javascript's declarations", () => {
  it("declare the callable tools as TypeScript from their input schemas; deferred ones by name only", async () => {
    const { client } = await project();
    const { processId } = await spawnCodeMode(client);
    const description = codeModeDescription(await client.manifest(processId))!;
    expect(description).toContain(`    /** Finds a customer by email. */
    call(name: "find_customer", params: {
      /** The customer's email address */
      email: string;
    }): unknown;`);
    expect(description).toContain(
      'call(name: "sum_amounts", params: {\n      amounts: unknown[];\n    }): unknown;',
    );
    // Deferred: named, its parameters left to tool_description; the slow tool (not in
    // allowedToolsAdd, not primary) likewise. Tools outside the allow set are not there at all.
    expect(description).toContain('call(name: "list_orders" | "slow_tool", params: object): unknown;');
    expect(description).not.toContain("secret_tool");
    expect(description).not.toMatch(/call\(name: "(tool_list|tool_description|execute_javascript)"/);
    // Outside a process the tool reads its plain description.
    const plain = await client.call("GET", "/tools/execute_javascript");
    expect(plain.body).toMatchObject({ layer: "builtin", config: { primary: false } });
    expect(String((plain.body.config as { description: string }).description)).not.toContain(
      "declare const vance",
    );
  });

  it("read the same bytes in every turn: activations and demotions leave them as they were", async () => {
    const { client, dataDir } = await project();
    // Room for the floor and the three promoted tools (one slot is the engine's reserve).
    writeCatalog(dataDir, "model/codemode/_provider.yaml", "maxTools: 6\n");
    const { processId } = await spawnCodeMode(client, {
      models: ["codemode/limited"],
      allowedToolsKeep: ["execute_javascript"],
    });
    const first = await client.manifest(processId);
    expect(first.demoted).toEqual([]);
    const described = codeModeDescription(first);
    expect(described).toContain("declare const vance");

    // Activating the two deferred tools moves them into the tools array, and the budget demotes
    // two others to make room: the declarations follow neither.
    await client.invoke(processId, "tool_description", { names: ["list_orders", "slow_tool"] });
    const next = await client.manifest(processId);
    expect(next.primary).toEqual(expect.arrayContaining(["list_orders", "slow_tool", "execute_javascript"]));
    expect(next.demoted).toEqual(expect.arrayContaining(["find_customer", "sum_amounts"]));
    expect(codeModeDescription(next)).toBe(described);
    expect(codeModeDescription(await client.manifest(processId, { format: "openai" }))).toBe(described);
  });

  it("a document overrides or disables the built-in, as any built-in", async () => {
    const { client } = await project();
    await client.putTool(
      "execute_javascript",
      "type: scripted\ndescription: The project's own runner.\nparameters:\n  inputs: []\n  source: '\"mine\"'\n",
    );
    const { processId } = await spawnCodeMode(client);
    expect(codeModeDescription(await client.manifest(processId))).toBe("The project's own runner.");
    expect((await client.invoke(processId, "execute_javascript")).body).toMatchObject({ value: "mine" });

    await client.putTool(
      "execute_javascript",
      "type: scripted\ndescription: off\nenabled: false\nparameters:\n  inputs: []\n  source: 'null'\n",
    );
    const disabled = await spawnCodeMode(client);
    expect(disabled.warnings).toContainEqual(
      expect.objectContaining({ code: "unknown_tool", entry: "execute_javascript" }),
    );
    expect((await client.manifest(disabled.processId)).primary).not.toContain("execute_javascript");
  });

  it("is not in the capability floor: a process that does not name it has no such tool", async () => {
    const { client } = await project();
    const { processId, allowedTools } = await client.spawn({ engineDefault: CHAIN });
    expect(allowedTools).not.toContain("execute_javascript");
    const manifest = await client.manifest(processId);
    expect([...manifest.primary, ...manifest.deferred]).not.toContain("execute_javascript");
    expect(await client.invoke(processId, "execute_javascript", { code: "1" })).toMatchObject({
      status: 403,
      body: { code: "tool_not_allowed" },
    });
  });
});
