/**
 * Bench: an MCP `tools/call` through this service against the same call made directly, and against
 * other MCP gateways — every row measured by the same client, in a process of its own (issue 39).
 *
 * Every row calls `echo` of `@modelcontextprotocol/server-everything` (Streamable HTTP, a child
 * process) with the MCP SDK's `Client` (`bench/support/mcp-client.ts`, one forked child process
 * per row, connected once, so its warm session is reused as an engine's would be). Each server is a
 * process of its own too; this process only starts them and tells one client at a time to run.
 * Rows (the topology of each is printed with it):
 * - direct: the client → server-everything over Streamable HTTP — the baseline;
 * - this service: the client → a spawned process's MCP endpoint (`…/processes/{id}/mcp`) of the
 *   local server as `npm start` runs it (`functions/api/node.ts`, its request log on a pipe) →
 *   an `mcp_server` pack → server-everything over Streamable HTTP;
 * - this service, built-in tool: the same endpoint of another process calling the built-in `whoami`
 *   (no upstream): the service's own side of a call alone;
 * - a bare `node:http` pass-through hop (no parsing, keep-alive upstream) in front of
 *   server-everything: what any HTTP hop costs, the floor of every gateway;
 * - a lean JSON-RPC gateway (`startLeanGateway` in bench/peers): reads the call, sends it on, answers
 *   the upstream's result as one JSON message (as this service answers) with no auth, lookups, limits
 *   or log line — the floor of a gateway that answers a call itself;
 * - mcp-hub over its MCP endpoint (HTTP+SSE, the only transport its hub endpoint speaks) →
 *   server-everything over Streamable HTTP; supergateway and mcp-proxy over Streamable HTTP, each
 *   → a stdio child of server-everything of its own (what they are made for: no HTTP client leg).
 *   Installed on demand in bench/peers (its own package.json and lock); one that cannot be
 *   installed or started is skipped with its reason.
 * Rounds are interleaved (each round runs every row once, the order rotated from round to round),
 * so that machine load falls on all rows alike; each row's figure is the median of all its calls,
 * and each ratio the median of the per-round ratios of medians (with their range).
 * Goal (printed, not asserted): this service ≤ 1.3× direct, and ahead of mcp-hub.
 *
 * Run: `npm run bench -- mcp` (or `npx tsx bench/mcp.ts`). `MCP_BENCH_ROUNDS` (default 30),
 * `MCP_BENCH_CALLS` per row and round (default 40: short turns, so that a loaded machine's swings
 * fall on every row alike), `MCP_BENCH_WARMUP` unrecorded calls per row first (default 200); `MCP_BENCH_PROFILE=<dir>` starts the service
 * with `--cpu-prof` into that directory (the profile is written when it stops; the bare hop and the
 * lean gateway are profiled there too); `MCP_BENCH_SERVICE_FLAGS` adds Node or V8 flags to this
 * service's process alone (a baseline's starts without them); `MCP_BENCH_ROWS=<regex>`
 * runs the matching rows and direct only; `MCP_BENCH_BASELINE=<checkout>` adds a row for the service
 * of another checkout of this repository (its own `node_modules` in place), set up the same way,
 * and prints this service's ratio to it round by round with both CPU figures: an A/B of a change
 * in one interleaved run, which a loaded machine cannot skew the way it skews two runs.
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/support/local-server";
import { startEverythingServer } from "../test/support/mcp-everything";
import { type PeerEndpoint, type SkippedPeer, startPeers } from "./peers/peers";
import type { ClientCommand, ClientPlan, ClientReport } from "./support/mcp-client";
import { median, percentile, renderTable, runIfMain } from "./support/report";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.MCP_BENCH_ROUNDS ?? 30);
const CALLS = Number(process.env.MCP_BENCH_CALLS ?? 40);
const WARMUP = Number(process.env.MCP_BENCH_WARMUP ?? 200);
const TENANT = "bench";
const PROJECT = "p";
const DIRECT = "direct";
const SERVICE = "this service";
const BASELINE = "baseline service";
const BUILT_IN = "this service, built-in tool";
const LEAN = "lean JSON-RPC gateway";
const BASELINE_BUILT_IN = "baseline service, built-in tool";
const GOAL = 1.3;
/** `MCP_BENCH_SERVICE_FLAGS`: Node or V8 flags this service's process starts with (`--no-flush-bytecode`, say). */
const SERVICE_FLAGS = (process.env.MCP_BENCH_SERVICE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
/** USER_HZ of /proc/{pid}/stat on Linux. */
const CLOCK_TICKS = 100;

/** One row: a client process of its own, and what it measures. */
interface Row {
  readonly name: string;
  readonly topology: string;
  readonly plan: ClientPlan;
}

/** A running row client: `run(n)` answers the n calls' times in ms. */
interface RowClient {
  readonly protocolVersion: string | undefined;
  run(calls: number): Promise<readonly number[]>;
  close(): Promise<void>;
}

/** Runs the bench and prints, per row, its topology, median, p95 and ratio to direct. */
export async function main(): Promise<void> {
  const loadBefore = loadavg();
  const stops: (() => Promise<void>)[] = [];
  try {
    const everything = await startEverythingServer();
    stops.push(everything.stop);
    const service = await startService(process.env.MCP_BENCH_PROFILE);
    stops.push(service.stop);
    const auth = { authorization: `Bearer ${service.token}` };
    const processUrl = await spawnServiceProcess(service.base, auth, everything.url);
    const builtInUrl = await spawnBuiltInProcess(service.base, auth);
    const baselineDir = process.env.MCP_BENCH_BASELINE;
    const baseline = baselineDir ? await startService(undefined, baselineDir) : undefined;
    if (baseline) stops.push(baseline.stop);
    const baselineAuth: Record<string, string> = baseline
      ? { authorization: `Bearer ${baseline.token}` }
      : {};
    const baselineUrl = baseline
      ? await spawnServiceProcess(baseline.base, baselineAuth, everything.url)
      : undefined;
    const baselineBuiltInUrl = baseline ? await spawnBuiltInProcess(baseline.base, baselineAuth) : undefined;
    const hop = await forkedPeer("pass-through-main.ts", everything.url);
    stops.push(hop.stop);
    const lean = await forkedPeer("lean-gateway-main.ts", everything.url);
    stops.push(lean.stop);
    const entry = join(
      dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
      "dist",
      "index.js",
    );
    const peers: { started: PeerEndpoint[]; skipped: SkippedPeer[] } = await startPeers({
      entry,
      url: everything.url,
    });
    for (const peer of peers.started) stops.push(peer.stop);

    const rows: Row[] = [
      {
        name: DIRECT,
        topology: "SDK client → server-everything (Streamable HTTP)",
        plan: { url: everything.url, transport: "streamable", tool: "echo", headers: {} },
      },
      {
        name: SERVICE,
        topology:
          "SDK client → process MCP endpoint (Streamable HTTP) → mcp_server pack → server-everything (Streamable HTTP)",
        plan: { url: processUrl, transport: "streamable", tool: "everything__echo", headers: auth },
      },
      ...(baselineUrl
        ? [
            {
              name: BASELINE,
              topology: `as this service's row, the service of ${baselineDir}`,
              plan: {
                url: baselineUrl,
                transport: "streamable",
                tool: "everything__echo",
                headers: baselineAuth,
              },
            } satisfies Row,
          ]
        : []),
      {
        name: BUILT_IN,
        topology:
          "SDK client → process MCP endpoint (Streamable HTTP) → built-in whoami: the service's own side, no upstream",
        plan: { url: builtInUrl, transport: "streamable", tool: "whoami", arguments: {}, headers: auth },
      },
      ...(baselineBuiltInUrl
        ? [
            {
              name: BASELINE_BUILT_IN,
              topology: `as the row above, the service of ${baselineDir}`,
              plan: {
                url: baselineBuiltInUrl,
                transport: "streamable",
                tool: "whoami",
                arguments: {},
                headers: baselineAuth,
              },
            } satisfies Row,
          ]
        : []),
      {
        name: "node:http pass-through hop",
        topology: "SDK client → bare proxy (HTTP, no parsing) → server-everything (Streamable HTTP)",
        plan: { url: hop.url, transport: "streamable", tool: "echo", headers: {} },
      },
      {
        name: LEAN,
        topology:
          "SDK client → lean gateway (reads the call, answers its result as JSON; no auth, lookups or log) → server-everything (Streamable HTTP)",
        plan: { url: lean.url, transport: "streamable", tool: "echo", headers: {} },
      },
      ...peers.started.map((peer): Row => {
        const sse = peer.name === "mcp-hub";
        return {
          name: `${peer.name} ${peer.version}`,
          topology: sse
            ? `SDK client → ${peer.name} (HTTP+SSE) → server-everything (Streamable HTTP)`
            : `SDK client → ${peer.name} (Streamable HTTP) → server-everything (stdio child of its own)`,
          plan: {
            url: peer.url,
            transport: sse ? "sse" : "streamable",
            tool: sse ? "everything__echo" : "echo",
            headers: {},
          },
        };
      }),
    ];
    // MCP_BENCH_ROWS=<regex> keeps the matching rows (and direct, the baseline): for profiles and A/B runs.
    const only = process.env.MCP_BENCH_ROWS ? new RegExp(process.env.MCP_BENCH_ROWS) : null;
    if (only)
      rows.splice(
        0,
        rows.length,
        ...rows.filter(
          // A baseline row goes with the row of this service it stands beside: kept alone, it warmed
          // the baseline's process with calls this service's process never got.
          (row) => row.name === DIRECT || only.test(row.name.replace(/^baseline service/, "this service")),
        ),
      );
    const clients: RowClient[] = [];
    for (const row of rows) {
      const client = await startClient(row.plan);
      clients.push(client);
      stops.push(client.close);
    }
    for (const client of clients) await client.run(WARMUP);

    // CPU of the service's and server-everything's processes while the service's row runs.
    const serviceRow = rows.findIndex((row) => row.name === SERVICE);
    const baselineRow = rows.findIndex((row) => row.name === BASELINE);
    const cpu = {
      service: 0,
      serviceSystem: 0,
      everything: 0,
      calls: 0,
      baseline: 0,
      baselineSystem: 0,
      baselineCalls: 0,
    };
    // CPU of the service (and the baseline's) while its built-in row runs.
    const builtInRow = rows.findIndex((row) => row.name === BUILT_IN);
    const baselineBuiltInRow = rows.findIndex((row) => row.name === BASELINE_BUILT_IN);
    const builtInCpu = { service: 0, baseline: 0, calls: 0 };
    // CPU of the lean gateway while its row runs: the floor's own cost of a call.
    const leanRow = rows.findIndex((row) => row.name === LEAN);
    const leanCpu = { used: 0, calls: 0 };
    const samples = rows.map((): number[] => []);
    const roundMedians = rows.map((): number[] => []);
    const started = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < rows.length; k++) {
        const i = (k + round) % rows.length;
        const before =
          i === serviceRow ? [cpuMs(service.pid), cpuMs(everything.pid), cpuMs(service.pid, "system")] : null;
        const baselineBefore =
          baseline && i === baselineRow ? [cpuMs(baseline.pid), cpuMs(baseline.pid, "system")] : null;
        const builtInPid =
          i === builtInRow ? service.pid : baseline && i === baselineBuiltInRow ? baseline.pid : undefined;
        const builtInBefore = builtInPid === undefined ? 0 : cpuMs(builtInPid);
        const leanBefore = i === leanRow ? cpuMs(lean.pid) : 0;
        const times = await clients[i]!.run(CALLS);
        if (i === leanRow) {
          leanCpu.used += cpuMs(lean.pid) - leanBefore;
          leanCpu.calls += CALLS;
        }
        if (builtInPid !== undefined) {
          const used = cpuMs(builtInPid) - builtInBefore;
          if (i === builtInRow) {
            builtInCpu.service += used;
            builtInCpu.calls += CALLS;
          } else builtInCpu.baseline += used;
        }
        if (before) {
          cpu.service += cpuMs(service.pid) - before[0]!;
          cpu.everything += cpuMs(everything.pid) - before[1]!;
          cpu.serviceSystem += cpuMs(service.pid, "system") - before[2]!;
          cpu.calls += CALLS;
        }
        if (baseline && baselineBefore !== null) {
          cpu.baseline += cpuMs(baseline.pid) - baselineBefore[0]!;
          cpu.baselineSystem += cpuMs(baseline.pid, "system") - baselineBefore[1]!;
          cpu.baselineCalls += CALLS;
        }
        samples[i]!.push(...times);
        roundMedians[i]!.push(median(times));
      }
    }
    const elapsed = (Date.now() - started) / 1000;
    const loadAfter = loadavg();

    const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
    console.log(
      `mcp: tools/call of server-everything's echo, the MCP SDK client in a process of its own per row, ` +
        `${ROUNDS} interleaved rounds of ${CALLS} calls per row (${elapsed.toFixed(1)} s); ` +
        `${cpus().length} CPUs, load average (1/5/15 min) ${load(loadBefore)} before, ${load(loadAfter)} after\n`,
    );
    for (const peer of peers.skipped) console.log(`skipped ${peer.name}: ${peer.reason}`);
    console.log(
      `protocol negotiated: ${rows.map((row, i) => `${row.name} ${clients[i]!.protocolVersion ?? "2024-11-05 (SSE)"}`).join(", ")}\n`,
    );
    const ratios = rows.map((_, i) =>
      roundMedians[i]!.map((value, round) => value / roundMedians[0]![round]!),
    );
    const table = rows.map((row, i) => {
      const own = median(samples[i]!);
      const perRound = ratios[i]!;
      return [
        row.name,
        row.topology,
        own.toFixed(3),
        percentile(samples[i]!, 0.95).toFixed(3),
        `${median(perRound).toFixed(2)}x`,
        `${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}`,
      ];
    });
    console.log(
      renderTable(
        [
          { title: "row" },
          { title: "topology" },
          { title: "median ms", right: true },
          { title: "p95 ms", right: true },
          { title: "vs direct", right: true },
          { title: "rounds", right: true },
        ],
        table,
      ),
    );
    const ratioOf = (name: string) => {
      const i = rows.findIndex((row) => row.name.startsWith(name));
      return i < 0 ? undefined : median(ratios[i]!);
    };
    const ours = ratioOf(SERVICE);
    const hub = ratioOf("mcp-hub");
    const floor = ratioOf(LEAN);
    // MCP_BENCH_ROWS may leave this service's row out: then there is no goal to judge.
    if (ours !== undefined)
      console.log(
        `\nservice/direct ${ours.toFixed(2)}× (goal ≤ ${GOAL}×: ${ours <= GOAL ? "met" : "NOT met"}); ` +
          (hub === undefined
            ? "mcp-hub skipped"
            : `mcp-hub/direct ${hub.toFixed(2)}× (ahead of mcp-hub: ${ours < hub ? "yes" : "NO"})`) +
          (floor === undefined ? "" : `; the lean gateway (no work of its own) ${floor.toFixed(2)}×`),
      );
    if (baselineRow >= 0 && serviceRow >= 0) {
      const perRound = roundMedians[serviceRow]!.map(
        (value, round) => value / roundMedians[baselineRow]![round]!,
      );
      console.log(
        `this service / the baseline's (${baselineDir}): ${median(perRound).toFixed(2)}× ` +
          `(rounds ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}); ` +
          `CPU per call ${(cpu.service / Math.max(1, cpu.calls)).toFixed(2)} ms against ${(cpu.baseline / Math.max(1, cpu.baselineCalls)).toFixed(2)} ms ` +
          `(of which system ${(cpu.serviceSystem / Math.max(1, cpu.calls)).toFixed(2)} against ${(cpu.baselineSystem / Math.max(1, cpu.baselineCalls)).toFixed(2)} ms)`,
      );
    }
    if (builtInCpu.calls > 0) {
      const perCall = (ms: number) => (ms / builtInCpu.calls).toFixed(2);
      console.log(
        `CPU per call of the built-in tool's row: the service ${perCall(builtInCpu.service)} ms` +
          (baselineBuiltInRow >= 0 ? `, the baseline's ${perCall(builtInCpu.baseline)} ms` : ""),
      );
    }
    if (builtInRow >= 0 && baselineBuiltInRow >= 0) {
      const perRound = roundMedians[builtInRow]!.map(
        (value, round) => value / roundMedians[baselineBuiltInRow]![round]!,
      );
      console.log(
        `the built-in tool's row / the baseline's: ${median(perRound).toFixed(2)}× ` +
          `(rounds ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)})`,
      );
    }
    if (cpu.calls > 0) {
      console.log(
        `CPU per call of this service's row (user + system, /proc): the service ${(cpu.service / cpu.calls).toFixed(2)} ms ` +
          `(system ${(cpu.serviceSystem / cpu.calls).toFixed(2)} ms), ` +
          `server-everything ${(cpu.everything / cpu.calls).toFixed(2)} ms` +
          (leanCpu.calls > 0
            ? `; the lean gateway's row: the gateway ${(leanCpu.used / leanCpu.calls).toFixed(2)} ms`
            : ""),
      );
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
}

/**
 * The local server as `npm start` runs it (`functions/api/node.ts` through tsx, its log on a pipe
 * this process drains), in a fresh data directory; with `profileDir`, under `--cpu-prof`.
 */
async function startService(
  profileDir: string | undefined,
  checkout: string = join(HERE, ".."),
): Promise<{ base: string; token: string; pid: number; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-mcp-"));
  const port = await freePort();
  const { VANCE_JWT_SECRET: _unset, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [
      ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
      // Node or V8 flags for this checkout's service alone (not the baseline's): an A/B of a runtime setting.
      ...(checkout === join(HERE, "..") ? SERVICE_FLAGS : []),
      "--import",
      "tsx",
      "functions/api/node.ts",
    ],
    {
      cwd: checkout,
      env: {
        ...env,
        HOST: "127.0.0.1",
        PORT: String(port),
        VANCE_DATA_DIR: dataDir,
        VANCE_STORE_SCAN_SECONDS: "0",
        VANCE_NETWORK_ALLOWLIST: "127.0.0.1",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  let banner = "";
  const token = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      banner += chunk.toString("utf8");
      const found = /export TOKEN=(\S+)/.exec(banner);
      if (!found || !/curl -s/.test(banner)) return;
      // From here on its log lines are read and dropped, as a log shipper would.
      child.stdout?.off("data", onData);
      child.stdout?.resume();
      resolve(found[1]!);
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the service exited with ${code}: ${banner}`)));
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { base: `http://127.0.0.1:${port}`, token, pid: child.pid!, stop };
}

/** The CPU time process `pid` has used so far (user + system, or `system` alone), in ms (Linux; 0 elsewhere). */
function cpuMs(pid: number, which: "all" | "system" = "all"): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const ticks = (which === "all" ? Number(fields[11]) : 0) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Puts the pack over server-everything into the service and spawns a process allowing its echo. */
async function spawnServiceProcess(
  base: string,
  auth: Record<string, string>,
  everythingUrl: string,
): Promise<string> {
  const project = `${base}/v1/tenants/${TENANT}/projects/${PROJECT}`;
  const put = async (path: string, body: string) => {
    const answer = await fetch(`${project}/documents/${path}`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/yaml" },
      body,
    });
    if (!answer.ok) throw new Error(`PUT ${path}: ${answer.status} ${await answer.text()}`);
  };
  await put("mcp-servers/everything.yaml", `url: ${everythingUrl}\ntimeoutMs: 10000\n`);
  await put(
    "server-tools/everything.yaml",
    "type: mcp_server\ndescription: server-everything\nparameters:\n  server: everything\n",
  );
  // The pack's sub-tools come once its source has answered: wait for that state before spawning.
  for (;;) {
    const listed = await fetch(`${project}/tools`, { headers: auth });
    if ((await listed.text()).includes('"everything__echo"')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const spawned = await fetch(`${project}/processes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ models: [], engineDefault: ["everything__echo"] }),
  });
  const { processId } = (await spawned.json()) as { processId?: string };
  if (!processId) throw new Error(`spawn: ${spawned.status}`);
  return `${project}/processes/${processId}/mcp`;
}

/** Spawns a process allowing the built-in `whoami`: a call of it is the service's own side alone. */
async function spawnBuiltInProcess(base: string, auth: Record<string, string>): Promise<string> {
  const project = `${base}/v1/tenants/${TENANT}/projects/${PROJECT}`;
  const spawned = await fetch(`${project}/processes`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ models: [], engineDefault: ["whoami"] }),
  });
  const { processId } = (await spawned.json()) as { processId?: string };
  if (!processId) throw new Error(`spawn: ${spawned.status}`);
  return `${project}/processes/${processId}/mcp`;
}

/** Forks `script` (TypeScript, through tsx) and waits for its first message. */
function forkChild(
  script: string,
  args: string[],
  profileDir?: string,
): Promise<{ child: ChildProcess; first: Record<string, unknown> }> {
  const child = fork(script, args, {
    execArgv: [...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), "--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", (message) => resolve({ child, first: message as Record<string, unknown> }));
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  return exited;
}

/** A peer of bench/peers forked in front of `target`: its URL once it listens, and its stop. */
async function forkedPeer(
  main: string,
  target: string,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const { child, first } = await forkChild(
    join(HERE, "peers", main),
    [target],
    process.env.MCP_BENCH_PROFILE,
  );
  return { url: String(first.url), pid: child.pid ?? 0, stop: () => stopChild(child) };
}

/** One row's client process, connected and ready. */
async function startClient(plan: ClientPlan): Promise<RowClient> {
  const { child, first } = await forkChild(join(HERE, "support", "mcp-client.ts"), [JSON.stringify(plan)]);
  const ready = first as ClientReport;
  if ("error" in ready) throw new Error(`client of ${plan.url}: ${ready.error}`);
  const protocolVersion = "ready" in ready ? ready.protocolVersion : undefined;
  return {
    protocolVersion,
    run: (calls) =>
      new Promise((resolve, reject) => {
        child.once("message", (message: ClientReport) => {
          if ("times" in message) resolve(message.times);
          else
            reject(
              new Error(`client of ${plan.url} (${plan.tool}): ${"error" in message ? message.error : "?"}`),
            );
        });
        child.send({ calls } satisfies ClientCommand);
      }),
    close: async () => {
      if (child.connected) child.send({ close: true } satisfies ClientCommand);
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await (child.exitCode === null && child.signalCode === null ? exited : Promise.resolve());
      clearTimeout(timer);
    },
  };
}

runIfMain(import.meta.url, main);
