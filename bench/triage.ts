/**
 * Bench: tool classification and budget triage (spec §13, §14.2) for a 340-tool process.
 *
 * 1. `classifyTools` alone — a pure function that runs on every manifest — for 340 tools
 *    (configured families, pack sub-tools, client tools, the mandatory floor, activations,
 *    recipe hints by name and by `doc_*`-style pattern) with no limit, a limit of 127 (the
 *    bundled openai maxTools 128 minus the reserve) and a limit of 63. Goal: well under 1 ms.
 * 2. The whole `GET …/processes/{id}/manifest` on the embedded default (FsObjectStore documents,
 *    SQLite state, temp data dir) through `app.request`, for the same process shape under
 *    `openai/gpt-4.1` (demotions happen) and `anthropic/claude` (no limit), with the store calls
 *    one manifest costs.
 *
 * Run: `npx tsx bench/triage.ts` or `npm run bench -- triage`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { FsObjectStore, loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { CountingObjectStore, type ObjectStoreCallCounts } from "@vance/adapters/testing";
import {
  byString,
  CAPABILITY_FLOOR,
  type Classification,
  type ClassificationInput,
  classifyTools,
  type Logger,
  type Manifest,
  type SurfaceTool,
  silentLogger,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
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

const TOTAL_TOOLS = 340;

/** classifyTools: unmeasured warm-up calls per scenario, then rounds of timed calls (scenarios interleaved). */
const CLASSIFY_WARMUP = 2_000;
const CLASSIFY_ROUNDS = 10;
const CLASSIFY_PER_ROUND = 600;

/** Manifests: unmeasured warm-up requests per chain, then timed requests, the two chains alternating. */
const MANIFEST_WARMUP = 40;
const MANIFEST_REQUESTS = 300;

const TENANT = "bench";
const PROJECT = "proj";
const SECRET = "bench-secret-0123456789abcdef";
const OPENAI_CHAIN = ["openai/gpt-4.1"];
const ANTHROPIC_CHAIN = ["anthropic/claude"];
/** openai's bundled maxTools 128 minus the default external reserve of 1. */
const OPENAI_LIMIT = 127;

/** Twelve packs, 260 sub-tools; the first four are primary and not deferred by default. */
const PACKS: readonly { name: string; size: number; eager: boolean }[] = [
  { name: "gmail", size: 24, eager: true },
  { name: "jira", size: 28, eager: true },
  { name: "github", size: 30, eager: true },
  { name: "slack", size: 20, eager: true },
  { name: "drive", size: 18, eager: false },
  { name: "notion", size: 22, eager: false },
  { name: "linear", size: 18, eager: false },
  { name: "confluence", size: 22, eager: false },
  { name: "salesforce", size: 26, eager: false },
  { name: "zendesk", size: 16, eager: false },
  { name: "hubspot", size: 20, eager: false },
  { name: "figma", size: 16, eager: false },
];

const OPS = [
  "get",
  "list",
  "search",
  "create",
  "update",
  "delete",
  "comment",
  "attach",
  "export",
  "import",
  "share",
  "move",
  "archive",
  "restore",
  "watch",
  "label",
];

interface Row {
  readonly measurement: string;
  readonly limit: string;
  readonly buckets: string;
  readonly samples: string;
  readonly median: string;
  readonly p95: string;
  readonly calls: string;
}

const COLUMNS: readonly (Column & { readonly key: keyof Row })[] = [
  { title: "measurement", key: "measurement" },
  { title: "limit", key: "limit", right: true },
  { title: "primary / deferred / demoted", key: "buckets", right: true },
  { title: "samples", key: "samples", right: true },
  { title: "median", key: "median", right: true },
  { title: "p95", key: "p95", right: true },
  { title: "store calls per manifest", key: "calls" },
];

export async function main(): Promise<void> {
  console.log(
    `triage bench: ${TOTAL_TOOLS} tools per process; node ${process.version}, ${cpus().length} CPUs`,
  );
  const rows: Row[] = [];
  const notes: string[] = [];

  const started = performance.now();
  const classifyMedians = benchClassify(rows, notes);
  const classified = performance.now();
  rows.push(separator());
  await benchManifest(rows, notes, classifyMedians);
  notes.push(
    `phases: classifyTools ${formatMs(classified - started)}, manifest (set-up, requests, clean-up) ` +
      `${formatMs(performance.now() - classified)}`,
  );

  console.log("");
  console.log(
    renderTable(
      COLUMNS,
      rows.map((row) => COLUMNS.map((column) => row[column.key])),
    ),
  );
  console.log("");
  for (const note of notes) console.log(`  ${note}`);
}

