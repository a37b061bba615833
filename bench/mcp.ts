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
 * - HTTP pass-through: the same POST through a bare `node:http` proxy (no parsing, keep-alive
 *   upstream): what any HTTP hop in front of the server costs, the floor of every gateway;
 * - HTTP invoke: `POST …/tools/local__echo/invoke` on this service (served on 127.0.0.1 too);
 * - HTTP served MCP: `tools/call` of `local__echo` on a spawned process's `…/processes/{id}/mcp`.
 * And warm `ServerToolService.listAll` of a project with a 40-tool pack against one without.
 *
 * Peers, in the same rounds, all calling `echo` of `@modelcontextprotocol/server-everything`
 * (Streamable HTTP, a child process) — the reference server, whose every answer costs it more
 * than the in-process test server's:
 * - everything direct: one raw POST of `tools/call` on its session (the floor of this group), and
 *   the MCP SDK client's `callTool` (the original methodology: "direct via the MCP SDK
 *   client");
 * - a bare `node:http` pass-through proxy in front of it (raw POST): what one HTTP hop costs;
 * - this service: `tools/call` of `everything__echo` on a spawned process's MCP endpoint (a pack
 *   over the same server);
 * - mcp-hub (in front of the same Streamable HTTP endpoint): its REST tool call (one JSON POST)
 *   and its MCP endpoint (HTTP+SSE, the only transport its hub endpoint speaks) through the SDK
 *   client; supergateway and mcp-proxy (each over its own stdio child of server-everything,
 *   what they are made for): raw POST on their Streamable HTTP endpoint. Installed on demand in
 *   bench/peers (its own package.json and lock); one that cannot be installed or started is
 *   skipped with its reason.
 * Goals (printed, not asserted): the dispatcher adds ≤ 1 ms median over the direct SDK call; a
 * call through a process's pack is within 1.3× the direct HTTP call.
 *
 * Run: `npm run bench -- mcp` (or `npx tsx bench/mcp.ts`). `MCP_BENCH_ROUNDS` (default 6);
 * `MCP_BENCH_CASES=<regex>` runs the matching cases and the baselines only, e.g. for
 * `node --cpu-prof --import tsx bench/mcp.ts` of one path.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { createGuardedFetch } from "@vance/adapters";
import { SdkMcpClient } from "@vance/adapters/mcp";
import { CascadeRead, createNetworkPolicy, type McpServerTarget, silentLogger } from "@vance/core";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { startEverythingServer } from "../test/support/mcp-everything";
import { startMcpTestServer } from "../test/support/mcp-test-server";
import {
  HUB_ECHO,
  openSession,
  type PeerEndpoint,
  post,
  rpcResult,
  type SkippedPeer,
  startPassThroughProxy,
  startPeers,
} from "./peers/peers";
import { median, percentile, renderTable, runIfMain } from "./support/report";
import { type BenchCase, interleavedRounds } from "./support/rounds";

const WARMUP_PER_CASE = 200;
const ROUNDS = Number(process.env.MCP_BENCH_ROUNDS ?? 6);
const PER_ROUND = 300;
const LIST_PER_ROUND = 300;
const TENANT = "bench";
const SECRET = "bench-secret-0123456789";
const HTTP_PER_ROUND = 200;
/** The floor of the server-everything group: one raw POST on its own session. */
const EVERYTHING_FLOOR = "everything: raw POST tools/call (floor)";
/**
 * The same at the protocol version this service's client negotiates (the SDK's latest): from
 * 2025-11-25 on, server-everything opens each answer's stream with a priming event (SEP-1699,
 * for resumption), which costs it about a millisecond per call — the upstream leg's own floor.
 */
const EVERYTHING_LATEST_FLOOR = `everything: raw POST tools/call, protocol ${LATEST_PROTOCOL_VERSION} (the service's upstream leg)`;
/** The cases others are compared with: kept when MCP_BENCH_CASES picks some. */
const BASELINES = [
  "SDK direct (baseline)",
  "HTTP direct: tools/call POST",
  EVERYTHING_FLOOR,
  EVERYTHING_LATEST_FLOOR,
  "listAll: 20 tools",
];

