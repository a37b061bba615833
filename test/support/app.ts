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
import { buildServices } from "../../functions/api/services";

export const SECRET = "test-secret-0123456789abcdef";

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
  const env = { VANCE_DATA_DIR: dataDir, ...options.env };
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
    ...(options.scripts ? { scripts: options.scripts } : {}),
    ...(options.openApi ? { openApi: options.openApi } : {}),
  });
  return { app: createApp(services), services, documents, dataDir };
}

/** A bearer header for the given claims. */
export async function bearer(claims: Claims, ttlSeconds = 3600): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await mintToken(SECRET, claims, ttlSeconds)}` };
}