// ---- 1. classifyTools alone ---------------------------------------------------------------------

/** Returns the median per scenario (ms), keyed by limit label. */
function benchClassify(rows: Row[], notes: string[]): Map<string, number> {
  const base = classificationInput();
  if (base.tools.length !== TOTAL_TOOLS)
    throw new Error(`built ${base.tools.length} tools, not ${TOTAL_TOOLS}`);
  const scenarios = [
    { label: "none", input: { ...base, limit: null } },
    { label: "127", input: { ...base, limit: 127 } },
    { label: "63", input: { ...base, limit: 63 } },
  ];

  // Full check once per scenario, so the bench cannot silently measure a no-op.
  const shapes = scenarios.map(({ label, input }) => {
    const result = classifyTools(input);
    verifyClassification(result, input, label);
    return result;
  });

  const samples = scenarios.map(() => [] as number[]);
  let sink = 0;
  const runOne = (index: number, timed: boolean) => {
    const { input } = scenarios[index]!;
    const started = performance.now();
    const result = classifyTools(input);
    const ms = performance.now() - started;
    // Cheap per-call check, outside the timed window.
    if (input.limit !== null && result.primary.length > input.limit)
      throw new Error("primary exceeds the limit");
    if (result.primary.length + result.deferred.length !== TOTAL_TOOLS) throw new Error("tools lost");
    sink += result.primary.length;
    if (timed) samples[index]!.push(ms);
  };
  for (let i = 0; i < CLASSIFY_WARMUP; i++) for (let s = 0; s < scenarios.length; s++) runOne(s, false);
  for (let round = 0; round < CLASSIFY_ROUNDS; round++) {
    for (let s = 0; s < scenarios.length; s++) {
      for (let i = 0; i < CLASSIFY_PER_ROUND; i++) runOne(s, true);
    }
  }
  if (sink === 0) throw new Error("no classification ran");

  const medians = new Map<string, number>();
  for (const [index, { label }] of scenarios.entries()) {
    const times = samples[index]!;
    const shape = shapes[index]!;
    medians.set(label, median(times));
    rows.push({
      measurement: "classifyTools (pure)",
      limit: label,
      buckets: formatBuckets(shape),
      samples: String(times.length),
      median: formatMs(median(times)),
      p95: formatMs(percentile(times, 0.95)),
      calls: "–",
    });
  }
  const worst = Math.max(...scenarios.map((_, i) => percentile(samples[i]!, 0.95)));
  notes.push(
    `classifyTools: ${base.tools.length} tools (60 configured in 9 families, 260 sub-tools of 12 packs ` +
      `(4 eager, 8 deferred by default), 18 client tools, the 2 mandatory), ${base.activated.size} activated, ` +
      `${base.demand.size} demand counters; hints: add ${base.hints.allowedToolsAdd.length} names, ` +
      `keep ${JSON.stringify(base.hints.allowedToolsKeep)}, defer ${JSON.stringify(base.hints.allowedToolsDefer)}, ` +
      `dropFirst ${JSON.stringify(base.hints.allowedToolsDropFirst)}`,
    `classifyTools: worst p95 ${formatMs(worst)} against the 1 ms goal (${worst < 1 ? "met" : "MISSED"}); ` +
      "a demoting manifest classifies once and reads the demand counters only for the triage",
    ...scenarios.flatMap(({ label }, i) =>
      shapes[i]!.demotedUnits.length === 0
        ? []
        : [
            `classifyTools limit ${label}: demoted ${shapes[i]!.demotedUnits.map(
              (unit) => `${unit.family}(${unit.triageClass}, ${unit.tools})`,
            ).join(" ")}`,
          ],
    ),
  );
  return medians;
}

