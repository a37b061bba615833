import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";
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
import { countingStateStore } from "./support/counting";
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

const SIZES = [50, 200, 1_000, 5_000] as const;
/** Requests in flight during a measurement. */
const CONCURRENCY = 10;
const WARMUP_MS = 300;
const MEASURE_MS = 2_500;
const HEALTH_MS = 1_200;
/** Puts in flight while seeding; the seeding is set-up, not a measurement. */
const SEED_CONCURRENCY = 16;
const FAMILY_SIZE = 20;

const TENANT = "bench";
const SECRET = "bench-secret-0123456789abcdef";
const CHAIN = ["openai/gpt-4.1"];
/** openai's bundled maxTools 128 minus the default external reserve of 1. */
const OPENAI_LIMIT = 127;
/** Goals of issue 11: manifest requests/s as a share of health's, by tools in the allow set. */
const GOALS = [
  { tools: 200, ratio: 0.3 },
  { tools: 5_000, ratio: 0.05 },
] as const;
/** Issue 24: the warm manifest of 200 tools as a share of a bare `node:http` serving its bytes. */
const BYTE_FLOOR_GOAL = { tools: 200, ratio: 0.7 } as const;

/** The stores of one set-up, unwrapped; `close` stops what the set-up started. */

interface Usage {
  readonly documents: ObjectStoreCallCounts;
  readonly catalog: ObjectStoreCallCounts;
  readonly state: Readonly<Record<string, number>>;
  readonly s3: number;
  readonly dynamo: number;
}

interface Load {
  readonly requests: number;
  readonly perSecond: number;
  readonly latencies: readonly number[];
}

interface Row {
  readonly setup: string;
  readonly tools: string;
  readonly measurement: string;
  readonly rate: string;
  readonly median: string;
  readonly p95: string;
  readonly ratio: string;
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
  { title: "× health", key: "ratio", right: true },
  { title: "object store/manifest", key: "objects" },
  { title: "S3 HTTP", key: "s3", right: true },
  { title: "state store/manifest", key: "state" },
  { title: "DynamoDB HTTP", key: "dynamo", right: true },
];

