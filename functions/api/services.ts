import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type CatalogSyncResult,
  createGuardedHttp,
  createJsonLogger,
  createMcpClient,
  dnsHostResolver,
  FsObjectStore,
  loadBundledCatalog,
  loadBundledDocuments,
  syncCatalog,
} from "@vance/adapters";
import {
  BUILT_IN_TOOLS,
  builtInToolTypes,
  CATALOG_MARKER,
  CacheRegistry,
  type CacheReport,
  CatalogEditor,
  CompiledLayerBuilder,
  type CompiledOperations,
  type CompiledSchemaSource,
  CompiledToolLayers,
  compiledToolsFingerprint,
  createNetworkPolicy,
  DemotionLog,
  DiagnosticWebhook,
  DiscoveryApi,
  DocumentCascade,
  DocumentService,
  EmptyResponseDiagnosis,
  Errors,
  Generations,
  type InputSchemaCheck,
  JSON_SCHEMA_CACHE_LIMITS,
  type JsonSchema,
  JsonSchemaValidator,
  type Logger,
  loadLazyEngines,
  McpServerCaches,
  MemoStats,
  MIB,
  ModelCatalogService,
  ModelPicker,
  markerOfDocumentKey,
  type ObjectStore,
  ObjectStoreCompiledOperations,
  ObservedToolLimits,
  type OpenApiCompiler,
  ProcessBookkeeping,
  ProcessRecordCaches,
  ProcessRecords,
  ProcessService,
  RecipeResolver,
  type SchemaCompileOffload,
  type ScriptRunner,
  type SearchIndexBuilder,
  type SearchIndexData,
  SecretService,
  type SecretStore,
  ServerToolService,
  ServiceMetrics,
  type StateStore,
  StoreScan,
  searchIndexView,
  TenantQuotas,
  ToolBudgetService,
  ToolDispatcher,
  type ToolRuntime,
  ToolSources,
  ToolSurface,
  ToolTypeRegistry,
  ToolUsage,
  tracedExchange,
  tracedFetch,
  tracedScripts,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import type { ScriptPool, ScriptPoolStats, TaskPool } from "@vance/sandbox";
import { deferredObjectStore, deferredSecretStore, deferredStateStore } from "../deferred-stores";
import { VERSION } from "../version";
import type { AppServices } from "./app-services";
import { DEFAULT_BODY_BYTES } from "./body-limits";
import type { Config } from "./config";
import { TokenVerifier } from "./identity/verifier";
import { localSecretsKey } from "./local-secret";
import { isLoopbackAddress } from "./mcp/browser-guard";
import { McpSessions } from "./mcp/sessions";
import { PARSE_WORKER_BUNDLE } from "./worker-files";

/** How long counted uses wait for more to share their write (`ToolUsage`'s write-behind). */
const USAGE_LINGER_MS = 25;

/** The service version reported by health and OpenAPI. */
export { VERSION };

/** How long a write's layer index rebuild waits for further writes into the layer. */
const COMPILED_REBUILD_DELAY_MS = 250;

/** A store the configuration selects: a directory under the data dir, or an S3 bucket. */
function objectStore(config: Config, which: "documents" | "catalog"): ObjectStore {
  if (config.VANCE_STORE === "fs") return new FsObjectStore(join(config.VANCE_DATA_DIR, which));
  return deferredObjectStore(
    config,
    which === "documents" ? config.VANCE_DOCUMENTS_BUCKET! : config.VANCE_CATALOG_BUCKET!,
  );
}

/**
 * The state store the configuration selects: SQLite in the data dir, or a DynamoDB table.
 * `parsedRecords` counts the process records it keeps parsed (`processes.parsed` in `/v1/metrics`).
 */
export async function stateStore(config: Config, parsedRecords?: MemoStats): Promise<StateStore> {
  if (config.VANCE_STATE === "sqlite") {
    // Loaded only when chosen: the Lambda bundle carries no native SQLite module.
    const { SqliteStateStore } = await import("@vance/adapters/sqlite");
    mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
    return new SqliteStateStore(
      join(config.VANCE_DATA_DIR, "state.sqlite"),
      parsedRecords ? { parsedRecords } : {},
    );
  }
  return deferredStateStore(config, parsedRecords);
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
  return deferredSecretStore(config, key);
}

/** The script sandbox's worker pool, sized by the settings where they are given. */
export async function scriptPool(config: Config, logger?: Logger): Promise<ScriptPool> {
  // Imported here, so that a function that starts its pool lazily loads the sandbox lazily too.
  const { ScriptPool } = await import("@vance/sandbox");
  return ScriptPool.create({
    ...(config.VANCE_SCRIPT_WORKER === undefined
      ? {}
      : { workerUrl: pathToFileURL(resolve(config.VANCE_SCRIPT_WORKER)) }),
    ...(config.VANCE_SCRIPT_WASM === undefined ? {} : { wasmFile: resolve(config.VANCE_SCRIPT_WASM) }),
    ...(config.VANCE_SCRIPT_WORKERS === undefined ? {} : { warmWorkers: config.VANCE_SCRIPT_WORKERS }),
    ...(config.VANCE_SCRIPT_MAX_WORKERS === undefined ? {} : { maxWorkers: config.VANCE_SCRIPT_MAX_WORKERS }),
    ...(config.VANCE_SCRIPT_MAX_RUNS_PER_TENANT === undefined
      ? {}
      : { maxRunsPerTenant: config.VANCE_SCRIPT_MAX_RUNS_PER_TENANT }),
    ...(config.VANCE_SCRIPT_MAX_QUEUED_PER_TENANT === undefined
      ? {}
      : { maxQueuedPerTenant: config.VANCE_SCRIPT_MAX_QUEUED_PER_TENANT }),
    ...(config.VANCE_SCRIPT_MAX_THREADS_PER_TENANT === undefined
      ? {}
      : { maxThreadsPerTenant: config.VANCE_SCRIPT_MAX_THREADS_PER_TENANT }),
    ...(config.VANCE_SCRIPT_SECONDS_PER_MINUTE === undefined
      ? {}
      : { workerSecondsPerMinute: config.VANCE_SCRIPT_SECONDS_PER_MINUTE }),
    workerNice: config.VANCE_WORKER_NICE,
    ...(logger ? { logger } : {}),
  });
}

/** A script runner whose threads can be stopped (the lazy pool's, when it was started). */
export interface ClosableScriptRunner extends ScriptRunner {
  close(): Promise<void>;
}

/**
 * The script pool, made at the first script run rather than now: a Lambda cold start whose event
 * runs no script neither compiles QuickJS nor starts workers. A failed start is not kept.
 */
export function lazyScriptPool(config: Config): ClosableScriptRunner & { stats(): ScriptPoolStats | null } {
  let pool: Promise<ScriptPool> | undefined;
  let started: ScriptPool | undefined;
  return {
    run: async (request) => {
      pool ??= scriptPool(config).then(
        (made) => {
          started = made;
          return made;
        },
        (error: unknown) => {
          pool = undefined;
          throw error;
        },
      );
      return (await pool).run(request);
    },
    stats: () => started?.stats() ?? null,
    close: async () => {
      const closing = pool;
      pool = undefined;
      started = undefined;
      if (closing) await (await closing.catch(() => undefined))?.close();
    },
  };
}

/** The pool's counters when the runner is a pool (or a lazy one that has started). */
function poolStatsOf(runner: ScriptRunner): () => ScriptPoolStats | null {
  const stats = (runner as { stats?: () => ScriptPoolStats | null }).stats;
  return typeof stats === "function" ? () => stats.call(runner) : () => null;
}

/**
 * The pool's queue and busy answers as observable instruments: read when a metric reader
 * collects, so an idle instance costs nothing.
 */
function observeScriptPool(metrics: ServiceMetrics, stats: () => ScriptPoolStats | null): void {
  metrics.meter
    .createObservableGauge("vance.scripts.queued", { description: "Script runs waiting for a slot" })
    .addCallback((result) => {
      const now = stats();
      if (now) result.observe(now.queued);
    });
  metrics.meter
    .createObservableGauge("vance.scripts.workers_busy", { description: "Worker threads running a script" })
    .addCallback((result) => {
      const now = stats();
      if (now) result.observe(now.workers.busy);
    });
  metrics.meter
    .createObservableCounter("vance.scripts.busy_answers", {
      description: "Script runs answered busy (the tenant's slots and queue were full)",
    })
    .addCallback((result) => {
      const now = stats();
      if (now) result.observe(now.busy);
    });
  metrics.meter
    .createObservableCounter("vance.scripts.rate_limited_answers", {
      description: "Script runs refused because their tenant had spent its script time per minute",
    })
    .addCallback((result) => {
      const now = stats();
      if (now) result.observe(now.rateLimited);
    });
}

/**
 * How long one OpenAPI document may take to parse, check and read, in its thread — the only
 * deadline of that work (no step has a shorter timeout of its own): GitHub's whole API (13 MB,
 * 1,223 operations) takes ~5 s and Microsoft Graph's (20 MB, 11,422) ~17 s on a 2-core machine at
 * a load of 19. It runs once per ETag; listings meanwhile answer within the sources' wait, the
 * pack `unavailable`.
 */
export const OPENAPI_COMPILE_TIMEOUT_MS = 60_000;

/**
 * A pool of the parse worker (`functions/api/parse-worker.ts`) started at its first task, so a
 * cold start that needs none starts no thread; a failed start is tried again by the next task.
 */
function lazyParseWorkerPool(
  config: Config,
  options: { readonly what: string; readonly timeoutMs: number; readonly warmWorkers?: number },
  logger: Logger | undefined,
): () => Promise<TaskPool> {
  let pool: Promise<TaskPool> | undefined;
  return () => {
    pool ??= import("@vance/sandbox")
      .then(({ TaskPool }) =>
        TaskPool.create({
          workerUrl: pathToFileURL(resolve(config.VANCE_PARSE_WORKER ?? PARSE_WORKER_BUNDLE)),
          workerNice: config.VANCE_WORKER_NICE,
          ...(logger ? { logger } : {}),
          ...options,
        }),
      )
      .catch((error: unknown) => {
        pool = undefined;
        throw error;
      });
    return pool;
  };
}

/**
 * OpenAPI documents compiled on the task worker pool (`TaskPool`, functions/api/parse-worker.ts):
 * a deadline that terminates the thread, one document per tenant at a time with a short queue.
 * The pool starts with the first document, so a cold start that lists none starts no thread.
 */
export function workerOpenApiCompiler(config: Config, logger?: Logger): OpenApiCompiler {
  const started = lazyParseWorkerPool(
    config,
    {
      what: "parsing OpenAPI documents",
      timeoutMs: OPENAPI_COMPILE_TIMEOUT_MS,
    },
    logger,
  );
  return async ({ tenant, signal, ...input }) => {
    const outcome = await (await started()).run({
      task: "openapi",
      input,
      tenant,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) throw new Error(outcome.message);
    return outcome.value as CompiledOperations;
  };
}

/** How long building one project's search index may take on its thread (16,000 tools: about 1 s). */
export const SEARCH_INDEX_BUILD_TIMEOUT_MS = 30_000;

/**
 * `tool_search`'s indexes built on a task worker pool of their own (the parse worker's
 * `searchIndex` task): a build never waits behind a tenant's OpenAPI compile, and its cost —
 * linear in every tool's text — never runs on the serving thread. The pool starts with the first
 * build.
 */
export function workerSearchIndexBuilder(config: Config, logger?: Logger): SearchIndexBuilder {
  const started = lazyParseWorkerPool(
    config,
    {
      what: "building search indexes",
      warmWorkers: 0,
      timeoutMs: SEARCH_INDEX_BUILD_TIMEOUT_MS,
    },
    logger,
  );
  return async ({ tenant, documents }) => {
    const outcome = await (await started()).run({ task: "searchIndex", input: documents, tenant });
    if (!outcome.ok) throw new Error(outcome.message);
    return outcome.value as SearchIndexData;
  };
}

/**
 * How long checking one JSON Schema may take on its thread: the largest the size caps allow
 * compiles in ~0.3 s on a quiet 2-core machine and ~1 s at a load of 20.
 */
export const SCHEMA_CHECK_TIMEOUT_MS = 10_000;

/**
 * Large input schemas that are only checked (a spawn's client tools) checked on a task worker
 * pool of their own (the parse worker's `inputSchema` task), so their compile never holds the
 * serving thread; each tenant checks one at a time with a short queue (429 `busy` beyond it).
 * The pool starts with the first such schema.
 */
export function workerJsonSchemaTasks(
  config: Config,
  logger?: Logger,
): {
  readonly check: InputSchemaCheck;
  readonly compile: SchemaCompileOffload;
} {
  const started = lazyParseWorkerPool(
    config,
    {
      what: "checking JSON Schemas",
      warmWorkers: 0,
      timeoutMs: SCHEMA_CHECK_TIMEOUT_MS,
    },
    logger,
  );
  const run = async (task: string, tenant: string, schema: JsonSchema): Promise<unknown> => {
    const outcome = await (await started()).run({ task, input: schema, tenant });
    if (outcome.ok) return outcome.value;
    // A full queue, or a thread too loaded to finish in time: the schema was not judged; try again.
    if (outcome.error === "Busy" || outcome.error === "TimeoutError") throw Errors.busy(outcome.message);
    throw new Error(outcome.message);
  };
  return {
    check: async (tenant, schema) => (await run("inputSchema", tenant, schema)) as string | null,
    // Large schemas a call needs compiled (a client tool's, an MCP tool's, a tool document's):
    // compiled on the same pool, in the tenant's place in its queue; the serving thread loads the code.
    compile: async (tenant, schema) => (await run("compileSchema", tenant, schema)) as CompiledSchemaSource,
  };
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
  /** The phantom sink when `VANCE_DIAGNOSTIC_WEBHOOK_URL` is set (its `settled()` waits for posts in flight). */
  readonly diagnosticWebhook: DiagnosticWebhook | undefined;
  /** Rebuilds a layer's compiled tool index after each write through the API and each store scan's bump. */
  readonly compiledLayers: CompiledLayerBuilder;
  /** `tool_search`'s indexes, one per project and generation (`builds()` counts them). */
  /** `tool_search`'s index as a view of the tool snapshots, and how many were built. */
  readonly searchIndexes: { builds(): number };
  /**
   * Scans both stores for writes made behind the service's back and bumps what they changed
   * (`StoreScan`): the local server's stand-in for the bucket events. The first call takes the
   * baseline.
   */
  readonly scanStores: () => Promise<string[]>;
  /** The generation markers, whose pending bumps a shutdown or a Lambda invocation waits for. */
  readonly generations: Generations;
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
    openApi?: OpenApiCompiler;
    /** Where `tool_search`'s indexes are built; the task worker pool by default. */
    searchIndexes?: SearchIndexBuilder;
    env?: Record<string, string | undefined>;
    now?: () => number;
    /**
     * Leave loading Ajv, RE2, acorn and the YAML parser to the entry, which awaits
     * `loadLazyEngines()` before the first event that may read a document or check a schema or a
     * script (the Lambda entry: a health check does not).
     */
    lazyEngines?: boolean;
    /**
     * The service's base URL when `VANCE_PUBLIC_URL` is unset: the local server's is the socket
     * it binds (`HOST`, `PORT`); the Lambda entry passes `"event"` (the domain AWS routed the
     * request by). Never a request's `Host` header.
     */
    defaultPublicUrl?: "socket" | "event";
  } = {},
): Promise<Services> {
  const logger = overrides.logger ?? createJsonLogger({ trace: config.VANCE_LOG_LEVEL === "trace" });
  // The instance's compiled schemas: the type registry's checks, the dispatcher and the records use
  // it; large schemas that are only checked (a spawn's client tools) are checked on a worker thread.
  const schemaTasks = workerJsonSchemaTasks(config, logger);
  const jsonSchemas = new JsonSchemaValidator(
    { ...JSON_SCHEMA_CACHE_LIMITS, tenantShare: config.VANCE_CACHE_TENANT_PERCENT / 100 },
    undefined,
    { offload: schemaTasks.check, offloadCompile: schemaTasks.compile, logger },
  );
  if (!overrides.lazyEngines) await loadLazyEngines();
  // After `startTelemetry` (the entries call it first): instruments made before are no-ops.
  const serviceMetrics = new ServiceMetrics();
  const env = overrides.env ?? process.env;
  const networkPolicy = createNetworkPolicy(config.VANCE_NETWORK_ALLOWLIST);
  const mcpServers = new McpServerCaches();
  const types = new ToolTypeRegistry(builtInToolTypes(mcpServers), { networkPolicy, jsonSchemas });
  const defaultsDir = config.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR;
  const now = overrides.now ?? (() => Date.now());
  // Made here so /v1/metrics lists it before the DynamoDB store exists (made at its first call).
  const parsedRecords = new MemoStats();
  const state = overrides.state ?? (await stateStore(config, parsedRecords));
  const generations = new Generations({
    state,
    now,
    // A pending bump's resend keeps no process alive: a shutdown waits for it itself (node.ts).
    retryLater: (resend, ms) => setTimeout(resend, ms).unref(),
    logger,
    revalidateAfterMs: config.VANCE_CACHE_REVALIDATE_SECONDS * 1000,
  });
  const documentStore = overrides.documents ?? objectStore(config, "documents");
  // A release may parse differently: an index compiled by another version is rebuilt once.
  const fingerprint = compiledToolsFingerprint(VERSION, types);
  const compiledLayers = new CompiledToolLayers(documentStore, fingerprint);
  // Off the write's answer: the write has returned before its layer's index is rebuilt.
  const layerBuilder = new CompiledLayerBuilder({
    store: documentStore,
    // Its own counters: the listing's index reads are what /v1/metrics reports as cache hits.
    layers: new CompiledToolLayers(documentStore, fingerprint),
    types,
    generation: async (marker) => (await state.getGenerations([marker]))[0] ?? 0,
    now,
    logger,
    // A push of many documents into a layer: one rebuild per quarter second, not one per document.
    delayMs: COMPILED_REBUILD_DELAY_MS,
  });
  const quotas = new TenantQuotas(
    state,
    {
      processesPerHour: config.VANCE_QUOTA_PROCESSES_PER_HOUR,
      liveProcesses: config.VANCE_QUOTA_LIVE_PROCESSES,
      documentBytes: config.VANCE_QUOTA_DOCUMENT_MB * MIB,
    },
    now,
    state,
  );
  const cascade = new DocumentCascade(documentStore, loadBundledDocuments(defaultsDir), {
    generations,
    quotas,
    maxCacheBytes: config.VANCE_CACHE_DOCUMENTS_MB * MIB,
    tenantShare: config.VANCE_CACHE_TENANT_PERCENT / 100,
    onChanged: (tenant, project) => layerBuilder.schedule(tenant, project),
    logger,
  });
  const catalogStore = overrides.catalog ?? objectStore(config, "catalog");
  const bundledCatalog = loadBundledCatalog(defaultsDir);
  const catalog = new ModelCatalogService({
    store: catalogStore,
    bundled: bundledCatalog,
    logger,
    generations,
  });
  const observedLimits = new ObservedToolLimits({
    state,
    catalog,
    reserve: config.VANCE_EXTERNAL_RESERVE,
    logger,
    now,
    generations,
  });
  const budget = new ToolBudgetService({ observed: observedLimits, generations });
  // One guarded fetch for rest calls and MCP servers alike: the network policy judges every address.
  const guarded = createGuardedHttp(networkPolicy, {
    maxResponseBytes: config.VANCE_REST_MAX_RESPONSE_BYTES,
  });
  const guardedFetch = guarded.fetch;
  const scripts = overrides.scripts ?? (await scriptPool(config, logger));
  const runtime: ToolRuntime = {
    fetch: tracedFetch(guardedFetch, "http", serviceMetrics),
    mcp: createMcpClient({
      fetch: tracedFetch(guardedFetch, "mcp", serviceMetrics),
      exchange: tracedExchange(guarded.exchange, "mcp", serviceMetrics),
      clientInfo: { name: "vance-server-tools", version: VERSION },
    }),
    resolveHost: dnsHostResolver,
    scripts: tracedScripts(scripts),
    now,
    openApi: overrides.openApi ?? workerOpenApiCompiler(config, logger),
    // Beside the spec documents: a cold instance reads a spec's compiled list instead of parsing it.
    compiledOperations: new ObjectStoreCompiledOperations(documentStore, logger),
  };
  const secrets = new SecretService({
    store: overrides.secrets ?? (await secretStore(config)),
    platform: (name) => env[`${SECRET_ENV_PREFIX}${name}`],
    generations,
  });
  const sources = new ToolSources({
    types,
    now,
    logger,
    ttlMs: config.VANCE_SOURCE_TTL_SECONDS * 1000,
    waitMs: config.VANCE_SOURCE_WAIT_MS,
    maxBytes: config.VANCE_CACHE_SOURCES_MB * MIB,
    tenantShare: config.VANCE_CACHE_TENANT_PERCENT / 100,
    // Methods, not arrow properties: the bundle's `keepNames` renames each named closure made
    // per call with `Object.defineProperty` (~0.7 µs each).
    context: (tenant, project) => ({
      tenant,
      project,
      runtime,
      networkPolicy,
      readHit(path) {
        return cascade.lookup(tenant, project, path);
      },
      readVersion(path) {
        return cascade.lookupVersion(tenant, project, path);
      },
      secretsFor(layer) {
        return secrets.lookupFor(tenant, layer);
      },
    }),
  });
  const tools = new ServerToolService(cascade, types, BUILT_IN_TOOLS, logger, {
    maxCacheBytes: config.VANCE_CACHE_PARSED_MB * MIB,
    sources,
    compiled: compiledLayers,
    maxSnapshotBytes: config.VANCE_CACHE_SNAPSHOTS_MB * MIB,
    tenantShare: config.VANCE_CACHE_TENANT_PERCENT / 100,
    models: catalog,
  });
  // Only an OpenAPI document may be longer than an ordinary one.
  const documents = new DocumentService(cascade, tools, { ordinaryBytes: DEFAULT_BODY_BYTES });
  const recipes = new RecipeResolver();
  // Usage is written behind the answer (25 ms after it is on its way; the Lambda entry flushes
  // before its invocation ends), a tool's uses meanwhile as one increment, resent until
  // acknowledged: an engine's calls in a row share a write rather than each making one (issue 39).
  const usage = new ToolUsage(state, {
    now,
    demandTtlMs: config.VANCE_DEMAND_CACHE_SECONDS * 1000,
    schedule: (flush) => setTimeout(flush, USAGE_LINGER_MS),
    // A resend waiting for the store keeps no process alive: a shutdown closes the usage itself.
    retryLater: (resend, ms) => setTimeout(resend, ms).unref(),
    logger,
  });
  const recordCaches = new ProcessRecordCaches();
  const records = new ProcessRecords({
    state,
    generations,
    recipes,
    jsonSchemas,
    caches: recordCaches,
    quotas,
    now,
    idleTtlMs: config.VANCE_PROCESS_IDLE_TTL_SECONDS * 1000,
    settings: {
      activationTtlMs: config.VANCE_ACTIVATION_TTL_SECONDS * 1000,
      maxActivated: config.VANCE_MAX_ACTIVATED,
    },
  });
  // The surface runs only below ProcessService, which hands it the request's snapshot.
  const surface = new ToolSurface({
    budget,
    records,
    usage,
    demotions: new DemotionLog({ logger, state }),
    externalReserve: config.VANCE_EXTERNAL_RESERVE,
    metrics: serviceMetrics,
  });
  const bookkeeping = new ProcessBookkeeping({ records, usage, logger, now });
  // The catalog sync, also after every catalog write through the API (which bumps the marker itself).
  const compileCatalog = () => syncCatalog({ store: catalogStore, bundled: bundledCatalog, logger });
  const diagnosticWebhook =
    config.VANCE_DIAGNOSTIC_WEBHOOK_URL === undefined
      ? undefined
      : new DiagnosticWebhook({
          url: config.VANCE_DIAGNOSTIC_WEBHOOK_URL,
          fetch: (url, init) => fetch(url, init),
          state,
          windowSeconds: config.VANCE_DIAGNOSTIC_DEDUP_SECONDS,
          logger,
          now,
        });
  const searchIndexes = searchIndexView(overrides.searchIndexes ?? workerSearchIndexBuilder(config, logger));
  const discovery = new DiscoveryApi({
    surface,
    bookkeeping,
    searchIndex: searchIndexes.view,
    maxActivated: config.VANCE_MAX_ACTIVATED,
  });
  const dispatcher = new ToolDispatcher({
    cascade,
    runtime,
    secrets,
    environment: types.environment,
    // The provider keys are platform secrets: read through the secret service's platform lookup.
    models: new ModelPicker({
      platformSecret: (name) => secrets.platform(name),
      defaultInstance: config.VANCE_DEFAULT_MODEL_INSTANCE,
    }),
    discovery,
    metrics: serviceMetrics,
  });
  const scriptStats = poolStatsOf(scripts);
  observeScriptPool(serviceMetrics, scriptStats);
  serviceMetrics.observePackSources(() => tools.packHealth());
  const processes = new ProcessService({ tools: tools.catalog, records, surface, dispatcher, bookkeeping });
  const verifier = new TokenVerifier(
    {
      secret: jwtSecret,
      localTokens: config.VANCE_LOCAL_TOKENS,
      issuers: config.VANCE_TOKEN_ISSUERS,
      publicUrl:
        config.VANCE_PUBLIC_URL ??
        ((overrides.defaultPublicUrl ?? "socket") === "socket" ? socketBase(config) : undefined),
    },
    { logger, now, guardedFetch },
  );
  const caches = registerCaches({
    cascade,
    tools,
    sources,
    usage,
    verifier,
    secrets,
    recordCaches,
    jsonSchemas,
    mcpServers,
    catalog,
    observedLimits,
    parsedRecords,
  });
  return {
    version: VERSION,
    generations,
    searchIndexes,
    verifier,
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
    catalog,
    catalogEditor: new CatalogEditor({ store: catalogStore, rebuild: compileCatalog, generations, catalog }),
    diagnostics: new EmptyResponseDiagnosis({
      tools,
      builtInNames: BUILT_IN_TOOLS.map((tool) => tool.name),
      state,
      logger,
      ...(diagnosticWebhook ? { sink: diagnosticWebhook } : {}),
    }),
    diagnosticWebhook,
    mcp: {
      allowedOrigins: config.VANCE_MCP_ALLOWED_ORIGINS,
      loopbackOnly: isLoopbackAddress(config.HOST),
      sessions: new McpSessions(state),
    },
    metrics: () => ({
      caches: caches.list(),
      generations: generations.stats,
      packs: tools.packHealth(),
      identity: verifier.stats,
      scripts: scriptStats(),
      schemaCompiles: jsonSchemas.compileCounts(),
    }),
    syncCatalog: async () => {
      const result = await compileCatalog();
      if (result.changed) await generations.bump(CATALOG_MARKER);
      return result;
    },
    compiledLayers: layerBuilder,
    scanStores: storeScan([
      // The local stand-in for the bucket events: each layer it bumps has its index rebuilt too.
      new StoreScan({
        store: documentStore,
        markerOf: markerOfDocumentKey,
        generations: {
          bump: async (marker) => {
            const generation = await generations.bump(marker);
            layerBuilder.scheduleMarker(marker);
            return generation;
          },
        },
      }),
      new StoreScan({ store: catalogStore, markerOf: () => CATALOG_MARKER, generations }),
    ]),
  };
}

/** `http://HOST:PORT` as a client reaches the local server (a wildcard address as `localhost`). */
function socketBase(config: Config): string {
  const host = config.HOST === "0.0.0.0" || config.HOST === "::" ? "localhost" : config.HOST;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.PORT}`;
}

/**
 * Every cache of the instance in one registry, for `/v1/metrics`: the services' own (the `mcp`
 * types' among them) and those built here for them (compiled schemas, hints, allow sets).
 */
function registerCaches(services: {
  readonly cascade: DocumentCascade;
  readonly tools: ServerToolService;
  readonly sources: ToolSources;
  readonly usage: ToolUsage;
  readonly verifier: TokenVerifier;
  readonly secrets: SecretService;
  readonly recordCaches: ProcessRecordCaches;
  readonly jsonSchemas: JsonSchemaValidator;
  readonly mcpServers: McpServerCaches;
  readonly catalog: ModelCatalogService;
  readonly observedLimits: ObservedToolLimits;
  readonly parsedRecords: MemoStats;
}): CacheRegistry {
  const caches = new CacheRegistry();
  caches.register("documents", () => services.cascade.stats);
  caches.registerAll("tools", services.tools);
  caches.registerAll("sources", services.sources);
  caches.registerAll("usage", services.usage);
  caches.registerAll("identity", services.verifier);
  caches.registerAll("secrets", services.secrets);
  caches.register("jsonSchemas", () => services.jsonSchemas.cacheReport());
  // What a request's `CatalogSnapshot` reads from: the model catalog and the limits learned.
  caches.register("catalog", () =>
    sumReports(services.catalog.cacheReport(), services.observedLimits.cacheReport()),
  );
  // Both kept by the record's stored version: its allow set and its whole `allowedToolsAdd`.
  caches.register("allowSets", () =>
    sumReports(services.recordCaches.allowSetReport(), services.recordCaches.allowedToolsAddReport()),
  );
  caches.register("processes.parsed", () => services.parsedRecords.report());
  caches.registerAll("mcpServer", services.mcpServers);
  return caches;
}

/** One listing of several memos: their reads and entries added up, a bound where any has one. */
function sumReports(...reports: readonly CacheReport[]): CacheReport {
  const sum = (pick: (report: CacheReport) => number | undefined): number | undefined => {
    const values = reports.map(pick).filter((value): value is number => value !== undefined);
    return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
  };
  const entries = sum((report) => report.entries);
  const maxEntries = sum((report) => report.maxEntries);
  return {
    hits: sum((report) => report.hits) ?? 0,
    misses: sum((report) => report.misses) ?? 0,
    ...(entries === undefined ? {} : { entries }),
    ...(maxEntries === undefined ? {} : { maxEntries }),
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