function classificationInput(): ClassificationInput & { readonly activated: Map<string, number> } {
  const tools: SurfaceTool[] = [];
  const schema = (name: string) => ({
    type: "object",
    properties: { query: { type: "string", description: `Input of ${name}` }, limit: { type: "integer" } },
    required: ["query"],
    additionalProperties: false,
  });
  const families: readonly [string, number][] = [
    ["doc", 10],
    ["file", 8],
    ["exec", 6],
    ["web", 6],
    ["search", 6],
    ["calendar", 6],
    ["db", 6],
    ["note", 6],
    ["git", 6],
  ];
  const nonPrimary: string[] = [];
  for (const [family, size] of families) {
    for (let i = 0; i < size; i++) {
      const name = `${family}_${OPS[i]}`;
      const primary = i < Math.ceil(size * 0.6);
      if (!primary) nonPrimary.push(name);
      tools.push({
        name,
        description: `${family}: ${OPS[i]} (configured)`,
        inputSchema: schema(name),
        origin: "configured",
        primary,
        defaultDeferred: false,
      });
    }
  }
  for (const pack of PACKS) {
    for (let i = 0; i < pack.size; i++) {
      const name = packToolName(pack.name, i);
      tools.push({
        name,
        description: `${pack.name}: ${name}`,
        inputSchema: schema(name),
        origin: "configured",
        primary: pack.eager,
        defaultDeferred: !pack.eager,
        packHint: `${pack.name}: the ${pack.name} MCP server`,
      });
    }
  }
  for (const family of ["ui", "editor", "term"]) {
    for (let i = 0; i < 6; i++) {
      const name = `${family}_${OPS[i]}`;
      tools.push({
        name,
        description: `${family}: ${OPS[i]} (client)`,
        inputSchema: schema(name),
        origin: "client",
        primary: true,
        defaultDeferred: false,
      });
    }
  }
  for (const name of CAPABILITY_FLOOR) {
    tools.push({
      name,
      description: name,
      inputSchema: schema(name),
      origin: "builtin",
      primary: true,
      defaultDeferred: false,
    });
  }

  const now = 1_700_000_000_000;
  const activated = new Map<string, number>();
  for (let i = 0; i < 6; i++) activated.set(packToolName("confluence", i), now - i * 60_000);
  for (const name of nonPrimary.slice(0, 4)) activated.set(name, now - 10 * 60_000);

  // Deterministic demand: a spread of usage counts over a third of the tools.
  const demand = new Map<string, number>();
  for (const [index, tool] of tools.entries()) {
    if (index % 3 === 0) demand.set(tool.name, (index * 7919) % 97);
  }

  return {
    tools,
    hints: {
      allowedToolsAdd: nonPrimary.slice(4, 7),
      allowedToolsKeep: ["doc_*", packToolName("jira", 0), packToolName("notion", 1)],
      allowedToolsDefer: ["exec_*"],
      allowedToolsDropFirst: ["web_*", "slack__*"],
    },
    activated,
    demand,
    limit: null,
  };
}

function verifyClassification(result: Classification, input: ClassificationInput, label: string): void {
  const fail = (why: string) => {
    throw new Error(`classifyTools (limit ${label}): ${why}`);
  };
  const primary = new Set(result.primary);
  if (input.limit !== null && primary.size > input.limit)
    fail(`${primary.size} primary > limit ${input.limit}`);
  for (const name of CAPABILITY_FLOOR) if (!primary.has(name)) fail(`${name} is not primary`);
  if (result.deferred.some((name) => primary.has(name))) fail("a tool is both primary and deferred");
  if (primary.size + result.deferred.length !== input.tools.length) fail("primary + deferred ≠ all tools");
  if (input.limit === null && result.demoted.length > 0) fail("demotions without a limit");
  if (input.limit !== null && result.demoted.length === 0) fail("no demotions: the limit does not bite");
  if (primary.size < 20) fail(`only ${primary.size} primary: the input is not realistic`);
}

// ---- 2. the whole manifest request ---------------------------------------------------------------

interface Usage {
  readonly documents: ObjectStoreCallCounts;
  readonly catalog: ObjectStoreCallCounts;
  readonly state: Record<string, number>;
  /** Log lines, by level. */
  readonly logs: { readonly info: number; readonly warn: number };
}

