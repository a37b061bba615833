import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type CatalogSyncResult,
  createDynamoClient,
  createGuardedFetch,
  createOpenApiParser,
  createS3Client,
  DynamoSecretStore,
  DynamoStateStore,
  dnsHostResolver,
  FsObjectStore,
  jsonLogger,
  loadBundledCatalog,
  loadBundledDocuments,
  S3ObjectStore,
  SdkMcpClient,
  syncCatalog,
} from "@vance/adapters";
import {
  BUILT_IN_TOOL_TYPES,
  BUILT_IN_TOOLS,
  CATALOG_MARKER,
  createNetworkPolicy,
  DemotionLog,
  DiscoveryApi,
  DocumentCascade,
  DocumentService,
  Generations,
  type Logger,
  MIB,
  ModelCatalogService,
  markerOfDocumentKey,
  type ObjectStore,
  ObservedToolLimits,
  ProcessBookkeeping,
  ProcessRecords,
  ProcessService,
  RecipeResolver,
  type ScriptRunner,
  SecretService,
  type SecretStore,
  ServerToolService,
  type StateStore,
  StoreScan,
  ToolBudgetService,
  ToolDispatcher,
  type ToolRuntime,
  ToolSources,
  ToolSurface,
  ToolTypeRegistry,
  ToolUsage,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { ScriptPool } from "@vance/sandbox";
import type { AppServices } from "./app";
import type { Config } from "./config";
import { localSecretsKey } from "./local-secret";
import { isLoopbackAddress } from "./mcp/browser-guard";
import { McpSessions } from "./mcp/sessions";

/** The service version reported by health and OpenAPI. */
export const VERSION = "0.1.0";

/** A store the configuration selects: a directory under the data dir, or an S3 bucket. */
function objectStore(config: Config, which: "documents" | "catalog"): ObjectStore {
  if (config.VANCE_STORE === "fs") return new FsObjectStore(join(config.VANCE_DATA_DIR, which));
  const client = createS3Client({
    region: config.AWS_REGION,
    ...(config.VANCE_S3_ENDPOINT ? { endpoint: config.VANCE_S3_ENDPOINT } : {}),
    forcePathStyle: config.VANCE_S3_FORCE_PATH_STYLE,
    deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
  });
  const bucket = which === "documents" ? config.VANCE_DOCUMENTS_BUCKET! : config.VANCE_CATALOG_BUCKET!;
  return new S3ObjectStore({ client, bucket });
}

/** The state store the configuration selects: SQLite in the data dir, or a DynamoDB table. */
export async function stateStore(config: Config): Promise<StateStore> {
  if (config.VANCE_STATE === "sqlite") {
    // Loaded only when chosen: the Lambda bundle carries no native SQLite module.
    const { SqliteStateStore } = await import("@vance/adapters/sqlite");
    mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
    return new SqliteStateStore(join(config.VANCE_DATA_DIR, "state.sqlite"));
  }
  return new DynamoStateStore({ client: dynamoClient(config), tableName: config.VANCE_STATE_TABLE! });
}

/**
 * Tenant secrets, kept beside the state: a table in the same SQLite file, or items in the same
 * DynamoDB table; sealed with `VANCE_SECRETS_KEY` (locally a key generated into the data dir).
 */
export async function secretStore(config: Config): Promise<SecretStore> {
  const key = localSecretsKey(config);
  if (config.VANCE_STATE === "sqlite") {
    const { SqliteSecretStore } = await import("@vance/adapters/sqlite");
    mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
    return new SqliteSecretStore(join(config.VANCE_DATA_DIR, "state.sqlite"), { key });
  }
  return new DynamoSecretStore({ client: dynamoClient(config), tableName: config.VANCE_STATE_TABLE!, key });
}

/** One DynamoDB client per configuration: the state and secret stores share its connections. */
const dynamoClients = new WeakMap<Config, ReturnType<typeof createDynamoClient>>();

function dynamoClient(config: Config): ReturnType<typeof createDynamoClient> {
  let client = dynamoClients.get(config);
  if (!client) {
    client = createDynamoClient({
      region: config.AWS_REGION,
      ...(config.VANCE_DYNAMODB_ENDPOINT ? { endpoint: config.VANCE_DYNAMODB_ENDPOINT } : {}),
      deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
    });
    dynamoClients.set(config, client);
  }
  return client;
}

/** The script sandbox's worker pool, sized by the settings where they are given. */
export function scriptPool(config: Config): Promise<ScriptPool> {
  return ScriptPool.create({
    ...(config.VANCE_SCRIPT_WORKER === undefined
      ? {}
      : { workerUrl: pathToFileURL(resolve(config.VANCE_SCRIPT_WORKER)) }),
    ...(config.VANCE_SCRIPT_WORKERS === undefined ? {} : { warmWorkers: config.VANCE_SCRIPT_WORKERS }),
    ...(config.VANCE_SCRIPT_MAX_WORKERS === undefined ? {} : { maxWorkers: config.VANCE_SCRIPT_MAX_WORKERS }),
    ...(config.VANCE_SCRIPT_MAX_RUNS_PER_TENANT === undefined
      ? {}
      : { maxRunsPerTenant: config.VANCE_SCRIPT_MAX_RUNS_PER_TENANT }),
    ...(config.VANCE_SCRIPT_MAX_QUEUED_PER_TENANT === undefined
      ? {}
      : { maxQueuedPerTenant: config.VANCE_SCRIPT_MAX_QUEUED_PER_TENANT }),
  });
}

/**
 * Prefix of the platform secrets (`${secret:NAME}` of bundled documents and the model catalog,
 * never of tenant documents): only these variables, never AWS keys or settings.
 */
export const SECRET_ENV_PREFIX = "VANCE_SECRET_";

/** The services of the API, and what the local server runs at start. */
export interface Services extends AppServices {
  /** Compiles the catalog store's `catalog.json` (see `syncCatalog`). */
  readonly syncCatalog: () => Promise<CatalogSyncResult>;
  /**
   * Scans both stores for writes made behind the service's back and bumps what they changed
   * (`StoreScan`): the local server's stand-in for the bucket events. The first call takes the
   * baseline.
   */
  readonly scanStores: () => Promise<string[]>;
}

/** The composition root: builds every service from settings and ports. */
export async function buildServices(
  config: Config,
  jwtSecret: string,
  overrides: {
    documents?: ObjectStore;
    catalog?: ObjectStore;
    state?: StateStore;
    secrets?: SecretStore;
    logger?: Logger;
    scripts?: ScriptRunner;
    env?: Record<string, string | undefined>;
    now?: () => number;
  } = {},
): Promise<Services> {
  const logger = overrides.logger ?? jsonLogger;
  const env = overrides.env ?? process.env;
  const networkPolicy = createNetworkPolicy(config.VANCE_NETWORK_ALLOWLIST);
  const types = new ToolTypeRegistry(BUILT_IN_TOOL_TYPES, { networkPolicy });
  const defaultsDir = config.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR;
  const now = overrides.now ?? (() => Date.now());
  const state = overrides.state ?? (await stateStore(config));
  const generations = new Generations({
    state,
    now,
    revalidateAfterMs: config.VANCE_CACHE_REVALIDATE_SECONDS * 1000,
  });
  const documentStore = overrides.documents ?? objectStore(config, "documents");
  const cascade = new DocumentCascade(documentStore, loadBundledDocuments(defaultsDir), {
    generations,
    maxCacheBytes: config.VANCE_CACHE_DOCUMENTS_MB * MIB,
  });
  const catalogStore = overrides.catalog ?? objectStore(config, "catalog");
  const bundledCatalog = loadBundledCatalog(defaultsDir);
  const catalog = new ModelCatalogService({
    store: catalogStore,
    bundled: bundledCatalog,
    logger,
    generations,
  });
  const observedLimits = new ObservedToolLimits({ state, logger, now, generations });
  const budget = new ToolBudgetService({ catalog, observed: observedLimits, generations });
  // One guarded fetch for rest calls and MCP servers alike: the network policy judges every address.
  const guardedFetch = createGuardedFetch(networkPolicy, {
    maxResponseBytes: config.VANCE_REST_MAX_RESPONSE_BYTES,
  });
  const runtime: ToolRuntime = {
    fetch: guardedFetch,
    mcp: new SdkMcpClient({
      fetch: guardedFetch,
      clientInfo: { name: "vance-server-tools", version: VERSION },
    }),
    resolveHost: dnsHostResolver,
    scripts: overrides.scripts ?? (await scriptPool(config)),
    now,
    parseOpenApi: createOpenApiParser(),
  };
  const secrets = new SecretService({
    store: overrides.secrets ?? (await secretStore(config)),
    platform: (name) => env[`${SECRET_ENV_PREFIX}${name}`],
  });
  const sources = new ToolSources({
    types,
    now,
    logger,
    ttlMs: config.VANCE_SOURCE_TTL_SECONDS * 1000,
    waitMs: config.VANCE_SOURCE_WAIT_MS,
    context: (tenant, project) => ({
      tenant,
      project,
      runtime,
      networkPolicy,
      readHit: (path) => cascade.lookup(tenant, project, path),
      secretsFor: (layer) => secrets.lookupFor(tenant, layer),
    }),
  });
  const tools = new ServerToolService(cascade, types, BUILT_IN_TOOLS, logger, {
    maxCacheBytes: config.VANCE_CACHE_PARSED_MB * MIB,
    sources,
  });
  const documents = new DocumentService(cascade, tools);
  const recipes = new RecipeResolver(tools);
  const usage = new ToolUsage(state, { now, demandTtlMs: config.VANCE_DEMAND_CACHE_SECONDS * 1000 });
  const records = new ProcessRecords({
    state,
    generations,
    recipes,
    now,
    settings: {
      activationTtlMs: config.VANCE_ACTIVATION_TTL_SECONDS * 1000,
      maxActivated: config.VANCE_MAX_ACTIVATED,
    },
  });
  // The surface runs only below ProcessService, which read the generations with the process record.
  const surface = new ToolSurface({
    tools: { listAll: (tenant, project) => tools.listAll(tenant, project, "known") },
    budget: { budgetForChain: (models) => budget.budgetForChain(models, "known") },
    records,
    usage,
    demotions: new DemotionLog({ logger, state }),
    externalReserve: config.VANCE_EXTERNAL_RESERVE,
  });
  const bookkeeping = new ProcessBookkeeping({ records, usage, logger, now });
  const discovery = new DiscoveryApi({ surface, bookkeeping });
  const dispatcher = new ToolDispatcher({ tools, cascade, runtime, secrets, networkPolicy, discovery });
  const processes = new ProcessService({ records, surface, dispatcher, bookkeeping });
  return {
    version: VERSION,
    jwtSecret,
    logger,
    types,
    documents,
    tools,
    dispatcher,
    recipes,
    processes,
    usage,
    secrets,
    budget,
    observedLimits,
    mcp: {
      allowedOrigins: config.VANCE_MCP_ALLOWED_ORIGINS,
      loopbackOnly: isLoopbackAddress(config.HOST),
      sessions: new McpSessions(state),
    },
    metrics: () => ({
      caches: { documents: cascade.stats, parsed: tools.stats },
      generations: generations.stats,
    }),
    syncCatalog: async () => {
      const result = await syncCatalog({ store: catalogStore, bundled: bundledCatalog, logger });
      if (result.changed) await generations.bump(CATALOG_MARKER);
      return result;
    },
    scanStores: storeScan([
      new StoreScan({ store: documentStore, markerOf: markerOfDocumentKey, generations }),
      new StoreScan({ store: catalogStore, markerOf: () => CATALOG_MARKER, generations }),
    ]),
  };
}

/** One scan of each store, in turn; answers the markers bumped. */
function storeScan(scans: readonly StoreScan[]): () => Promise<string[]> {
  return async () => {
    const bumped: string[] = [];
    for (const scan of scans) bumped.push(...(await scan.scan()));
    return bumped;
  };
}
