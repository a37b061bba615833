/**
 * Bench: discovery by tokens (issue 23) — what a model reads per turn, and what it costs to serve.
 *
 * Cases, each one project of the embedded set-up (fs documents, SQLite state) and one process
 * under `openai/gpt-4.1` (maxTools 128, limit 127):
 * - synthetic: 50, 1,000 and 10,000 tool documents (families of 20, 3 in 4 primary, written
 *   straight into the document directory before the services start), allowed by `@bench`;
 * - github: GitHub's whole OpenAPI document (npm `@octokit/openapi`, 13 MB, 1,223 operations) as
 *   one pack, the process allowed every sub-tool by name.
 * Per case: o200k tokens (gpt-tokenizer) of the tools array (as JSON), the static discovery block
 * and the demoted block, and their sum; the warm manifest's median latency next to
 * `GET /v1/health` in the same run (in-process `app.request`, sequential), and the ratio. For the
 * GitHub pack also the cold pack load (the first parse, on the task worker) and a warm listing.
 * Goals at 10,000 tools (printed, not asserted): static block ≤ 2,000 tokens, demoted block
 * ≤ 1,000, whole manifest ≤ 12,000, warm manifest ≥ 0.1× health's throughput.
 *
 * Run: `npm run bench -- discovery` (or `npx tsx bench/discovery.ts`).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { silentLogger } from "@vance/core";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { type Column, formatMs, formatNumber, median, renderTable, runIfMain } from "./support/report";

const SIZES = [50, 1_000, 10_000] as const;
const FAMILY_SIZE = 20;
const TENANT = "bench";
const SECRET = "bench-secret-0123456789abcdef";
const ROUNDS = 60;
const GITHUB_SPEC = "node_modules/@octokit/openapi/generated/api.github.com.json";

type App = ReturnType<typeof createApp>;

interface Figures {
  readonly name: string;
  readonly onWire: number;
  readonly arrayTokens: number;
  readonly staticTokens: number;
  readonly demotedTokens: number;
  readonly manifestMs: number;
  readonly healthMs: number;
}

function tool(i: number): string {
  const family = `fam${String(Math.floor(i / FAMILY_SIZE)).padStart(4, "0")}`;
  return `${family}_tool_${String(i).padStart(5, "0")}`;
}

function seed(dataDir: string, project: string, size: number): void {
  const dir = join(dataDir, "documents", TENANT, project, "server-tools");
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < size; i++) {
    writeFileSync(
      join(dir, `${tool(i)}.yaml`),
      `type: doc_lookup\ndescription: Looks up record ${i} of family ${Math.floor(i / FAMILY_SIZE)} in the archive. Answers its markdown.\nprimary: ${i % 4 !== 3}\nlabels: [bench]\nparameters: { path: documents/getting_started.md }\n`,
    );
  }
}

async function timed(app: App, path: string, headers: Record<string, string>): Promise<number> {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const res = await app.request(path, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    samples.push(performance.now() - started);
  }
  return median(samples.slice(5));
}

async function spawn(app: App, project: string, headers: Record<string, string>, body: unknown) {
  const res = await app.request(`/v1/tenants/${TENANT}/projects/${project}/processes`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`spawn: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { processId: string }).processId;
}

async function figures(
  app: App,
  project: string,
  processId: string,
  headers: Record<string, string>,
  name: string,
) {
  const path = `/v1/tenants/${TENANT}/projects/${project}/processes/${processId}/manifest`;
  const manifest = (await (await app.request(path, { headers })).json()) as {
    tools: unknown[];
    discoveryBlock: string;
    demotedDiscoveryBlock: string;
  };
  const healthMs = await timed(app, "/v1/health", {});
  const manifestMs = await timed(app, path, headers);
  return {
    name,
    onWire: manifest.tools.length,
    arrayTokens: encode(JSON.stringify(manifest.tools)).length,
    staticTokens: encode(manifest.discoveryBlock).length,
    demotedTokens: encode(manifest.demotedDiscoveryBlock).length,
    manifestMs,
    healthMs,
  } satisfies Figures;
}

export async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-discovery-"));
  for (const size of SIZES) seed(dataDir, `p${size}`, size);
  const env = { VANCE_DATA_DIR: dataDir };
  const services = await buildServices(loadConfig(env), SECRET, { logger: silentLogger, env });
  const app = createApp(services);
  const headers = {
    authorization: `Bearer ${await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600)}`,
  };
  const rows: Figures[] = [];
  for (const size of SIZES) {
    const processId = await spawn(app, `p${size}`, headers, {
      models: ["openai/gpt-4.1"],
      allowedToolsAdd: ["@bench"],
    });
    rows.push(
      await figures(app, `p${size}`, processId, headers, `${size.toLocaleString("en-US")} synthetic`),
    );
  }

  // GitHub: the spec stored, the pack written, the first listing starts its parse.
  const text = readFileSync(GITHUB_SPEC, "utf8");
  const base = `/v1/tenants/${TENANT}/projects/github`;
  const put = (path: string, body: string, type: string) =>
    app.request(`${base}${path}`, { method: "PUT", headers: { ...headers, "content-type": type }, body });
  await put("/documents/specs/github.json", text, "application/json");
  await put(
    "/tools/github",
    "type: openapi\ndescription: GitHub\nparameters:\n  spec: specs/github.json\n  promptHint: GitHub - repositories, issues, pull requests, actions\n",
    "application/yaml",
  );
  const coldStarted = performance.now();
  let names: string[] = [];
  for (;;) {
    const listed = (await (await app.request(`${base}/tools`, { headers })).json()) as {
      tools: { name: string; pack?: string }[];
      packs: { pack: string; status: string }[];
    };
    if (listed.packs.find((pack) => pack.pack === "github")?.status === "current") {
      names = listed.tools.filter((tool) => tool.pack === "github").map((tool) => tool.name);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const coldMs = performance.now() - coldStarted;
  const warmListingMs = await timed(app, `${base}/tools`, headers);
  const byName = await spawn(app, "github", headers, { models: ["openai/gpt-4.1"], allowedToolsAdd: names });
  rows.push(await figures(app, "github", byName, headers, `github, all ${names.length} by name`));
  const byPack = await spawn(app, "github", headers, {
    models: ["openai/gpt-4.1"],
    allowedToolsAdd: ["github"],
  });
  rows.push(await figures(app, "github", byPack, headers, "github, pack by reference"));

  const columns: Column[] = [
    { title: "case" },
    { title: "on wire", right: true },
    { title: "array tok", right: true },
    { title: "static tok", right: true },
    { title: "demoted tok", right: true },
    { title: "turn tok", right: true },
    { title: "manifest", right: true },
    { title: "health", right: true },
    { title: "throughput vs health", right: true },
  ];
  console.log(
    renderTable(
      columns,
      rows.map((row) => [
        row.name,
        String(row.onWire),
        row.arrayTokens.toLocaleString("en-US"),
        row.staticTokens.toLocaleString("en-US"),
        row.demotedTokens.toLocaleString("en-US"),
        (row.arrayTokens + row.staticTokens + row.demotedTokens).toLocaleString("en-US"),
        formatMs(row.manifestMs),
        formatMs(row.healthMs),
        `${formatNumber(row.healthMs / row.manifestMs, 2)}×`,
      ]),
    ),
  );
  console.log(
    `\ngithub pack: cold load (first parse on the task worker) ${formatMs(coldMs)}, warm listing ${formatMs(warmListingMs)} (health ${formatMs(rows.at(-1)!.healthMs)})`,
  );
  const big = rows[SIZES.length - 1]!;
  console.log(
    `goals at 10,000 tools: static ${big.staticTokens} ≤ 2,000, demoted ${big.demotedTokens} ≤ 1,000, manifest ${big.arrayTokens + big.staticTokens + big.demotedTokens} ≤ 12,000 tokens, warm manifest ${formatNumber(big.healthMs / big.manifestMs, 2)}× ≥ 0.1× health`,
  );
  console.log(
    `load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(" ")}`,
  );
  process.exit(0);
}

runIfMain(import.meta.url, main);
