/**
 * Bench: DocumentCascade + ServerToolService over the filesystem store and over S3 (s3rver).
 *
 * For each store it writes 200 project tools and a few `_tenant` tools through
 * `ServerToolService.put`, then measures
 * - warm lookups of a project tool and of a tenant tool (sequential; two conditional GETs each),
 * - `listAll` cold (fresh cascade and service over the same store: LIST pages + one GET per tool)
 *   and warm (same service again: LIST pages only), side by side in each repetition.
 *
 * Run: `npx tsx bench/cascade.ts` or `npm run bench -- cascade`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { FsObjectStore, loadBundledDocuments } from "@vance/adapters";
import { createS3Client, S3ObjectStore } from "@vance/adapters/aws";
import { CountingObjectStore, type ObjectStoreCallCounts } from "@vance/adapters/testing";
import {
  type BundledDocuments,
  builtInToolTypes,
  DocumentCascade,
  loadLazyEngines,
  mapWithConcurrency,
  ServerToolService,
  TENANT_PROJECT,
  ToolTypeRegistry,
  whoami,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { type RunningS3rver, S3RVER_CREDENTIALS, startS3rver } from "../test/support/s3rver";
import { type Column, formatMs, formatNumber, median, renderTable, runIfMain } from "./support/report";

const TENANT = "bench";
const PROJECT = "proj";
const PROJECT_TOOLS = 200;
const TENANT_TOOLS = 5;
/** Concurrent puts while seeding; the seeding is set-up, not a measurement. */
const SEED_CONCURRENCY = 8;

/** Sequential measurements: this many batches, each stopping at whichever limit it reaches first. */
const BATCHES = 5;
const BATCH_MS = 400;
const WARMUP_CALLS = 50;
const LOOKUP_BATCH_CALLS = 400;
const RAW_BATCH_CALLS = 200;

/** listAll: this many (cold, warm) pairs after one unmeasured warm-up pair. */
const LIST_PAIRS = 5;
/** Warm listAll calls per pair; the pair's warm time is their median. */
const WARM_CALLS_PER_PAIR = 5;

interface Subject {
  readonly label: string;
  readonly counting: CountingObjectStore;
  /** HTTP requests sent so far, when the store speaks HTTP. */
  readonly httpRequests?: () => number;
}

interface Row {
  readonly store: string;
  readonly measurement: string;
  readonly samples: string;
  readonly median: string;
  readonly range: string;
  readonly rate: string;
  readonly calls: string;
  readonly http: string;
}

interface Usage {
  readonly counts: ObjectStoreCallCounts;
  readonly http: number | undefined;
}

const COLUMNS: readonly (Column & { readonly key: keyof Row })[] = [
  { title: "store", key: "store" },
  { title: "measurement", key: "measurement" },
  { title: "samples", key: "samples", right: true },
  { title: "median", key: "median", right: true },
  { title: "min – max", key: "range", right: true },
  { title: "rate", key: "rate", right: true },
  { title: "store calls/op", key: "calls" },
  { title: "S3 requests/op", key: "http", right: true },
];

export async function main(): Promise<void> {
  await loadLazyEngines();
  console.log(
    `cascade bench: ${PROJECT_TOOLS} project tools + ${TENANT_TOOLS} _tenant tools per store; ` +
      `node ${process.version}, ${cpus().length} CPUs`,
  );
  const bundled = loadBundledDocuments(DEFAULTS_DIR);
  const rows: Row[] = [];
  const notes: string[] = [];

  const fsDir = await mkdtemp(join(tmpdir(), "vance-bench-fs-"));
  let s3rver: RunningS3rver | undefined;
  let client: ReturnType<typeof createS3Client> | undefined;
  try {
    const fsSubject: Subject = { label: "fs", counting: new CountingObjectStore(new FsObjectStore(fsDir)) };
    rows.push(...(await benchStore(fsSubject, bundled, notes)));

    const started = performance.now();
    s3rver = await startS3rver();
    notes.push(`s3: s3rver (pid ${s3rver.pid}) ready in ${formatMs(performance.now() - started)}`);
    client = createS3Client({
      endpoint: s3rver.endpoint,
      region: "us-east-1",
      credentials: S3RVER_CREDENTIALS,
      forcePathStyle: true,
    });
    const s3 = new S3ObjectStore({ client, bucket: s3rver.bucket, prefix: `bench-${process.pid}` });
    const s3Subject: Subject = {
      label: "s3",
      counting: new CountingObjectStore(s3),
      httpRequests: () => s3.requestCount,
    };
    rows.push(...(await benchStore(s3Subject, bundled, notes)));
  } finally {
    client?.destroy();
    await s3rver?.stop();
    await rm(fsDir, { recursive: true, force: true });
  }

  console.log("");
  console.log(renderTable(COLUMNS, tableRows(rows)));
  console.log("");
  for (const note of notes) console.log(`  ${note}`);
}