async function benchManifest(
  rows: Row[],
  notes: string[],
  classifyMedians: Map<string, number>,
): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "vance-bench-triage-"));
  const documents = new CountingObjectStore(new FsObjectStore(join(dataDir, "documents")));
  const catalog = new CountingObjectStore(new FsObjectStore(join(dataDir, "catalog")));
  const sqlite = new SqliteStateStore(join(dataDir, "state.sqlite"));
  const state = countingStateStore(sqlite);
  const logs = { info: 0, warn: 0 };
  /** The families of the last `budget.demoted` log line, keyed by process id. */
  const demotedFamilies = new Map<string, unknown>();
  const logger: Logger = {
    info(event, fields) {
      logs.info++;
      if (event === "budget.demoted" && fields)
        demotedFamilies.set(String(fields.processId), fields.families);
    },
    warn() {
      logs.warn++;
    },
  };
  const scripts = await ScriptPool.create();
  // As `npm start` does: compile catalog.json first, so a manifest reads the catalog with one GET.
  await syncCatalog({ store: catalog, bundled: loadBundledCatalog(DEFAULTS_DIR), logger: silentLogger });
  try {
    const services = await buildServices(loadConfig({ VANCE_DATA_DIR: dataDir }), SECRET, {
      documents,
      catalog,
      state: state.store,
      logger,
      scripts,
      env: {},
    });
    const app = createApp(services);
    const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
    const base = `/v1/tenants/${TENANT}/projects/${PROJECT}`;
    const request = async (method: string, path: string, body?: string, contentType = "application/json") => {
      const res = await app.request(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": contentType }),
        },
        ...(body === undefined ? {} : { body }),
      });
      return { status: res.status, text: await res.text() };
    };

    // 40 tool documents through the API.
    const configured = configuredToolNames();
    for (const { name, primary } of configured) {
      const put = await request("PUT", `/tools/${name}`, toolDocument(name, primary), "application/yaml");
      if (put.status >= 300) throw new Error(`PUT ${name}: ${put.status} ${put.text}`);
    }
    const nonPrimary = configured.filter((tool) => !tool.primary).map((tool) => tool.name);
    const clientTools = clientToolDeclarations();
    const spawnBody = (models: readonly string[]) =>
      JSON.stringify({
        models,
        allowedToolsAdd: ["@bench", ...nonPrimary.filter((name) => name.startsWith("db_"))],
        allowedToolsKeep: ["doc_*", packToolName("jira", 0)],
        allowedToolsDefer: ["exec_*"],
        allowedToolsDropFirst: ["web_*"],
        clientTools,
      });
    const spawnBytes = spawnBody(OPENAI_CHAIN).length;

    const spawn = async (models: readonly string[]) => {
      const res = await request("POST", "/processes", spawnBody(models));
      if (res.status !== 201) throw new Error(`spawn: ${res.status} ${res.text}`);
      const { processId } = JSON.parse(res.text) as { processId: string };
      // Activate a few deferred tools, as an engine's tool_description call would.
      const activate = nonPrimary.filter((name) => name.startsWith("file_") || name.startsWith("note_"));
      const described = await request(
        "POST",
        `/processes/${processId}/invoke`,
        JSON.stringify({ name: "tool_description", params: { names: activate } }),
      );
      if (described.status !== 200)
        throw new Error(`tool_description: ${described.status} ${described.text}`);
      return { processId, activated: activate.length };
    };

    const chains = [
      { label: "openai/gpt-4.1", models: OPENAI_CHAIN, expectLimit: OPENAI_LIMIT },
      { label: "anthropic/claude", models: ANTHROPIC_CHAIN, expectLimit: null },
    ] as const;
    const processes: { label: string; expectLimit: number | null; processId: string; activated: number }[] =
      [];
    for (const chain of chains) processes.push({ ...chain, ...(await spawn(chain.models)) });

    const snapshot = (): Usage => ({
      documents: documents.counts,
      catalog: catalog.counts,
      state: { ...state.counts },
      logs: { ...logs },
    });
    const manifest = async (index: number) => {
      const subject = processes[index]!;
      const before = snapshot();
      const started = performance.now();
      const res = await request("GET", `/processes/${subject.processId}/manifest`);
      const ms = performance.now() - started;
      const usage = since(snapshot(), before);
      if (res.status !== 200) throw new Error(`manifest ${subject.label}: ${res.status} ${res.text}`);
      const body = JSON.parse(res.text) as Manifest;
      verifyManifest(body, subject.expectLimit, subject.label);
      return { ms, usage, body, bytes: res.text.length };
    };

    // The first manifest of each process (cold caches), then warm-up, then the timed alternation.
    const first = [await manifest(0), await manifest(1)];
    for (let i = 0; i < MANIFEST_WARMUP; i++) for (let p = 0; p < processes.length; p++) await manifest(p);
    const times = processes.map(() => [] as number[]);
    const totals = processes.map(() => emptyUsage());
    const last: { body: Manifest; bytes: number }[] = [];
    for (let i = 0; i < MANIFEST_REQUESTS; i++) {
      for (let p = 0; p < processes.length; p++) {
        const run = await manifest(p);
        times[p]!.push(run.ms);
        totals[p] = add(totals[p]!, run.usage);
        last[p] = { body: run.body, bytes: run.bytes };
      }
    }

    for (const [p, subject] of processes.entries()) {
      const { body, bytes } = last[p]!;
      rows.push({
        measurement: `GET manifest, ${subject.label}`,
        limit: body.budget.limit === null ? "none" : String(body.budget.limit),
        buckets: formatBuckets(body),
        samples: String(times[p]!.length),
        median: formatMs(median(times[p]!)),
        p95: formatMs(percentile(times[p]!, 0.95)),
        calls: formatUsage(totals[p]!, MANIFEST_REQUESTS),
      });
      const families = demotedFamilies.get(subject.processId) as
        | { family: string; triageClass: string; tools: number }[]
        | undefined;
      if (families)
        notes.push(
          `manifest ${subject.label}: demoted ${families.map((u) => `${u.family}(${u.triageClass}, ${u.tools})`).join(" ")}`,
        );
      notes.push(
        `manifest ${subject.label}: ${formatKb(bytes)} response, ${body.tools.length} tools in the array; ` +
          `first manifest of the process ${formatMs(first[p]!.ms)}, ${formatUsage(first[p]!.usage, 1)}`,
      );
    }
    const [openaiTimes, anthropicTimes] = times as [number[], number[]];
    rows.push({
      measurement: "GET manifest, openai / anthropic",
      limit: "",
      buckets: "",
      samples: "",
      median: `${formatNumber(median(openaiTimes) / median(anthropicTimes), 2)}×`,
      p95: `${formatNumber(percentile(openaiTimes, 0.95) / percentile(anthropicTimes, 0.95), 2)}×`,
      calls: "",
    });
    const share = (label: string, times_: number[]) =>
      `${formatNumber((100 * classifyMedians.get(label)!) / median(times_), 1)} %`;
    notes.push(
      `manifest setup: ${configured.length} tool documents (PUT …/tools, ${configured.filter((t) => t.primary).length} primary) ` +
        `+ ${clientTools.length} clientTools (${PACKS.reduce((n, pack) => n + pack.size, 0)} pack sub-tools) ` +
        `+ the 2 mandatory = ${TOTAL_TOOLS}; spawn body ${formatKb(spawnBytes)}; ` +
        `${processes[0]!.activated} tools activated by tool_description per process`,
      `manifest: classifyTools' median is ~${share("127", openaiTimes)} of the openai manifest ` +
        `and ~${share("none", anthropicTimes)} of the anthropic one`,
      "store calls per manifest: documents and catalog are CountingObjectStore over FsObjectStore; " +
        "state is SqliteStateStore behind a counting proxy; 'log' counts logger lines",
    );
  } finally {
    await scripts.close();
    sqlite.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function verifyManifest(body: Manifest, expectLimit: number | null, label: string): void {
  const fail = (why: string) => {
    throw new Error(`manifest ${label}: ${why}`);
  };
  if (body.budget.limit !== expectLimit) fail(`budget limit ${body.budget.limit}, expected ${expectLimit}`);
  if (body.primary.length + body.deferred.length !== TOTAL_TOOLS)
    fail(`${body.primary.length} primary + ${body.deferred.length} deferred ≠ ${TOTAL_TOOLS}`);
  if (body.tools.length !== body.primary.length) fail("tools array ≠ primary");
  for (const name of CAPABILITY_FLOOR) if (!body.primary.includes(name)) fail(`${name} is not primary`);
  if (expectLimit !== null) {
    if (body.primary.length > expectLimit) fail(`${body.primary.length} primary > ${expectLimit}`);
    if (body.demoted.length === 0) fail("no demotions: the limit does not bite");
  } else if (body.demoted.length > 0) {
    fail("demotions without a limit");
  }
}

/** 40 configured tools in six families, ~60 % primary. */
function configuredToolNames(): { name: string; primary: boolean }[] {
  const families: readonly [string, number][] = [
    ["doc", 8],
    ["file", 8],
    ["exec", 6],
    ["web", 6],
    ["db", 6],
    ["note", 6],
  ];
  return families.flatMap(([family, size]) =>
    Array.from({ length: size }, (_, i) => ({
      name: `${family}_${OPS[i]}`,
      primary: i < Math.ceil(size * 0.6),
    })),
  );
}

/** 298 client tools: the 260 pack sub-tools of the twelve packs and 38 in four non-pack families. */
function clientToolDeclarations() {
  const declaration = (name: string, description: string) => ({
    name,
    description,
    inputSchema: {
      type: "object",
      properties: { query: { type: "string", description: `Input of ${name}` }, limit: { type: "integer" } },
      required: ["query"],
    },
  });
  const packs = PACKS.flatMap((pack) =>
    Array.from({ length: pack.size }, (_, i) => {
      const name = packToolName(pack.name, i);
      return declaration(
        name,
        `${pack.name}: ${name.slice(pack.name.length + 2)} via the ${pack.name} MCP server`,
      );
    }),
  );
  const families: readonly [string, number][] = [
    ["ui", 10],
    ["editor", 10],
    ["term", 10],
    ["browser", 8],
  ];
  const plain = families.flatMap(([family, size]) =>
    Array.from({ length: size }, (_, i) =>
      declaration(`${family}_${OPS[i]}`, `${family}: ${OPS[i]} (client)`),
    ),
  );
  return [...packs, ...plain];
}

function packToolName(pack: string, index: number): string {
  const op = OPS[index % OPS.length]!;
  return index < OPS.length ? `${pack}__${op}` : `${pack}__${op}_${Math.floor(index / OPS.length) + 1}`;
}

// ---- counting ------------------------------------------------------------------------------------

const STATE_READS = new Set(["getProcess", "listToolUsage", "getObservedToolLimits"]);

function emptyUsage(): Usage {
  const zero = { get: 0, put: 0, delete: 0, list: 0 };
  return { documents: zero, catalog: zero, state: {}, logs: { info: 0, warn: 0 } };
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
    logs: { info: now.logs.info - before.logs.info, warn: now.logs.warn - before.logs.warn },
  };
}