/** Runs the bench and prints a table: median, p95, and the difference to the baseline. */
export async function main(): Promise<void> {
  const loadBefore = loadavg();
  const server = await startMcpTestServer();
  const everything = await startEverythingServer();
  const everythingEntry = join(
    dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
    "dist",
    "index.js",
  );
  const proxy = await startPassThroughProxy(everything.url);
  const peers: { started: PeerEndpoint[]; skipped: SkippedPeer[] } = await startPeers({
    entry: everythingEntry,
    url: everything.url,
  });
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
  /** The server-everything group's agents and SDK clients, closed at the end. */
  const agents: Agent[] = [];
  const sdkClients: Client[] = [];
  const stops: (() => Promise<void>)[] = [];
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
    await put("p", "mcp-servers/everything.yaml", `url: ${everything.url}\ntimeoutMs: 10000\n`);
    await put(
      "p",
      "server-tools/everything.yaml",
      "type: mcp_server\ndescription: server-everything\nparameters:\n  server: everything\n",
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
      JSON.stringify({ models: [], engineDefault: ["local__echo", "everything__echo"] }),
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

    // The server-everything group: each endpoint on a session of its own, over its own agent.
    const echoed = (text: string) => {
      const result = rpcResult(text) as { content?: { text?: string }[] } | undefined;
      const said = result?.content?.[0]?.text;
      if (typeof said !== "string" || !said.includes("bench"))
        throw new Error(`unexpected answer ${text.slice(0, 200)}`);
    };
    const rawCase = async (
      name: string,
      url: string,
      extra: Record<string, string> = {},
      /** The tool to call when its listing does not show it (a process lists only its active tools). */
      known?: string,
      protocolVersion?: string,
    ): Promise<BenchCase> => {
      const own = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(own);
      const session = await openSession(own, url, extra, protocolVersion);
      const tool = known ?? session.echo;
      if (!tool) throw new Error(`${name}: no echo tool among ${session.tools.join(", ")}`);
      return {
        name,
        perRound: HTTP_PER_ROUND,
        once: async () => echoed((await post(own, url, session.headers, rpcCall(rpcId++, tool))).text),
      };
    };
    const everythingSdk = await sdkClient(everything.url);
    sdkClients.push(everythingSdk);
    const everythingCases: BenchCase[] = [
      await rawCase(EVERYTHING_FLOOR, everything.url),
      await rawCase(EVERYTHING_LATEST_FLOOR, everything.url, {}, undefined, LATEST_PROTOCOL_VERSION),
      {
        name: "everything: SDK client callTool",
        perRound: HTTP_PER_ROUND,
        once: async () => {
          const result = await everythingSdk.callTool({ name: "echo", arguments: { message: "bench" } });
          echoed(JSON.stringify({ result }));
        },
      },
      await rawCase("everything: node:http pass-through proxy", proxy.url),
      await rawCase("everything: this service, process MCP tools/call", processMcp, auth, "everything__echo"),
    ];
    for (const peer of peers.started) {
      if (peer.restUrl) {
        const own = new Agent({ keepAlive: true, maxSockets: 1 });
        agents.push(own);
        const restUrl = peer.restUrl;
        everythingCases.push({
          name: `everything: ${peer.name} ${peer.version}, REST tool call`,
          perRound: HTTP_PER_ROUND,
          once: async () => {
            const answer = await post(own, restUrl, { "content-type": "application/json" }, HUB_ECHO);
            echoed(answer.text);
          },
        });
        const client = new Client({ name: "bench", version: "1.0.0" });
        await client.connect(new SSEClientTransport(new URL(peer.url)));
        sdkClients.push(client);
        everythingCases.push({
          name: `everything: ${peer.name} ${peer.version}, MCP (SSE) via SDK client`,
          perRound: HTTP_PER_ROUND,
          once: async () => {
            const result = await client.callTool({
              name: "everything__echo",
              arguments: { message: "bench" },
            });
            echoed(JSON.stringify({ result }));
          },
        });
      } else {
        everythingCases.push(
          await rawCase(`everything: ${peer.name} ${peer.version} (stdio child)`, peer.url),
        );
      }
    }

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
        snapshot: await services.tools.snapshot(TENANT, "p", CascadeRead.begin()),
        allowedTools: null,
      });
      expectEcho("value" in result ? result.value : result);
    };
    const listed = async (project: string, count: number) => {
      const tools = await services.tools.listAll(TENANT, project, CascadeRead.begin());
      if (tools.length < count) throw new Error(`listAll of ${project}: ${tools.length} tools`);
    };
    const testServerHop = await startPassThroughProxy(server.url);
    stops.push(testServerHop.stop);
    const hopAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(hopAgent);
    const hopSession = await openSession(hopAgent, testServerHop.url);
    const allCases: BenchCase[] = [
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
        name: "HTTP: node:http pass-through proxy, tools/call POST",
        perRound: HTTP_PER_ROUND,
        once: async () =>
          expectEchoIn(await post(hopAgent, testServerHop.url, hopSession.headers, rpcCall(rpcId++, "echo"))),
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
      ...everythingCases,
      { name: "listAll: 20 tools", perRound: LIST_PER_ROUND, once: () => listed("q", 20) },
      { name: "listAll: 20 tools + 40-tool pack", perRound: LIST_PER_ROUND, once: () => listed("p", 60) },
    ];
    // MCP_BENCH_CASES=regex runs only the matching cases (and their baselines): for a profile of one.
    const only = process.env.MCP_BENCH_CASES ? new RegExp(process.env.MCP_BENCH_CASES) : null;
    const cases = only
      ? allCases.filter((bench) => only.test(bench.name) || BASELINES.includes(bench.name))
      : allCases;

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
          : name.startsWith("everything:")
            ? EVERYTHING_FLOOR
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
    const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
    console.log(
      `mcp: echo on a local SDK server and on server-everything, warm connections, ${ROUNDS} interleaved rounds (${elapsed.toFixed(1)} s); ` +
        `${cpus().length} CPUs, load average (1/5/15 min) ${load(loadBefore)} before, ${load(loadavg())} after\n`,
    );
    for (const peer of peers.skipped) console.log(`skipped ${peer.name}: ${peer.reason}`);
    for (const peer of peers.started) console.log(`peer ${peer.name} ${peer.version}: ${peer.upstream}`);
    if (peers.skipped.length + peers.started.length > 0) console.log("");
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
    const has = (...names: string[]) => names.every((name) => samples.has(name));
    const over = (name: string, baseline: string) => medianOf(name) - medianOf(baseline);
    const signed = (ms: number) => `${ms >= 0 ? "+" : ""}${ms.toFixed(3)} ms`;
    const verdict = (met: boolean) => (met ? "met" : "NOT met");
    if (has("dispatcher: mcp tool", "dispatcher: pack sub-tool", "SDK direct, guarded fetch")) {
      const added = over("dispatcher: mcp tool", "SDK direct (baseline)");
      const addedPack = over("dispatcher: pack sub-tool", "SDK direct (baseline)");
      // The same transport on both sides isolates what the service itself adds.
      const sameFetch = over("dispatcher: mcp tool", "SDK direct, guarded fetch");
      const sameFetchPack = over("dispatcher: pack sub-tool", "SDK direct, guarded fetch");
      console.log(
        `\ngoal: an mcp invoke adds ≤ 1 ms median over the direct SDK call: ${verdict(Math.max(added, sameFetch) <= 1)}` +
          ` (over the SDK with its default fetch: mcp tool ${signed(added)}, pack sub-tool ${signed(addedPack)};` +
          ` over the SDK with the same guarded fetch: mcp tool ${signed(sameFetch)}, pack sub-tool ${signed(sameFetchPack)})`,
      );
    }
    const served = "HTTP: process MCP tools/call of the pack";
    const testHop = "HTTP: node:http pass-through proxy, tools/call POST";
    if (has(served, testHop)) {
      const direct = medianOf("HTTP direct: tools/call POST");
      const throughPack = medianOf(served) / direct;
      console.log(
        `goal: a tools/call through a process's pack ≤ 1.3× the direct HTTP call: ${verdict(throughPack <= 1.3)} (${throughPack.toFixed(2)}×;` +
          ` a bare pass-through hop alone is ${(medianOf(testHop) / direct).toFixed(2)}×, the service ${(medianOf(served) / medianOf(testHop)).toFixed(2)}× that hop)`,
      );
    }
    const ourCase = "everything: this service, process MCP tools/call";
    const hopCase = "everything: node:http pass-through proxy";
    if (!has(ourCase, hopCase, "everything: SDK client callTool")) return;
    const floor = medianOf(EVERYTHING_FLOOR);
    const ours = medianOf(ourCase);
    const hop = medianOf(hopCase);
    console.log(
      `server-everything: this service ${ours.toFixed(3)} ms = ${(ours / floor).toFixed(2)}× the raw POST (${floor.toFixed(3)} ms); ` +
        `a bare pass-through hop ${(hop / floor).toFixed(2)}×, so the service adds ${(ours - hop).toFixed(3)} ms over any HTTP hop` +
        ` (${(ours / hop).toFixed(2)}× the hop); the SDK client direct ${(medianOf("everything: SDK client callTool") / floor).toFixed(2)}×`,
    );
    if (has(EVERYTHING_LATEST_FLOOR)) {
      const leg = medianOf(EVERYTHING_LATEST_FLOOR);
      console.log(
        `server-everything at ${LATEST_PROTOCOL_VERSION}, the version this service's client negotiates: the raw POST ${leg.toFixed(3)} ms` +
          ` (${(leg / floor).toFixed(2)}× the ${"2025-06-18"} one); this service ${(ours / leg).toFixed(2)}× it, ${signed(ours - leg)}`,
      );
    }
  } finally {
    for (const stop of stops) await stop();
    for (const own of agents) own.destroy();
    await Promise.all(sdkClients.map((client) => client.close()));
    for (const peer of peers.started) await peer.stop();
    await proxy.stop();
    await everything.stop();
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

runIfMain(import.meta.url, main);
