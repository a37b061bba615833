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
 * - dispatcher, pack sub-tool: the same for `{pack}__echo` of a `type: mcp_server` pack.
 * And warm `ServerToolService.listAll` of a project with a 40-tool pack against one without.
 * Goal (printed, not asserted): the dispatcher adds ≤ 1 ms median over the direct SDK call.
 *
 * Run: `npm run bench -- mcp` (or `npx tsx bench/mcp.ts`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGuardedFetch } from "@vance/adapters";
import { SdkMcpClient } from "@vance/adapters/mcp";
import { createNetworkPolicy, type McpServerTarget, silentLogger } from "@vance/core";
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

/** Runs the bench and prints a table: median, p95, and the difference to the baseline. */
export async function main(): Promise<void> {
  const server = await startMcpTestServer();
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-mcp-"));
  const policy = createNetworkPolicy(["127.0.0.1"]);
  const services = await buildServices(
    loadConfig({ VANCE_DATA_DIR: dataDir, VANCE_NETWORK_ALLOWLIST: "127.0.0.1" }),
    "bench-secret-0123456789",
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
      { name: "listAll: 20 tools", perRound: LIST_PER_ROUND, once: () => listed("q", 20) },
      { name: "listAll: 20 tools + 40-tool pack", perRound: LIST_PER_ROUND, once: () => listed("p", 60) },
    ];

    const { samples, elapsedSeconds: elapsed } = await interleavedRounds(cases, {
      rounds: ROUNDS,
      warmup: WARMUP_PER_CASE,
    });
    const medianOf = (name: string) => median(samples.get(name)!);
    const baselineOf = (name: string) =>
      name.startsWith("listAll") ? "listAll: 20 tools" : "SDK direct (baseline)";
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
  } finally {
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