async function benchStore(subject: Subject, bundled: BundledDocuments, notes: string[]): Promise<Row[]> {
  const { label } = subject;
  const rows: Row[] = [];

  // Seed through the service, as the API would.
  const seeded = performance.now();
  const writer = services(subject, bundled);
  const writes = [
    ...Array.from({ length: PROJECT_TOOLS }, (_, i) => ({ project: PROJECT, name: projectToolName(i) })),
    ...Array.from({ length: TENANT_TOOLS }, (_, i) => ({ project: TENANT_PROJECT, name: tenantToolName(i) })),
  ];
  await mapWithConcurrency(writes, SEED_CONCURRENCY, async ({ project, name }) => {
    await writer.put(TENANT, project, name, toolDocument(name));
  });
  notes.push(
    `${label}: seeded ${writes.length} tool documents in ${formatMs(performance.now() - seeded)} ` +
      `(ServerToolService.put, ${SEED_CONCURRENCY} in flight)`,
  );

  // Warm lookups on the writer's service: its cascade already holds the bodies, so each
  // lookup is two conditional GETs (project + _tenant) answered "not modified" or "absent".
  rows.push(
    await benchLookup(subject, writer, projectToolName(PROJECT_TOOLS / 2), "project"),
    await benchLookup(subject, writer, tenantToolName(0), "tenant"),
  );
  rows.push(...(await benchRawCalls(subject)));

  // listAll: cold on a fresh service, then warm on the same one, side by side.
  const expected = (await (await writer.snapshot(TENANT, PROJECT)).tools()).length;
  const cold: number[] = [];
  const warm: number[] = [];
  const ratios: number[] = [];
  let coldUsage: Usage | undefined;
  let warmUsage: Usage | undefined;
  for (let pair = -1; pair < LIST_PAIRS; pair++) {
    const fresh = services(subject, bundled);
    const coldRun = await timedListAll(subject, fresh, expected);
    const warmRuns: number[] = [];
    let lastWarm: Usage | undefined;
    for (let i = 0; i < WARM_CALLS_PER_PAIR; i++) {
      const run = await timedListAll(subject, fresh, expected);
      warmRuns.push(run.ms);
      lastWarm = run.usage;
    }
    if (pair < 0) continue; // warm-up pair: JIT, sockets, page cache
    const warmMs = median(warmRuns);
    cold.push(coldRun.ms);
    warm.push(warmMs);
    ratios.push(coldRun.ms / warmMs);
    coldUsage = coldRun.usage;
    warmUsage = lastWarm;
  }
  rows.push(
    {
      store: label,
      measurement: `listAll cold (${expected} tools, fresh service)`,
      samples: `${LIST_PAIRS}`,
      median: formatMs(median(cold)),
      range: formatRange(cold, formatMs),
      rate: `${formatNumber(1000 / median(cold), 1)} /s`,
      calls: formatCalls(coldUsage!.counts, 1),
      http: formatHttp(coldUsage!.http, 1),
    },
    {
      store: label,
      measurement: "listAll warm (same service)",
      samples: `${LIST_PAIRS}×${WARM_CALLS_PER_PAIR}`,
      median: formatMs(median(warm)),
      range: formatRange(warm, formatMs),
      rate: `${formatNumber(1000 / median(warm), 1)} /s`,
      calls: formatCalls(warmUsage!.counts, 1),
      http: formatHttp(warmUsage!.http, 1),
    },
    {
      store: label,
      measurement: "listAll cold / warm (per pair)",
      samples: `${LIST_PAIRS}`,
      median: `${formatNumber(median(ratios), 1)}×`,
      range: formatRange(ratios, (value) => `${formatNumber(value, 1)}×`),
      rate: "",
      calls: "",
      http: "",
    },
  );
  return rows;
}

async function benchLookup(
  subject: Subject,
  service: ServerToolService,
  name: string,
  layer: "project" | "tenant",
): Promise<Row> {
  return benchSequential(subject, `lookup ${layer} tool (warm, sequential)`, LOOKUP_BATCH_CALLS, async () => {
    const found = await (await service.snapshot(TENANT, PROJECT)).lookup(name);
    if (found.status !== "found" || found.tool.layer !== layer) {
      throw new Error(`lookup ${name}: expected a ${layer} hit, got ${JSON.stringify(found)}`);
    }
  });
}

