/**
 * Bench: the warm manifest (`GET T/processes/{id}/manifest` of a spawned process) as an external
 * keep-alive client sees it, for 50, 200, 1,000 and 5,000 tools in the allow set, on the embedded
 * default and on s3rver + DynamoDB Local, against the byte floor: a bare `node:http` server
 * answering the same bytes.
 *
 * Three processes: the service runs here (with its stores counted), the byte floor in its own
 * process (`support/byte-floor.ts`), the load client in a third (`support/load-client.ts`), the
 * same client for every row. Every case (health, each manifest, each manifest's floor) is measured
 * in every round, the order rotated by one each round, so a noisy moment of the machine falls on
 * all cases alike; a ratio is computed per round from windows of that round, and the median over
 * the rounds is reported, with the machine's load average over the rounds. The whole manifest is also
 * measured through its Hono route (a second server over the same services, without the fast routes of
 * `functions/api/fast-path.ts`), against the same floor. Beside requests/s, the
 * CPU time per request of the process that answered (the service's — this process, its threads
 * included —, or the floor's), which the machine's other load moves far less than the wall clock.
 *
 * Run: `npm run bench -- manifest`. `MANIFEST_BENCH_STORES=embedded` (or `aws`) runs one set-up,
 * `MANIFEST_BENCH_ROUNDS=n` sets the rounds, `MANIFEST_BENCH_SIZES=200,5000` the sizes; profile
 * the service with `node --cpu-prof --import tsx bench/manifest.ts`. `MANIFEST_BENCH_BASELINE=dir`
 * (a checkout of another tree, e.g. the one a change started from) adds, on the embedded set-up,
 * that tree's service and this tree's, each in a process of its own (`support/manifest-service.ts`)
 * with the same tools, so the two are placed alike: their warm manifests are cases of every round,
 * against the same floor, and compared per round (requests/s and CPU time per request).
 */
