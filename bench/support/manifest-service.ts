/**
 * A tree's manifest service in its own process, for `bench/manifest.ts`'s comparison with another
 * tree (`MANIFEST_BENCH_BASELINE`, e.g. the tree a change started from): this tree's and the
 * baseline's each run in one, placed alike, and answer in the same interleaved rounds, to the same
 * load client, against the same byte floor. It imports the
 * service from the tree at `process.argv[2]` (its `functions/api` and its workspace packages), over
 * its own embedded stores (FsObjectStore, SqliteStateStore in a temp dir), seeds a project per
 * size as `bench/manifest.ts` does, spawns a process in each and answers where its manifests are.
 * Its parent sends a {@link ServiceRequest}; it answers {@link ServiceAnswer}s.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { serve } from "@hono/node-server";
import { toolDocument } from "./tool-documents";

export type ServiceRequest =
  | {
      readonly seed: {
        readonly tenant: string;
        readonly sizes: readonly number[];
        readonly chain: readonly string[];
        readonly names: readonly (readonly string[])[];
      };
    }
  | { readonly cpu: number }
  | { readonly stop: true };

export type ServiceAnswer =
  | {
      readonly seeded: {
        readonly base: string;
        readonly authorization: string;
        /** The manifest's path by size. */
        readonly paths: Readonly<Record<number, string>>;
      };
    }
  | { readonly cpu: number; readonly micros: number }
  | { readonly error: string };

const root = process.argv[2];
if (!root) throw new Error("manifest-service: the tree's root is its first argument");
// The tree's own modules: its entry files and packages, never this tree's.
const from = <T>(path: string): Promise<T> => import(pathToFileURL(join(root, path)).href) as Promise<T>;

const SECRET = "bench-secret-0123456789abcdef";
const SEED_CONCURRENCY = 16;

interface Tree {
  readonly core: {
    silentLogger: unknown;
    mapWithConcurrency<T>(
      items: readonly T[],
      n: number,
      f: (item: T, i: number) => Promise<void>,
    ): Promise<void>;
  };
  readonly adapters: {
    FsObjectStore: new (dir: string) => unknown;
    loadBundledCatalog(dir: string): unknown;
    syncCatalog(options: Record<string, unknown>): Promise<unknown>;
  };
  readonly sqlite: { SqliteStateStore: new (file: string) => { close(): void } };
  readonly defaults: { DEFAULTS_DIR: string };
  readonly sandbox: { ScriptPool: { create(): Promise<{ close(): Promise<void> }> } };
  readonly app: { createApp(services: unknown): { fetch: (request: Request) => Promise<Response> } };
  readonly auth: {
    mintToken(secret: string, claims: Record<string, unknown>, seconds: number): Promise<string>;
  };
  readonly config: { loadConfig(env: Record<string, string>): unknown };
  readonly services: {
    buildServices(
      config: unknown,
      secret: string,
      overrides: Record<string, unknown>,
    ): Promise<{
      tools: { put(tenant: string, project: string, name: string, text: string): Promise<unknown> };
    }>;
  };
}

async function loadTree(): Promise<Tree> {
  const [core, adapters, sqlite, defaults, sandbox, app, auth, config, services] = await Promise.all([
    from<Tree["core"]>("packages/core/src/index.ts"),
    from<Tree["adapters"]>("packages/adapters/src/index.ts"),
    from<Tree["sqlite"]>("packages/adapters/src/sqlite.ts"),
    from<Tree["defaults"]>("packages/defaults/src/index.ts"),
    from<Tree["sandbox"]>("packages/sandbox/src/index.ts"),
    from<Tree["app"]>("functions/api/app.ts"),
    from<Tree["auth"]>("functions/api/auth.ts"),
    from<Tree["config"]>("functions/api/config.ts"),
    from<Tree["services"]>("functions/api/services.ts"),
  ]);
  return { core, adapters, sqlite, defaults, sandbox, app, auth, config, services };
}

let close: (() => Promise<void>) | undefined;

async function seed(request: Extract<ServiceRequest, { seed: unknown }>["seed"]): Promise<ServiceAnswer> {
  const tree = await loadTree();
  const dataDir = await mkdtemp(join(tmpdir(), "vance-bench-manifest-baseline-"));
  const state = new tree.sqlite.SqliteStateStore(join(dataDir, "state.sqlite"));
  const catalog = new tree.adapters.FsObjectStore(join(dataDir, "catalog"));
  const scripts = await tree.sandbox.ScriptPool.create();
  await tree.adapters.syncCatalog({
    store: catalog,
    bundled: tree.adapters.loadBundledCatalog(tree.defaults.DEFAULTS_DIR),
    logger: tree.core.silentLogger,
  });
  const services = await tree.services.buildServices(
    tree.config.loadConfig({ VANCE_DATA_DIR: dataDir }),
    SECRET,
    {
      documents: new tree.adapters.FsObjectStore(join(dataDir, "documents")),
      catalog,
      state,
      logger: tree.core.silentLogger,
      scripts,
      env: {},
    },
  );
  const server = serve({ fetch: tree.app.createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  close = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    (server as unknown as { closeAllConnections(): void }).closeAllConnections();
    await closed;
    await scripts.close();
    state.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = await tree.auth.mintToken(SECRET, { tenant: request.tenant, roles: ["read", "write"] }, 3600);
  const authorization = `Bearer ${token}`;
  const paths: Record<number, string> = {};
  for (const [k, size] of request.sizes.entries()) {
    const project = `p${size}`;
    await tree.core.mapWithConcurrency(request.names[k]!, SEED_CONCURRENCY, async (name, i) => {
      await services.tools.put(request.tenant, project, name, toolDocument(name, i % 4 < 3));
    });
    const spawned = await fetch(`${base}/v1/tenants/${request.tenant}/projects/${project}/processes`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ models: request.chain, allowedToolsAdd: ["@bench"] }),
    });
    if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`);
    const { processId } = (await spawned.json()) as { processId: string };
    paths[size] = `/v1/tenants/${request.tenant}/projects/${project}/processes/${processId}/manifest`;
  }
  return { seeded: { base, authorization, paths } };
}

process.on("message", (message: ServiceRequest) => {
  if ("stop" in message) {
    void (close?.() ?? Promise.resolve()).finally(() => {
      process.disconnect();
      process.exit(0);
    });
    return;
  }
  if ("cpu" in message) {
    const used = process.cpuUsage();
    process.send?.({ cpu: message.cpu, micros: used.user + used.system } satisfies ServiceAnswer);
    return;
  }
  seed(message.seed).then(
    (answer) => process.send?.(answer),
    (error: unknown) => process.send?.({ error: String(error) } satisfies ServiceAnswer),
  );
});
process.send?.({ ready: true });