/** Single store calls, sequential, so a lookup's cost can be read against one round trip. */
async function benchRawCalls(subject: Subject): Promise<Row[]> {
  const store = subject.counting;
  const key = DocumentCascade.key(TENANT, PROJECT, "server-tools/tool_000.yaml");
  const missing = DocumentCascade.key(TENANT, PROJECT, "server-tools/absent.yaml");
  const current = await store.get(key);
  if (current === null || "notModified" in current) throw new Error(`${key} is missing`);
  const listPrefix = `${TENANT}/${PROJECT}/server-tools/`;
  return [
    await benchSequential(subject, "store GET 304 (If-None-Match)", RAW_BATCH_CALLS, async () => {
      const result = await store.get(key, { ifNoneMatch: current.etag });
      if (result === null || !("notModified" in result)) throw new Error("expected 304");
    }),
    await benchSequential(subject, "store GET 404 (absent key)", RAW_BATCH_CALLS, async () => {
      if ((await store.get(missing)) !== null) throw new Error("expected 404");
    }),
    await benchSequential(subject, `store LIST page (${PROJECT_TOOLS} keys)`, RAW_BATCH_CALLS, async () => {
      const page = await store.list(listPrefix);
      if (page.items.length !== PROJECT_TOOLS) throw new Error(`LIST gave ${page.items.length} keys`);
    }),
  ];
}

/** Runs `call` sequentially in batches (each capped by calls and time); median of the batches' time per call. */
async function benchSequential(
  subject: Subject,
  measurement: string,
  batchCalls: number,
  call: () => Promise<void>,
): Promise<Row> {
  for (let i = 0; i < WARMUP_CALLS; i++) await call();
  const before = usage(subject);
  const perCall: number[] = [];
  let calls = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    let n = 0;
    const started = performance.now();
    let elapsed = 0;
    while (n < batchCalls && elapsed < BATCH_MS) {
      await call();
      n++;
      elapsed = performance.now() - started;
    }
    perCall.push(elapsed / n);
    calls += n;
  }
  const used = since(subject, before);
  const medianMs = median(perCall);
  return {
    store: subject.label,
    measurement,
    samples: `${BATCHES}×≤${batchCalls}`,
    median: formatMs(medianMs),
    range: formatRange(perCall, formatMs),
    rate: `${formatNumber(1000 / medianMs, 0)} /s`,
    calls: formatCalls(used.counts, calls),
    http: formatHttp(used.http, calls),
  };
}

async function timedListAll(
  subject: Subject,
  service: ServerToolService,
  expected: number,
): Promise<{ ms: number; usage: Usage }> {
  const before = usage(subject);
  const started = performance.now();
  const tools = await (await service.snapshot(TENANT, PROJECT)).tools();
  const ms = performance.now() - started;
  if (tools.length !== expected)
    throw new Error(`listAll returned ${tools.length} tools, expected ${expected}`);
  return { ms, usage: since(subject, before) };
}

function services(subject: Subject, bundled: BundledDocuments): ServerToolService {
  const cascade = new DocumentCascade(subject.counting, bundled);
  return new ServerToolService(cascade, new ToolTypeRegistry(builtInToolTypes()), [whoami]);
}

function usage(subject: Subject): Usage {
  return { counts: subject.counting.counts, http: subject.httpRequests?.() };
}

function since(subject: Subject, before: Usage): Usage {
  const now = usage(subject);
  return {
    counts: {
      get: now.counts.get - before.counts.get,
      put: now.counts.put - before.counts.put,
      delete: now.counts.delete - before.counts.delete,
      list: now.counts.list - before.counts.list,
    },
    http: now.http === undefined || before.http === undefined ? undefined : now.http - before.http,
  };
}

function projectToolName(i: number): string {
  return `tool_${String(i).padStart(3, "0")}`;
}

function tenantToolName(i: number): string {
  return `shared_${i}`;
}

function toolDocument(name: string): string {
  return [
    "type: doc_lookup",
    `description: Bench tool ${name}; looks up a document of the cascade.`,
    "labels: [bench]",
    "parameters:",
    "  path: documents/getting_started.md",
    "",
  ].join("\n");
}

// ---- formatting -------------------------------------------------------------------------------

function formatRange(values: readonly number[], format: (value: number) => string): string {
  return `${format(Math.min(...values))} – ${format(Math.max(...values))}`;
}

/** Store calls per operation, e.g. `2 GET` or `205 GET + 2 LIST`. */
function formatCalls(counts: ObjectStoreCallCounts, operations: number): string {
  const parts = (["get", "list", "put", "delete"] as const)
    .filter((method) => counts[method] > 0 || method === "get")
    .map((method) => `${trimmed(counts[method] / operations)} ${method.toUpperCase()}`);
  return parts.join(" + ");
}

function formatHttp(requests: number | undefined, operations: number): string {
  return requests === undefined ? "–" : trimmed(requests / operations);
}

function trimmed(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** The table's cells, a blank line between stores. */
function tableRows(rows: readonly Row[]): string[][] {
  const out: string[][] = [];
  for (const [i, row] of rows.entries()) {
    if (i > 0 && row.store !== rows[i - 1]!.store) out.push([]);
    out.push(COLUMNS.map((column) => row[column.key]));
  }
  return out;
}

runIfMain(import.meta.url, main);
