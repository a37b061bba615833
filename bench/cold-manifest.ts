import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { CountingObjectStore } from "@vance/adapters/testing";
import {
  compiledLayerKey,
  isCompiledKey,
  mapWithConcurrency,
  type ObjectStore,
  silentLogger,
  TENANT_PROJECT,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { ScriptPool } from "@vance/sandbox";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import { awsLocalStores, type BenchStores, embeddedStores } from "./support/bench-stores";
import { type Column, formatMs, formatNumber, median, renderTable, runIfMain } from "./support/report";
import { toolDocument } from "./support/tool-documents";

const SECRET = "bench-secret-0123456789abcdef";
const TENANT = "bench";
const SIZES = [1000, 5000] as const;
const ROUNDS = 3;
const CASES = ["per document", "rebuild", "compiled"] as const;
type Case = (typeof CASES)[number];

const COLUMNS: readonly (Column & { readonly key: string })[] = [
  { key: "setup", title: "set-up" },
  { key: "size", title: "tools", right: true },
  { key: "case", title: "case" },
  { key: "median", title: "first manifest (median)", right: true },
  { key: "range", title: "min – max", right: true },
  { key: "requests", title: "document store: GET / LIST / PUT", right: true },
  { key: "ratio", title: "÷ per document", right: true },
];

export async function main(): Promise<void> {
  const scripts = await ScriptPool.create();
  const rows: Record<string, string>[] = [];
  const notes: string[] = [];
  try {
    for (const open of [embeddedStores, awsLocalStores]) {
      const stores = await open("cold-manifest");
      try {
        await benchStores(stores, scripts, rows, notes);
      } finally {
        await stores.close();
      }
    }
  } finally {
    await scripts.close();
  }
  console.log(
    renderTable(
      COLUMNS,
      rows.map((row) => COLUMNS.map((column) => row[column.key] ?? "")),
    ),
  );
  console.log("");
  for (const note of notes) console.log(`  ${note}`);
  console.log(
    `  load average: ${loadavg()
      .map((value) => formatNumber(value, 2))
      .join(" / ")}`,
  );
  console.log("  goal: 5,000 tools ≤ 0.5 s from the compiled index");
}

async function benchStores(
  stores: BenchStores,
  scripts: ScriptPool,
  rows: Record<string, string>[],
  notes: string[],
): Promise<void> {
  await syncCatalog({
    store: stores.catalog,
    bundled: loadBundledCatalog(DEFAULTS_DIR),
    logger: silentLogger,
  });
  const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

  /** A fresh instance over the stores; `hideIndex` makes it see and write no compiled index. */
  const freshInstance = async (hideIndex: boolean) => {
    // Counted inside the hiding: the hidden index's GET and refused write are no store requests.
    const documents = new CountingObjectStore(stores.documents);
    const services = await buildServices(loadConfig({ VANCE_DATA_DIR: stores.dataDir }), SECRET, {
      documents: hideIndex ? withoutIndex(documents) : documents,
      catalog: stores.catalog,
      state: stores.state,
      logger: silentLogger,
      scripts,
      env: {},
    });
    return { app: createApp(services), documents };
  };

  for (const size of SIZES) {
    const project = `p${size}`;
    const seeded = performance.now();
    await mapWithConcurrency(
      Array.from({ length: size }, (_, i) => i),
      16,
      async (i) => {
        const name = `fam${String(Math.floor(i / 20)).padStart(3, "0")}_op${i % 20}`;
        const result = await stores.documents.put(
          `${TENANT}/${project}/server-tools/${name}.yaml`,
          toolDocument(name, i % 4 < 3),
          { contentType: "application/yaml" },
        );
        if (!result.ok) throw new Error(`seeding ${name}: ${result.reason}`);
      },
    );
    notes.push(
      `${stores.label}: ${size} documents written straight into the store in ${formatMs(performance.now() - seeded)}`,
    );
    const seeder = await freshInstance(true);
    const spawned = await seeder.app.request(`/v1/tenants/${TENANT}/projects/${project}/processes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ models: ["openai/gpt-4.1"], allowedToolsAdd: ["@bench"] }),
    });
    if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
    const { processId } = (await spawned.json()) as { processId: string };
    const path = `/v1/tenants/${TENANT}/projects/${project}/processes/${processId}/manifest`;

    const samples = new Map<Case, { ms: number[]; requests: string }>(
      CASES.map((name) => [name, { ms: [], requests: "" }]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of CASES) {
        if (name === "rebuild") {
          for (const layer of [project, TENANT_PROJECT])
            await stores.documents.delete(compiledLayerKey(TENANT, layer));
        }
        const instance = await freshInstance(name === "per document");
        const started = performance.now();
        const answer = await instance.app.request(path, { headers });
        const ms = performance.now() - started;
        if (answer.status !== 200) throw new Error(`manifest: ${answer.status} ${await answer.text()}`);
        await answer.arrayBuffer();
        const { get, list, put } = instance.documents.counts;
        const sample = samples.get(name)!;
        sample.ms.push(ms);
        sample.requests = `${get} / ${list} / ${put}`;
      }
    }
    const baseline = median(samples.get("per document")!.ms);
    for (const name of CASES) {
      const { ms, requests } = samples.get(name)!;
      rows.push({
        setup: stores.label,
        size: String(size),
        case: name,
        median: formatMs(median(ms)),
        range: `${formatMs(Math.min(...ms))} – ${formatMs(Math.max(...ms))}`,
        requests,
        ratio: `${formatNumber(median(ms) / baseline, 2)}×`,
      });
    }
  }
}

/** The store as an instance before issue 24 saw it: no compiled index to read, none written. */
function withoutIndex(store: ObjectStore): ObjectStore {
  return {
    get: (key, options) => (isCompiledKey(key) ? Promise.resolve(null) : store.get(key, options)),
    put: (key, body, options) =>
      isCompiledKey(key)
        ? Promise.resolve({ ok: false, reason: "precondition_failed" })
        : store.put(key, body, options),
    delete: (key, options) => store.delete(key, options),
    list: (prefix, options) => store.list(prefix, options),
  };
}

runIfMain(import.meta.url, main);