function add(a: Usage, b: Usage): Usage {
  const plus = (x: ObjectStoreCallCounts, y: ObjectStoreCallCounts): ObjectStoreCallCounts => ({
    get: x.get + y.get,
    put: x.put + y.put,
    delete: x.delete + y.delete,
    list: x.list + y.list,
  });
  const state = { ...a.state };
  for (const [method, count] of Object.entries(b.state)) state[method] = (state[method] ?? 0) + count;
  return {
    documents: plus(a.documents, b.documents),
    catalog: plus(a.catalog, b.catalog),
    state,
    logs: { info: a.logs.info + b.logs.info, warn: a.logs.warn + b.logs.warn },
  };
}

// ---- formatting ----------------------------------------------------------------------------------

function formatKb(bytes: number): string {
  return `${formatNumber(bytes / 1024, 1)} KiB`;
}

function formatBuckets(result: {
  primary: readonly string[];
  deferred: readonly string[];
  demoted: readonly string[];
}) {
  return `${result.primary.length} / ${result.deferred.length} / ${result.demoted.length}`;
}

/** Store calls per operation, e.g. `state 2R 0W (getProcess 1, …) · docs 1 LIST · catalog 1 GET`. */
function formatUsage(usage: Usage, operations: number): string {
  const per = (value: number) => {
    const v = value / operations;
    return Number.isInteger(v) ? String(v) : v.toFixed(2);
  };
  const store = (counts: ObjectStoreCallCounts) => {
    const parts = (["get", "list", "put", "delete"] as const)
      .filter((method) => counts[method] > 0)
      .map((method) => `${per(counts[method])} ${method.toUpperCase()}`);
    return parts.length === 0 ? "0" : parts.join(" + ");
  };
  const methods = Object.entries(usage.state).sort(byString(([method]) => method));
  const reads = methods.filter(([m]) => STATE_READS.has(m)).reduce((n, [, c]) => n + c, 0);
  const writes = methods.filter(([m]) => !STATE_READS.has(m)).reduce((n, [, c]) => n + c, 0);
  const detail = methods.map(([m, c]) => `${m} ${per(c)}`).join(", ");
  return (
    `state ${per(reads)}R ${per(writes)}W (${detail}) · docs ${store(usage.documents)} · ` +
    `catalog ${store(usage.catalog)} · log ${per(usage.logs.info)} info + ${per(usage.logs.warn)} warn`
  );
}

function separator(): Row {
  return { measurement: "", limit: "", buckets: "", samples: "", median: "", p95: "", calls: "" };
}

runIfMain(import.meta.url, main);
