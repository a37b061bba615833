import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import {
  type Logger,
  type ObjectStore,
  type OpenApiCompiler,
  type ScriptRunner,
  type SecretStore,
  type StateStore,
  silentLogger,
} from "@vance/core";
import { createApp } from "../../functions/api/app";
import { type Claims, mintToken } from "../../functions/api/auth";
import { loadConfig } from "../../functions/api/config";
import { buildServices, type ClosableScriptRunner, lazyScriptPool } from "../../functions/api/services";

export const SECRET = "test-secret-0123456789abcdef";

/** The script pools the apps of this test file made; `test/setup/close-apps.ts` stops them after the file. */
const pools = new Set<ClosableScriptRunner>();

/** Stops the script threads of every app this file made (run after each test file). */
export async function closeTestApps(): Promise<void> {
  const open = [...pools];
  pools.clear();
  await Promise.all(open.map((pool) => pool.close()));
}

/** A pool started at the app's first script run, not when the app is made: most tests run none. */
function trackedPool(config: ReturnType<typeof loadConfig>): ClosableScriptRunner {
  const pool = lazyScriptPool(config);
  pools.add(pool);
  return pool;
}

/** An app over a fresh data directory (fs stores) or the given document and catalog stores. */
export async function testApp(
  options: {
    documents?: ObjectStore;
    catalog?: ObjectStore;
    env?: Record<string, string>;
    now?: () => number;
    logger?: Logger;
    dataDir?: string;
    state?: StateStore;
    secrets?: SecretStore;
    scripts?: ScriptRunner;
    openApi?: OpenApiCompiler;
  } = {},
) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "vance-app-"));
  // `app.request` paths resolve against http://localhost: the service's public URL there.
  const env = { VANCE_DATA_DIR: dataDir, VANCE_PUBLIC_URL: "http://localhost", ...options.env };
  const config = loadConfig(env);
  const documents = options.documents ?? new FsObjectStore(join(dataDir, "documents"));
  const services = await buildServices(config, SECRET, {
    documents,
    logger: options.logger ?? silentLogger,
    env,
    ...(options.now ? { now: options.now } : {}),
    ...(options.catalog ? { catalog: options.catalog } : {}),
    ...(options.state ? { state: options.state } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    scripts: options.scripts ?? trackedPool(config),
    ...(options.openApi ? { openApi: options.openApi } : {}),
  });
  const app = createApp(services);
  // A write's answer leaves its layer's index rebuild running (off the answer's path): a test's
  // answer arrives once that finished, so request counts after it hold the next request's alone.
  const request = app.request;
  app.request = async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    await services.compiledLayers.settled();
    return response;
  };
  return { app, services, documents, dataDir };
}

/** A bearer header for the given claims. */
export async function bearer(claims: Claims, ttlSeconds = 3600): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await mintToken(SECRET, claims, ttlSeconds)}` };
}