export async function main(): Promise<void> {
  console.log(
    `manifest bench: ${SIZES.join(", ")} tools in the allow set under ${CHAIN.join(", ")}; ` +
      `${CONCURRENCY} requests in flight over a local server; node ${process.version}, ${cpus().length} CPUs`,
  );
  const rows: Row[] = [];
  const notes: string[] = [];
  const goals: string[] = [];
  const scripts = await ScriptPool.create();
  try {
    for (const open of [embeddedStores, awsLocalStores]) {
      const stores = await open("manifest");
      try {
        notes.push(...stores.notes);
        await benchStores(stores, scripts, rows, notes, goals);
      } finally {
        await stores.close();
      }
      rows.push(emptyRow());
    }
  } finally {
    await scripts.close();
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

// ---- the two set-ups -----------------------------------------------------------------------------

// ---- one set-up ----------------------------------------------------------------------------------

async function benchStores(
  stores: BenchStores,
  scripts: ScriptPool,
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
  await new Promise((resolve) => server.once("listening", resolve));
  const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
  const http = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
    authorization: `Bearer ${token}`,
  });
  const label = stores.label;
  try {
    const seeded = performance.now();
    const subjects: { size: number; path: string }[] = [];
    for (const size of SIZES) {
      const project = `p${size}`;
      const names = Array.from({ length: size }, (_, i) => toolName(i));
      await mapWithConcurrency(names, SEED_CONCURRENCY, async (name, i) => {
        await services.tools.put(TENANT, project, name, toolDocument(name, i % 4 < 3));
      });
      const spawned = await http.send(
        "POST",
        `/v1/tenants/${TENANT}/projects/${project}/processes`,
        JSON.stringify({ models: CHAIN, allowedToolsAdd: ["@bench"] }),
      );
      if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${spawned.body}`);
      const { processId } = JSON.parse(spawned.body) as { processId: string };
      subjects.push({
        size,
        path: `/v1/tenants/${TENANT}/projects/${project}/processes/${processId}/manifest`,
      });
    }
    notes.push(
      `${label}: seeded ${SIZES.reduce((n, size) => n + size, 0)} tool documents in ${SIZES.length} projects ` +
        `in ${formatMs(performance.now() - seeded)} (ServerToolService.put, ${SEED_CONCURRENCY} in flight)`,
    );

    const measured: {
      size: number;
      load: Load;
      health: Load;
      bytes: Load;
      first: { ms: number; usage: Usage };
      warm: Usage;
    }[] = [];
    for (const { size, path } of subjects) {
      // The first manifest of the process, then warm-ups, health, and the manifest's window.
      const before = usage();
      const started = performance.now();
      const first = await http.send("GET", path);
      const firstMs = performance.now() - started;
      const firstUsage = since(usage(), before);
      if (first.status !== 200) throw new Error(`manifest (${size} tools): ${first.status} ${first.body}`);
      const body = JSON.parse(first.body) as Manifest;
      verifyManifest(body, size);
      notes.push(
        `${label}, ${size} tools: ${body.primary.length} primary / ${body.deferred.length} deferred / ` +
          `${body.demoted.length} demoted, ${formatNumber(first.body.length / 1024, 1)} KiB response`,
      );
      await measure(http, path, WARMUP_MS);
      await measure(http, "/v1/health", WARMUP_MS);
      const health = await measure(http, "/v1/health", HEALTH_MS);
      // The byte floor: a bare node:http server in this process answering the same bytes.
      const floor = await byteFloor(first.body);
      await measure(floor.http, "/", WARMUP_MS);
      const bytes = await measure(floor.http, "/", HEALTH_MS);
      await floor.close();
      const warmBefore = usage();
      const load = await measure(http, path, MEASURE_MS);
      measured.push({
        size,
        load,
        health,
        bytes,
        first: { ms: firstMs, usage: firstUsage },
        warm: since(usage(), warmBefore),
      });
    }

    for (const { size, load, health, bytes, first, warm } of measured) {
      /** A row of this set-up and size; a measured load fills rate, median and p95. */
      const row = (measurement: string, measuredLoad?: Load): Row => ({
        ...emptyRow(),
        setup: label,
        tools: formatNumber(size, 0),
        measurement,
        ...(measuredLoad
          ? {
              rate: formatNumber(measuredLoad.perSecond, 0),
              median: formatMs(median(measuredLoad.latencies)),
              p95: formatMs(percentile(measuredLoad.latencies, 0.95)),
            }
          : {}),
      });
      rows.push(row("GET /v1/health", health));
      rows.push(row("bare node:http, same bytes", bytes));
      rows.push({ ...row("first manifest"), median: formatMs(first.ms), ...usageCells(first.usage, 1) });
      rows.push({
        ...row("warm manifest", load),
        ratio: `${formatNumber(load.perSecond / health.perSecond, 3)}×`,
        ...usageCells(warm, load.requests),
      });
    }
    for (const goal of GOALS) {
      const { load, health } = measured.find((entry) => entry.size === goal.tools)!;
      const ratio = load.perSecond / health.perSecond;
      goals.push(
        `${label}: warm manifest of ${formatNumber(goal.tools, 0)} tools ${formatNumber(ratio, 3)}× health ` +
          `(${formatNumber(load.perSecond, 0)} / ${formatNumber(health.perSecond, 0)} req/s), goal ≥ ${goal.ratio}×: ` +
          `${ratio >= goal.ratio ? "met" : "MISSED"}`,
      );
    }
    const floorCase = measured.find((entry) => entry.size === BYTE_FLOOR_GOAL.tools)!;
    const floorRatio = floorCase.load.perSecond / floorCase.bytes.perSecond;
    goals.push(
      `${label}: warm manifest of ${BYTE_FLOOR_GOAL.tools} tools ${formatNumber(floorRatio, 3)}× a bare node:http ` +
        `serving its bytes (${formatNumber(floorCase.load.perSecond, 0)} / ${formatNumber(floorCase.bytes.perSecond, 0)} req/s), ` +
        `goal ≥ ${BYTE_FLOOR_GOAL.ratio}×: ${floorRatio >= BYTE_FLOOR_GOAL.ratio ? "met" : "MISSED"}`,
    );
  } finally {
    http.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A bare `node:http` server on 127.0.0.1 answering every request with `body` as JSON, and a client of it. */
async function byteFloor(body: string): Promise<{ http: HttpClient; close(): Promise<void> }> {
  const bytes = Buffer.from(body, "utf8");
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json", "content-length": bytes.length });
    response.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const http = httpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {});
  return {
    http,
    close: async () => {
      http.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
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

// ---- load ----------------------------------------------------------------------------------------

interface HttpClient {
  send(method: string, path: string, body?: string): Promise<{ status: number; body: string }>;
  close(): void;
}

/** node:http with one keep-alive socket per request in flight: less client overhead than fetch. */
function httpClient(base: string, headers: Readonly<Record<string, string>>): HttpClient {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  return {
    send(method, path, body) {
      return new Promise((resolve, reject) => {
        const req = request(
          `${base}${path}`,
          {
            method,
            agent,
            headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
            );
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}

/** `CONCURRENCY` loops of `GET path` for `ms`; every answer must be a 200. */
async function measure(http: HttpClient, path: string, ms: number): Promise<Load> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + ms;
  const loop = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const res = await http.send("GET", path);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body.slice(0, 200)}`);
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const elapsed = performance.now() - started;
  return { requests: latencies.length, perSecond: (latencies.length / elapsed) * 1000, latencies };
}

// ---- counting and formatting ---------------------------------------------------------------------

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
    ratio: "",
    objects: "",
    s3: "",
    state: "",
    dynamo: "",
  };
}

runIfMain(import.meta.url, main);
