/**
 * Bench: what an `mcp` invoke adds over a direct SDK call to the same local MCP server (issue
 * 12), and what a 40-tool pack costs a warm `listAll`.
 *
 * The SDK-built test server (`test/support/mcp-test-server.ts`) runs in this process on
 * 127.0.0.1; every case calls its `echo` tool on a warm connection. Cases, interleaved in rounds
 * so that machine load hits them alike:
 * - SDK direct: `Client.callTool` over `StreamableHTTPClientTransport` with the platform fetch —
 *   the baseline;
 * - SDK direct, guarded fetch: the same with the service's guarded fetch (the network policy at
 *   connect time), to show the transport's share;
 * - adapter: `SdkMcpClient.callTool` (the port: connection per key, deadline, error mapping);
 * - dispatcher, mcp tool: `ToolDispatcher.invoke` of a `type: mcp` tool (lookup, input schema
 *   check, server document, secrets, result mapping and scrubbing);
 * - dispatcher, pack sub-tool: the same for `{pack}__echo` of a `type: mcp_server` pack;
 * - HTTP direct: one plain POST of `tools/call` on a session of the server, over a keep-alive
 *   `node:http` agent (`fetch` adds 1.5–2.5 ms per request here and would hide the costs) — the
 *   floor the HTTP cases are held to;
 * - HTTP invoke: `POST …/tools/local__echo/invoke` on this service (served on 127.0.0.1 too);
 * - HTTP served MCP: `tools/call` of `local__echo` on a spawned process's `…/processes/{id}/mcp`.
 * And warm `ServerToolService.listAll` of a project with a 40-tool pack against one without.
 * Goals (printed, not asserted): the dispatcher adds ≤ 1 ms median over the direct SDK call; a
 * call through a process's pack is within 1.3× the direct HTTP call.
 *
 * Run: `npm run bench -- mcp` (or `npx tsx bench/mcp.ts`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGuardedFetch } from "@vance/adapters";
import { SdkMcpClient } from "@vance/adapters/mcp";
import { createNetworkPolicy, type McpServerTarget, silentLogger } from "@vance/core";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { startMcpTestServer } from "../test/support/mcp-test-server";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import { type BenchCase, interleavedRounds } from "./support/rounds";

const WARMUP_PER_CASE = 200;
const ROUNDS = Number(process.env.MCP_BENCH_ROUNDS ?? 6);
const PER_ROUND = 300;
const LIST_PER_ROUND = 300;
const TENANT = "bench";
const SECRET = "bench-secret-0123456789";
const HTTP_PER_ROUND = 200;

/** Runs the bench and prints a table: median, p95, and the difference to the baseline. */
export async function main(): Promise<void> {
  const server = await startMcpTestServer();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-mcp-"));
  const policy = createNetworkPolicy(["127.0.0.1"]);
  const services = await buildServices(
    loadConfig({ VANCE_DATA_DIR: dataDir, VANCE_NETWORK_ALLOWLIST: "127.0.0.1" }),
    SECRET,
    {
      logger: silentLogger,
      env: {},
      scripts: {
        run: async () => {
          throw new Error("no scripts in the mcp bench");
        },
      },
    },
  );
  const direct = await sdkClient(server.url);
  const guarded = await sdkClient(server.url, createGuardedFetch(policy));
  const adapter = new SdkMcpClient({ fetch: createGuardedFetch(policy) });
  const target: McpServerTarget = { key: "bench", url: server.url, headers: {}, timeoutMs: 10_000 };
  const api = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => api.once("listening", resolve));
  const apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const put = (project: string, path: string, body: string) =>
      services.documents.put(TENANT, project, path, body, {});
    await put("p", "mcp-servers/local.yaml", `url: ${server.url}\ntimeoutMs: 10000\n`);
    await put(
      "p",
      "server-tools/local_echo.yaml",
      "type: mcp\ndescription: Echo\nparameters:\n  server: local\n  toolName: echo\n",
    );
    await put(
      "p",
      "server-tools/local.yaml",
      "type: mcp_server\ndescription: Local pack\nparameters:\n  server: local\n",
    );
    await put(
      "p",
      "mcp-servers/paged.yaml",
      `url: ${server.origin}/paged?tools=40&page=100\ntimeoutMs: 10000\n`,
    );
    await put(
      "p",
      "server-tools/forty.yaml",
      "type: mcp_server\ndescription: 40 tools\nparameters:\n  server: paged\n",
    );
    for (let i = 0; i < 20; i++) {
      const doc = `type: doc_lookup\ndescription: Document ${i}\nparameters:\n  path: documents/d${i}.md\n`;
      await put("p", `server-tools/doc_${i}.yaml`, doc);
      await put("q", `server-tools/doc_${i}.yaml`, doc);
    }

    const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
    const auth = { authorization: `Bearer ${token}` };
    const mcpHeaders = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    };
    const rpcCall = (id: number, name: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: { message: "bench" } },
      });
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    const opened = await post(agent, server.url, mcpHeaders, initialize);
    const session = opened.headers["mcp-session-id"];
    if (typeof session !== "string") throw new Error(`initialize: ${opened.status} ${opened.text}`);
    const onSession = { ...mcpHeaders, "mcp-session-id": session };
    await post(
      agent,
      server.url,
      onSession,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    );
    const spawn = await post(
      agent,
      `${apiBase}/v1/tenants/${TENANT}/projects/p/processes`,
      { ...auth, "content-type": "application/json" },
      JSON.stringify({ models: [], engineDefault: ["local__echo"] }),
    );
    const processId = (JSON.parse(spawn.text) as { processId?: string }).processId;
    if (!processId) throw new Error(`spawn: ${spawn.status} ${spawn.text}`);
    const processMcp = `${apiBase}/v1/tenants/${TENANT}/projects/p/processes/${processId}/mcp`;
    let rpcId = 1;
    const expectEchoIn = (answer: { status: number; text: string }) => {
      const data = answer.text.startsWith("{")
        ? answer.text
        : (answer.text.match(/^data: (.*)$/m)?.[1] ?? "");
      const parsed = JSON.parse(data || "null") as { result?: { content?: { text?: string }[] } } | null;
      expectEcho(parsed?.result?.content?.[0]?.text);
    };

    const signal = new AbortController().signal;
    const expectEcho = (text: unknown) => {
      if (text !== "bench") throw new Error(`unexpected answer ${JSON.stringify(text)}`);
    };
    const sdkCall = async (client: Client) => {
      const result = await client.callTool({ name: "echo", arguments: { message: "bench" } });
      expectEcho((result.content as { text?: string }[])[0]?.text);
    };
    const dispatch = async (name: string) => {
      const result = await services.dispatcher.invoke({
        caller: { tenant: TENANT, project: "p" },
        name,
        params: { message: "bench" },
        allowedTools: null,
      });
      expectEcho("value" in result ? result.value : result);
    };
    const listed = async (project: string, count: number) => {
      const tools = await services.tools.listAll(TENANT, project);
      if (tools.length < count) throw new Error(`listAll of ${project}: ${tools.length} tools`);
    };
    const cases: BenchCase[] = [
      { name: "SDK direct (baseline)", perRound: PER_ROUND, once: () => sdkCall(direct) },
      { name: "SDK direct, guarded fetch", perRound: PER_ROUND, once: () => sdkCall(guarded) },
      {
        name: "adapter: SdkMcpClient.callTool",
        perRound: PER_ROUND,
        once: async () => {
          const result = await adapter.callTool(target, "echo", { message: "bench" }, signal);
          expectEcho(result.content[0]?.text);
        },
      },
      { name: "dispatcher: mcp tool", perRound: PER_ROUND, once: () => dispatch("local_echo") },
      { name: "dispatcher: pack sub-tool", perRound: PER_ROUND, once: () => dispatch("local__echo") },
      {
        name: "HTTP direct: tools/call POST",
        perRound: HTTP_PER_ROUND,
        once: async () => expectEchoIn(await post(agent, server.url, onSession, rpcCall(rpcId++, "echo"))),
      },
      {
        name: "HTTP: invoke pack sub-tool",
        perRound: HTTP_PER_ROUND,
        once: async () => {
          const answer = await post(
            agent,
            `${apiBase}/v1/tenants/${TENANT}/projects/p/tools/local__echo/invoke`,
            { ...auth, "content-type": "application/json" },
            '{"params":{"message":"bench"}}',
          );
          expectEcho((JSON.parse(answer.text) as { value?: unknown }).value);
        },
      },
      {
        name: "HTTP: process MCP tools/call of the pack",
        perRound: HTTP_PER_ROUND,
        once: async () =>
          expectEchoIn(
            await post(agent, processMcp, { ...auth, ...mcpHeaders }, rpcCall(rpcId++, "local__echo")),
          ),
      },
      { name: "listAll: 20 tools", perRound: LIST_PER_ROUND, once: () => listed("q", 20) },
      { name: "listAll: 20 tools + 40-tool pack", perRound: LIST_PER_ROUND, once: () => listed("p", 60) },
    ];

    const { samples, elapsedSeconds: elapsed } = await interleavedRounds(cases, {
      rounds: ROUNDS,
      warmup: WARMUP_PER_CASE,
    });
    const medianOf = (name: string) => median(samples.get(name)!);
    const baselineOf = (name: string) =>
      name.startsWith("listAll")
        ? "listAll: 20 tools"
        : name.startsWith("HTTP")
          ? "HTTP direct: tools/call POST"
          : "SDK direct (baseline)";
    const rows = cases.map((bench) => {
      const times = samples.get(bench.name)!;
      const own = median(times);
      const baseline = medianOf(baselineOf(bench.name));
      return [
        bench.name,
        own.toFixed(3),
        percentile(times, 0.95).toFixed(3),
        `${own - baseline >= 0 ? "+" : ""}${(own - baseline).toFixed(3)}`,
        `${(own / baseline).toFixed(2)}x`,
      ];
    });
    console.log(
      `mcp: echo on a local SDK server, warm connections, ${ROUNDS} interleaved rounds (${elapsed.toFixed(1)} s); ` +
        `${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(2)}\n`,
    );
    console.log(
      renderTable(
        [
          { title: "case" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "vs baseline ms", right: true },
          { title: "ratio", right: true },
        ],
        rows,
      ),
    );
    const over = (name: string, baseline: string) => medianOf(name) - medianOf(baseline);
    const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${ms.toFixed(3)} ms`;
    const added = over("dispatcher: mcp tool", "SDK direct (baseline)");
    const addedPack = over("dispatcher: pack sub-tool", "SDK direct (baseline)");
    // The same transport on both sides isolates what the service itself adds.
    const sameFetch = over("dispatcher: mcp tool", "SDK direct, guarded fetch");
    const sameFetchPack = over("dispatcher: pack sub-tool", "SDK direct, guarded fetch");
    const verdict = (met: boolean) => (met ? "met" : "NOT met");
    console.log(
      `\ngoal: an mcp invoke adds ≤ 1 ms median over the direct SDK call: ${verdict(Math.max(added, sameFetch) <= 1)}` +
        ` (over the SDK with its default fetch: mcp tool ${signed(added)}, pack sub-tool ${signed(addedPack)};` +
        ` over the SDK with the same guarded fetch: mcp tool ${signed(sameFetch)}, pack sub-tool ${signed(sameFetchPack)})`,
    );
    const throughPack =
      medianOf("HTTP: process MCP tools/call of the pack") / medianOf("HTTP direct: tools/call POST");
    console.log(
      `goal: a tools/call through a process's pack ≤ 1.3× the direct HTTP call: ${verdict(throughPack <= 1.3)} (${throughPack.toFixed(2)}×)`,
    );
  } finally {
    agent.destroy();
    await new Promise((resolve) => api.close(resolve));
    adapter.close();
    await Promise.all([direct.close(), guarded.close()]);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function sdkClient(url: string, fetch?: ReturnType<typeof createGuardedFetch>): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    fetch ? { fetch: (input, init) => fetch(String(input), init ?? {}) } : {},
  );
  await client.connect(transport);
  return client;
}

/** One POST over a keep-alive agent, its answer read whole. */
function post(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: "POST", agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      response.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

runIfMain(import.meta.url, main);