import { type ChildProcess, fork } from "node:child_process";
import type { AddressInfo } from "node:net";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { CountingObjectStore, type ObjectStoreCallCounts } from "@vance/adapters/testing";
import {
  byString,
  CAPABILITY_FLOOR,
  type Manifest,
  mapWithConcurrency,
  silentLogger,
  TOOL_SEARCH_AUTO_SIZE,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { awsLocalStores, type BenchStores, embeddedStores } from "./support/bench-stores";
import type { FloorAnswer, FloorRequest } from "./support/byte-floor";
import { countingStateStore } from "./support/counting";
import type { LoadAnswer, LoadRequest } from "./support/load-client";
import type { ServiceAnswer, ServiceRequest } from "./support/manifest-service";
import {
  type Column,
  formatMs,
  formatNumber,
  median,
  percentile,
  renderTable,
  runIfMain,
} from "./support/report";
import { toolDocument } from "./support/tool-documents";

const SIZES = numbersFrom(process.env.MANIFEST_BENCH_SIZES) ?? [50, 200, 1_000, 5_000];
const ROUNDS = numbersFrom(process.env.MANIFEST_BENCH_ROUNDS)?.[0] ?? 7;
/** Requests in flight during a window. */
const CONCURRENCY = 10;
const WARMUP_MS = 400;
/** One case's window in a round. */
const WINDOW_MS = 1_000;
/** Puts in flight while seeding; the seeding is set-up, not a measurement. */
const SEED_CONCURRENCY = 16;
const FAMILY_SIZE = 20;

const TENANT = "bench";
const SECRET = "bench-secret-0123456789abcdef";
const CHAIN = ["openai/gpt-4.1"];
/** openai's bundled maxTools 128 minus the default external reserve of 1. */
const OPENAI_LIMIT = 127;
/** Goals of issue 11: manifest requests/s as a share of health's, by tools in the allow set. */
const HEALTH_GOALS = [
  { tools: 200, ratio: 0.3 },
  { tools: 5_000, ratio: 0.05 },
] as const;
/** Issue 38: the warm manifest as a share of a bare `node:http` serving its bytes. */
const FLOOR_GOALS = [
  { tools: 200, ratio: 0.5 },
  { tools: 5_000, ratio: 0.7 },
] as const;

/** Another tree whose warm manifest is measured beside this one's (embedded stores only). */
const BASELINE = process.env.MANIFEST_BENCH_BASELINE;

const SETUPS = [
  { key: "embedded", open: embeddedStores },
  { key: "aws", open: awsLocalStores },
].filter((setup) => (process.env.MANIFEST_BENCH_STORES ?? setup.key) === setup.key);

interface Usage {
  readonly documents: ObjectStoreCallCounts;
  readonly catalog: ObjectStoreCallCounts;
  readonly state: Readonly<Record<string, number>>;
  readonly s3: number;
  readonly dynamo: number;
}

/** One measured request of a round: health, a manifest, or a manifest's byte floor. */
interface Case {
  readonly name: string;
  readonly size: number | null;
  readonly kind: "health" | "manifest" | "floor";
  /** A manifest's byte floor, when it is not the case pushed right after it. */
  readonly floor?: Case;
  /** A manifest through the Hono route (the app without its fast routes), beside the fast route. */
  readonly hono?: boolean;
  /** A manifest of a tree's service in its own process (`MANIFEST_BENCH_BASELINE`): this tree's or the baseline's. */
  readonly tree?: TreeService;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Body bytes every answer must have (a floor's are its manifest's). */
  readonly bytes?: number;
}

/** A case's windows over the rounds. */
interface Measured {
  readonly perSecond: number[];
  readonly latencies: number[];
  /** CPU time per request of the answering process (the service's, or the floor's), µs, per window. */
  readonly cpu: number[];
  requests: number;
  usage: Usage | null;
}

interface Row {
  readonly setup: string;
  readonly tools: string;
  readonly measurement: string;
  readonly rate: string;
  readonly median: string;
  readonly p95: string;
  readonly floorRatio: string;
  readonly cpu: string;
  readonly cpuRatio: string;
  readonly healthRatio: string;
  readonly bytes: string;
  readonly objects: string;
  readonly s3: string;
  readonly state: string;
  readonly dynamo: string;
}

const COLUMNS: readonly (Column & { readonly key: keyof Row })[] = [
  { title: "stores", key: "setup" },
  { title: "tools", key: "tools", right: true },
  { title: "measurement", key: "measurement" },
  { title: "req/s", key: "rate", right: true },
  { title: "median", key: "median", right: true },
  { title: "p95", key: "p95", right: true },
  { title: "× floor", key: "floorRatio", right: true },
  { title: "CPU µs/req", key: "cpu", right: true },
  { title: "floor CPU ×", key: "cpuRatio", right: true },
  { title: "× health", key: "healthRatio", right: true },
  { title: "bytes", key: "bytes", right: true },
  { title: "object store/manifest", key: "objects" },
  { title: "S3 HTTP", key: "s3", right: true },
  { title: "state store/manifest", key: "state" },
  { title: "DynamoDB HTTP", key: "dynamo", right: true },
];

export async function main(): Promise<void> {
  console.log(
    `manifest bench: ${SIZES.join(", ")} tools in the allow set under ${CHAIN.join(", ")}; ` +
      `${ROUNDS} interleaved rounds of ${formatMs(WINDOW_MS)} windows, ${CONCURRENCY} requests in flight; ` +
      `the service in this process, the byte floor and the load client in their own; ` +
      `node ${process.version}, ${cpus().length} CPUs, load average ${loadText()}`,
  );
  const rows: Row[] = [];
  const notes: string[] = [];
  const goals: string[] = [];
  const client = await startLoadClient();
  const floor = await startByteFloor();
  const trees = BASELINE
    ? await Promise.all([
        startTreeService("this tree", fileURLToPath(new URL("..", import.meta.url))),
        startTreeService("baseline tree", BASELINE),
      ])
    : [];
  const scripts = await ScriptPool.create();
  try {
    for (const setup of SETUPS) {
      const stores = await setup.open("manifest");
      try {
        notes.push(...stores.notes);
        await benchStores(
          stores,
          scripts,
          client,
          floor,
          setup.key === "embedded" ? trees : [],
          rows,
          notes,
          goals,
        );
      } finally {
        await stores.close();
      }
      rows.push(emptyRow());
    }
  } finally {
    await scripts.close();
    await client.stop();
    await floor.stop();
    await Promise.all(trees.map((tree) => tree.stop()));
  }

  console.log("");
  console.log(
    renderTable(
      COLUMNS,
      rows.map((row) => COLUMNS.map((column) => row[column.key])),
    ),
  );
  console.log("");
  for (const note of notes) console.log(`  ${note}`);
  console.log("");
  for (const goal of goals) console.log(`  goal: ${goal}`);
}

// ---- one set-up ----------------------------------------------------------------------------------

async function benchStores(
  stores: BenchStores,
  scripts: ScriptPool,
  client: LoadClient,
  floor: ByteFloor,
  trees: readonly TreeService[],
  rows: Row[],
  notes: string[],
  goals: string[],
): Promise<void> {
  const documents = new CountingObjectStore(stores.documents);
  const catalog = new CountingObjectStore(stores.catalog);
  const state = countingStateStore(stores.state);
  const usage = (): Usage => ({
    documents: documents.counts,
    catalog: catalog.counts,
    state: { ...state.counts },
    s3: stores.s3Requests?.() ?? 0,
    dynamo: stores.dynamoRequests?.() ?? 0,
  });
  // As `npm start` does: compile catalog.json first, so a manifest reads the catalog with one GET.
  await syncCatalog({ store: catalog, bundled: loadBundledCatalog(DEFAULTS_DIR), logger: silentLogger });
  const services = await buildServices(loadConfig({ VANCE_DATA_DIR: stores.dataDir }), SECRET, {
    documents,
    catalog,
    state: state.store,
    logger: silentLogger,
    scripts,
    env: {},
  });
  const server = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  // The same services without the fast routes: the manifest as its Hono route answers it, for a row beside.
  const honoServer = serve({
    fetch: createApp(services, { fastRoutes: false }).fetch,
    port: 0,
    hostname: "127.0.0.1",
  });
  await Promise.all([server, honoServer].map((s) => new Promise((resolve) => s.once("listening", resolve))));
  const honoBase = `http://127.0.0.1:${(honoServer.address() as AddressInfo).port}`;
  const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const auth = { authorization: `Bearer ${token}` };
  const label = stores.label;
  try {
    const seeded = performance.now();
    const cases: Case[] = [
      { name: "GET /v1/health", size: null, kind: "health", url: `${base}/v1/health`, headers: {} },
    ];
    const firsts = new Map<number, { ms: number; usage: Usage }>();
    const namesOf = (size: number) => Array.from({ length: size }, (_, i) => toolName(i));
    // The trees' own processes seed the same tools meanwhile.
    const treesSeeded = trees.map((tree) =>
      tree.seed({ tenant: TENANT, sizes: SIZES, chain: CHAIN, names: SIZES.map(namesOf) }),
    );
    for (const size of SIZES) {
      const project = `p${size}`;
      const names = namesOf(size);
      await mapWithConcurrency(names, SEED_CONCURRENCY, async (name, i) => {
        await services.tools.put(TENANT, project, name, toolDocument(name, i % 4 < 3));
      });
      const spawned = await send(base, auth, "POST", `/v1/tenants/${TENANT}/projects/${project}/processes`, {
        models: CHAIN,
        allowedToolsAdd: ["@bench"],
      });
      if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${spawned.body}`);
      const { processId } = JSON.parse(spawned.body) as { processId: string };
      const path = `/v1/tenants/${TENANT}/projects/${project}/processes/${processId}/manifest`;
      // The first manifest of the process: its time and store requests.
      const before = usage();
      const started = performance.now();
      const first = await send(base, auth, "GET", path);
      firsts.set(size, { ms: performance.now() - started, usage: since(usage(), before) });
      if (first.status !== 200) throw new Error(`manifest (${size} tools): ${first.status} ${first.body}`);
      const body = JSON.parse(first.body) as Manifest;
      verifyManifest(body, size);
      notes.push(
        `${label}, ${size} tools: ${body.primary.length} primary / ${body.deferred.length} deferred / ` +
          `${body.demoted.length} demoted, ${formatNumber(Buffer.byteLength(first.body) / 1024, 1)} KiB response`,
      );
      // As the engine kit asks once it holds the name lists: `?names=` their version, the lists left out.
      const kept = `${path}?names=${(body as Manifest & { namesVersion: string }).namesVersion}`;
      const unnamed = await send(base, auth, "GET", kept);
      if (unnamed.status !== 200 || "deferred" in JSON.parse(unnamed.body)) {
        throw new Error(
          `manifest with ?names= (${size} tools): ${unnamed.status} ${unnamed.body.slice(0, 200)}`,
        );
      }
      for (const [variant, answer, url] of [
        ["", first.body, path],
        [", lists kept (?names=)", unnamed.body, kept],
      ] as const) {
        const bytes = Buffer.byteLength(answer);
        const floorName = `${label.replace(/\W+/g, "-")}-${size}${variant ? "-kept" : ""}`;
        await floor.register(floorName, answer);
        const floorCase: Case = {
          name: `bare node:http, same bytes${variant}`,
          size,
          kind: "floor",
          url: `${floor.base}/${floorName}`,
          headers: {},
          bytes,
        };
        cases.push(
          {
            name: `warm manifest${variant}`,
            size,
            kind: "manifest",
            url: `${base}${url}`,
            headers: auth,
            bytes,
          },
          floorCase,
        );
        for (const [t, tree] of (variant ? [] : trees).entries()) {
          const seeded = await treesSeeded[t]!;
          const url = `${seeded.base}${seeded.paths[size]}`;
          const headers = { authorization: seeded.authorization };
          const answer = await fetch(url, { headers });
          const text = await answer.text();
          if (answer.status !== 200)
            throw new Error(`${tree.name}'s manifest (${size} tools): ${answer.status} ${text}`);
          cases.push({
            name: `warm manifest, ${tree.name} in its own process`,
            size,
            kind: "manifest",
            floor: floorCase,
            tree,
            url,
            headers,
            bytes: Buffer.byteLength(text),
          });
        }
        if (!variant) {
          cases.push({
            name: "warm manifest, Hono route (no fast route)",
            size,
            kind: "manifest",
            floor: floorCase,
            hono: true,
            url: `${honoBase}${url}`,
            headers: auth,
            bytes,
          });
        }
      }
    }
    notes.push(
      `${label}: seeded ${SIZES.reduce((n, size) => n + size, 0)} tool documents in ${SIZES.length} projects ` +
        `and their first manifests in ${formatMs(performance.now() - seeded)}`,
    );

    const window = async (bench: Case, ms: number) => {
      const answer = await client.load({
        url: bench.url,
        headers: bench.headers,
        ms,
        concurrency: CONCURRENCY,
      });
      if (bench.bytes !== undefined && answer.bytes !== bench.bytes) {
        throw new Error(
          `${bench.name} (${bench.size} tools): ${answer.bytes} bytes, expected ${bench.bytes}`,
        );
      }
      return answer;
    };
    for (const bench of cases) await window(bench, WARMUP_MS);
    const measured = new Map<Case, Measured>(
      cases.map((bench) => [bench, { perSecond: [], latencies: [], cpu: [], requests: 0, usage: null }]),
    );
    const loads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < cases.length; k++) {
        const bench = cases[(round + k) % cases.length]!;
        const entry = measured.get(bench)!;
        const before = usage();
        const cpu = () =>
          bench.kind === "floor"
            ? floor.cpu()
            : bench.tree
              ? bench.tree.cpu()
              : Promise.resolve(serviceCpu());
        const cpuBefore = await cpu();
        const answer = await window(bench, WINDOW_MS);
        entry.cpu.push(((await cpu()) - cpuBefore) / answer.requests);
        const used = since(usage(), before);
        entry.perSecond.push((answer.requests / answer.elapsedMs) * 1000);
        entry.latencies.push(...answer.latencies);
        entry.requests += answer.requests;
        entry.usage = entry.usage === null ? used : plus(entry.usage, used);
      }
      loads.push(loadavg()[0] ?? 0);
    }
    notes.push(
      `${label}: load average (1 min) over the ${ROUNDS} rounds: median ${formatNumber(median(loads), 2)}, ` +
        `${formatNumber(Math.min(...loads), 2)}–${formatNumber(Math.max(...loads), 2)}`,
    );

    const health = cases[0]!;
    const perRound = (a: Case, b: Case) =>
      measured.get(a)!.perSecond.map((rate, round) => rate / measured.get(b)!.perSecond[round]!);
    /** The floor's CPU time per request over the service's, per round. */
    const cpuPerRound = (floorCase: Case, bench: Case) =>
      measured.get(floorCase)!.cpu.map((micros, round) => micros / measured.get(bench)!.cpu[round]!);
    /** A manifest's floor: the case pushed right after it. */
    const floorOf = (bench: Case) => bench.floor ?? cases[cases.indexOf(bench) + 1]!;
    for (const bench of cases) {
      const entry = measured.get(bench)!;
      const manifest = bench.kind === "manifest";
      rows.push({
        ...emptyRow(),
        setup: label,
        tools: bench.size === null ? "" : formatNumber(bench.size, 0),
        measurement: bench.name,
        rate: formatNumber(median(entry.perSecond), 0),
        median: formatMs(median(entry.latencies)),
        p95: formatMs(percentile(entry.latencies, 0.95)),
        floorRatio: manifest ? `${formatNumber(median(perRound(bench, floorOf(bench))), 3)}×` : "",
        cpu: formatNumber(median(entry.cpu), 0),
        cpuRatio: manifest ? `${formatNumber(median(cpuPerRound(floorOf(bench), bench)), 3)}×` : "",
        healthRatio: bench.kind === "health" ? "" : `${formatNumber(median(perRound(bench, health)), 3)}×`,
        bytes: bench.bytes === undefined ? "" : formatNumber(bench.bytes, 0),
        // A tree's own process's stores are not counted here.
        ...(manifest && entry.usage && !bench.tree ? usageCells(entry.usage, entry.requests) : {}),
      });
      if (bench.name === "warm manifest" && bench.size !== null) {
        const first = firsts.get(bench.size)!;
        rows.push({
          ...emptyRow(),
          setup: label,
          tools: formatNumber(bench.size, 0),
          measurement: "first manifest",
          median: formatMs(first.ms),
          ...usageCells(first.usage, 1),
        });
      }
    }
    const manifestsOf = (size: number) =>
      cases.filter((bench) => bench.kind === "manifest" && !bench.hono && !bench.tree && bench.size === size);
    const manifestOf = (size: number) => manifestsOf(size)[0];
    for (const [goal, bench] of FLOOR_GOALS.flatMap((goal) =>
      manifestsOf(goal.tools).map((bench) => [goal, bench] as const),
    )) {
      const ratios = perRound(bench, floorOf(bench));
      const ratio = median(ratios);
      goals.push(
        `${label}: ${bench.name} of ${formatNumber(goal.tools, 0)} tools ${formatNumber(ratio, 3)}× a bare node:http ` +
          `serving its bytes (median of ${ROUNDS} rounds, ${formatNumber(Math.min(...ratios), 3)}–${formatNumber(Math.max(...ratios), 3)}; ` +
          `${formatNumber(median(measured.get(bench)!.perSecond), 0)} / ${formatNumber(median(measured.get(floorOf(bench))!.perSecond), 0)} req/s), ` +
          `goal ≥ ${goal.ratio}×: ${ratio >= goal.ratio ? "met" : "MISSED"}; CPU time per request, the floor's over the service's: ` +
          `${formatNumber(median(cpuPerRound(floorOf(bench), bench)), 3)}×`,
      );
    }
    for (const before of trees.length < 2 ? [] : cases.filter((bench) => bench.tree === trees[1])) {
      const after = cases.find((bench) => bench.tree === trees[0] && bench.size === before.size)!;
      const cpu = measured.get(before)!.cpu.map((micros, round) => measured.get(after)!.cpu[round]! / micros);
      const rates = perRound(after, before);
      const range = (values: number[]) =>
        `${formatNumber(median(values), 3)}× (${formatNumber(Math.min(...values), 3)}–${formatNumber(Math.max(...values), 3)})`;
      goals.push(
        `${label}: this tree against the baseline tree (${BASELINE}), each in its own process, warm manifest of ` +
          `${formatNumber(before.size!, 0)} tools: ${range(rates)} its requests/s, ${range(cpu)} its CPU time per request ` +
          `(${formatNumber(median(measured.get(after)!.cpu), 0)} against ${formatNumber(median(measured.get(before)!.cpu), 0)} µs); ` +
          `× the floor: this tree ${range(perRound(after, floorOf(after)))}, the baseline ${range(perRound(before, floorOf(before)))} ` +
          `(medians of ${ROUNDS} rounds)`,
      );
    }
    for (const hono of cases.filter((bench) => bench.hono)) {
      const fast = manifestOf(hono.size!)!;
      const cpu = measured.get(hono)!.cpu.map((micros, round) => measured.get(fast)!.cpu[round]! / micros);
      goals.push(
        `${label}: the fast route against the Hono route, ${formatNumber(hono.size!, 0)} tools: ` +
          `${formatNumber(median(perRound(fast, hono)), 3)}× its requests/s, ${formatNumber(median(cpu), 3)}× its CPU time ` +
          `per request (medians of ${ROUNDS} rounds)`,
      );
    }
    for (const goal of HEALTH_GOALS) {
      const bench = manifestOf(goal.tools);
      if (!bench) continue;
      const ratio = median(perRound(bench, health));
      goals.push(
        `${label}: warm manifest of ${formatNumber(goal.tools, 0)} tools ${formatNumber(ratio, 3)}× health ` +
          `(median of ${ROUNDS} rounds), goal ≥ ${goal.ratio}×: ${ratio >= goal.ratio ? "met" : "MISSED"}`,
      );
    }
  } finally {
    await Promise.all([server, honoServer].map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

function verifyManifest(body: Manifest, size: number): void {
  const fail = (why: string) => {
    throw new Error(`manifest of ${size} tools: ${why}`);
  };
  // The floor pair, and `tool_search`, which a spawn adds by itself above TOOL_SEARCH_AUTO_SIZE.
  const tools = size + CAPABILITY_FLOOR.length + (size > TOOL_SEARCH_AUTO_SIZE ? 1 : 0);
  if (body.primary.length + body.deferred.length !== tools)
    fail(`${body.primary.length} primary + ${body.deferred.length} deferred ≠ ${tools}`);
  if (body.budget.limit !== OPENAI_LIMIT) fail(`limit ${body.budget.limit}, expected ${OPENAI_LIMIT}`);
  if (body.primary.length > OPENAI_LIMIT) fail(`${body.primary.length} primary > ${OPENAI_LIMIT}`);
  if (body.tools.length !== body.primary.length) fail("tools array ≠ primary");
}

function toolName(index: number): string {
  return `fam${String(Math.floor(index / FAMILY_SIZE)).padStart(3, "0")}_op${index % FAMILY_SIZE}`;
}

/** One request of the set-up (seeding, spawning, first manifests), with `fetch`: not measured. */
async function send(
  base: string,
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? auth : { ...auth, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.text() };
}

// ---- the two child processes ---------------------------------------------------------------------

interface LoadClient {
  load(request: Omit<LoadRequest, "id">): Promise<Extract<LoadAnswer, { requests: number }>>;
  stop(): Promise<void>;
}

interface ByteFloor {
  readonly base: string;
  register(name: string, body: string): Promise<void>;
  /** The floor process's CPU time so far, µs. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

function forkSupport(file: string): ChildProcess {
  return fork(fileURLToPath(new URL(`./support/${file}`, import.meta.url)), {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

/** Resolves with the first message of `child` that `pick` accepts; rejects if it exits first. */
function nextMessage<T>(child: ChildProcess, pick: (message: unknown) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a bench child exited (${code})`));
    const onMessage = (message: unknown) => {
      const picked = pick(message);
      if (picked === undefined) return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(picked);
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || !child.connected) return resolve();
    child.once("exit", () => resolve());
    child.send({ stop: true });
  });
}

async function startLoadClient(): Promise<LoadClient> {
  const child = forkSupport("load-client.ts");
  await nextMessage(child, (message) => ((message as { ready?: boolean }).ready ? true : undefined));
  let next = 0;
  return {
    async load(request) {
      const id = ++next;
      const answered = nextMessage(child, (message) =>
        (message as LoadAnswer).id === id ? (message as LoadAnswer) : undefined,
      );
      child.send({ ...request, id } satisfies LoadRequest);
      const answer = await answered;
      if ("error" in answer) throw new Error(`load client: ${answer.error}`);
      return answer;
    },
    stop: () => stopChild(child),
  };
}

interface TreeService {
  readonly name: string;
  seed(
    request: Extract<ServiceRequest, { seed: unknown }>["seed"],
  ): Promise<Extract<ServiceAnswer, { seeded: unknown }>["seeded"]>;
  /** The tree's process's CPU time so far, µs. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** The service of the tree at `root` (`support/manifest-service.ts`), in its own process. */
async function startTreeService(name: string, root: string): Promise<TreeService> {
  const child = fork(fileURLToPath(new URL("./support/manifest-service.ts", import.meta.url)), [root], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  await nextMessage(child, (message) => ((message as { ready?: boolean }).ready ? true : undefined));
  let asked = 0;
  return {
    name,
    async seed(seed) {
      const answered = nextMessage(child, (message) =>
        "seeded" in (message as object) || "error" in (message as object)
          ? (message as ServiceAnswer)
          : undefined,
      );
      child.send({ seed } satisfies ServiceRequest);
      const answer = await answered;
      if ("error" in answer) throw new Error(`${name}'s service: ${answer.error}`);
      if (!("seeded" in answer)) throw new Error(`${name}'s service: no seeding answered`);
      return answer.seeded;
    },
    async cpu() {
      const id = ++asked;
      const answered = nextMessage(child, (message) =>
        (message as { cpu?: number }).cpu === id ? (message as { micros: number }).micros : undefined,
      );
      child.send({ cpu: id } satisfies ServiceRequest);
      return answered;
    },
    stop: () => stopChild(child),
  };
}

async function startByteFloor(): Promise<ByteFloor> {
  const child = forkSupport("byte-floor.ts");
  const port = await nextMessage(child, (message) =>
    "port" in (message as FloorAnswer) ? (message as { port: number }).port : undefined,
  );
  let asked = 0;
  return {
    base: `http://127.0.0.1:${port}`,
    async register(name, body) {
      const registered = nextMessage(child, (message) =>
        (message as { registered?: string }).registered === name ? true : undefined,
      );
      child.send({ name, body } satisfies FloorRequest);
      await registered;
    },
    async cpu() {
      const id = ++asked;
      const answered = nextMessage(child, (message) =>
        (message as { cpu?: number }).cpu === id ? (message as { micros: number }).micros : undefined,
      );
      child.send({ cpu: id } satisfies FloorRequest);
      return answered;
    },
    stop: () => stopChild(child),
  };
}

// ---- counting and formatting ---------------------------------------------------------------------

/** This process's CPU time so far (the service and its threads), µs. */
function serviceCpu(): number {
  const used = process.cpuUsage();
  return used.user + used.system;
}

function loadText(): string {
  return loadavg()
    .map((load) => formatNumber(load, 2))
    .join(" / ");
}

function numbersFrom(text: string | undefined): number[] | undefined {
  if (!text) return undefined;
  const numbers = text.split(",").map(Number);
  return numbers.every((n) => Number.isInteger(n) && n > 0) ? numbers : undefined;
}

function plus(a: Usage, b: Usage): Usage {
  const add = (x: ObjectStoreCallCounts, y: ObjectStoreCallCounts): ObjectStoreCallCounts => ({
    get: x.get + y.get,
    put: x.put + y.put,
    delete: x.delete + y.delete,
    list: x.list + y.list,
  });
  const state: Record<string, number> = { ...a.state };
  for (const [method, count] of Object.entries(b.state)) state[method] = (state[method] ?? 0) + count;
  return {
    documents: add(a.documents, b.documents),
    catalog: add(a.catalog, b.catalog),
    state,
    s3: a.s3 + b.s3,
    dynamo: a.dynamo + b.dynamo,
  };
}

function since(now: Usage, before: Usage): Usage {
  const minus = (a: ObjectStoreCallCounts, b: ObjectStoreCallCounts): ObjectStoreCallCounts => ({
    get: a.get - b.get,
    put: a.put - b.put,
    delete: a.delete - b.delete,
    list: a.list - b.list,
  });
  const state: Record<string, number> = {};
  for (const [method, count] of Object.entries(now.state)) {
    const delta = count - (before.state[method] ?? 0);
    if (delta > 0) state[method] = delta;
  }
  return {
    documents: minus(now.documents, before.documents),
    catalog: minus(now.catalog, before.catalog),
    state,
    s3: now.s3 - before.s3,
    dynamo: now.dynamo - before.dynamo,
  };
}

/** Calls per manifest, e.g. `docs 2 LIST · catalog 1 GET` and `3 (getProcess 1, …)`. */
function usageCells(usage: Usage, manifests: number): Pick<Row, "objects" | "s3" | "state" | "dynamo"> {
  const per = (value: number) => {
    const v = value / manifests;
    return Number.isInteger(v) ? String(v) : v.toFixed(2);
  };
  const store = (counts: ObjectStoreCallCounts) => {
    const parts = (["list", "get", "put", "delete"] as const)
      .filter((method) => counts[method] > 0)
      .map((method) => `${per(counts[method])} ${method.toUpperCase()}`);
    return parts.length === 0 ? "0" : parts.join(" + ");
  };
  const methods = Object.entries(usage.state).sort(byString(([method]) => method));
  const calls = methods.reduce((n, [, count]) => n + count, 0);
  return {
    objects: `docs ${store(usage.documents)} · catalog ${store(usage.catalog)}`,
    s3: usage.s3 === 0 ? "–" : per(usage.s3),
    state: `${per(calls)} (${methods.map(([method, count]) => `${method} ${per(count)}`).join(", ")})`,
    dynamo: usage.dynamo === 0 ? "–" : per(usage.dynamo),
  };
}

function emptyRow(): Row {
  return {
    setup: "",
    tools: "",
    measurement: "",
    rate: "",
    median: "",
    p95: "",
    floorRatio: "",
    cpu: "",
    cpuRatio: "",
    healthRatio: "",
    bytes: "",
    objects: "",
    s3: "",
    state: "",
    dynamo: "",
  };
}

runIfMain(import.meta.url, main);
