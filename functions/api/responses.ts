import { MODEL_SIZES, ModelSpecSchema, ProviderSpecSchema, ServerToolConfigSchema } from "@vance/core";
import * as v from "valibot";

/**
 * The answers of the HTTP API (API.md), as valibot schemas: `/openapi.json` is generated from
 * them, and the typed test client checks every answer it receives against the document.
 * Objects are loose: a client must accept fields added later (API.md "Add to it freely").
 */

const NamesSchema = v.array(v.string());
const JsonObjectSchema = v.record(v.string(), v.unknown());
const LayerSchema = v.picklist(["project", "tenant", "bundled", "builtin"]);

/** RFC 9457 problem details; `code` is the stable, machine-readable part (API.md "Conventions"). */
export const ProblemSchema = v.object({
  type: v.string(),
  title: v.string(),
  status: v.pipe(v.number(), v.integer()),
  detail: v.string(),
  code: v.string(),
  /** The request's `x-request-id`, to quote when reporting it. */
  requestId: v.optional(v.string()),
  errors: v.optional(
    v.array(
      v.object({
        path: v.string(),
        message: v.string(),
        line: v.optional(v.pipe(v.number(), v.integer())),
      }),
    ),
  ),
});

export const HealthSchema = v.object({ status: v.literal("ok"), version: v.string() });

/** One tool type: its id, what it does, and the JSON Schema of a document's `parameters` block. */
export const ToolTypeSchema = v.object({
  typeId: v.string(),
  description: v.string(),
  parametersSchema: JsonObjectSchema,
});

export const ToolTypesSchema = v.object({ types: v.array(ToolTypeSchema) });

/** A pack of the allow set whose source did not answer with a current list just now. */
const StalePackSchema = v.object({
  pack: v.string(),
  /** `stale`: its last known sub-tools are shown; `unavailable`: it has none until the source answers. */
  status: v.picklist(["stale", "unavailable"]),
  reason: v.string(),
});

/**
 * A pack document's source as the listing and its page show it: `current`, `stale` (the last
 * known sub-tools are shown) or `unavailable` (none), why, how many sub-tools it offers, and what
 * its source offered that the pack leaves out (with the reason).
 */
export const PackStateSchema = v.object({
  pack: v.string(),
  layer: LayerSchema,
  status: v.picklist(["current", "stale", "unavailable"]),
  reason: v.optional(v.string()),
  subTools: v.number(),
  leftOut: v.array(v.string()),
});

/**
 * Who wrote a document and when (spec §2: they live on the document), ISO-8601 times: `createdBy`
 * is the creating token's subject (`sub`), kept across updates, `updatedBy` the last writer's.
 * Null for bundled and built-in tools, and where the store has no record (a document written
 * straight into the store has only `updatedAt`).
 */
const AuditFields = {
  createdAt: v.nullable(v.string()),
  createdBy: v.nullable(v.string()),
  updatedAt: v.nullable(v.string()),
  updatedBy: v.nullable(v.string()),
};

/**
 * `ToolSummary` (API.md "Tool configurations"); `pack` names the pack document of a sub-tool,
 * `stale` marks a remote-backed tool listed from its last known list (its source is unreachable).
 */
export const ToolSummarySchema = v.object({
  name: v.string(),
  type: v.string(),
  description: v.string(),
  layer: LayerSchema,
  primary: v.boolean(),
  labels: NamesSchema,
  enabled: v.boolean(),
  pack: v.optional(v.string()),
  /** A sub-tool's family inside its pack as its source groups it (an OpenAPI tag): triage keeps it whole. */
  family: v.optional(v.string()),
  stale: v.optional(v.literal(true)),
  ...AuditFields,
});

/**
 * A document under `server-tools/` the listing cannot offer: its path breaks the name rules (it
 * was written straight into the store), it does not parse or validate, it names a tool of the
 * capability floor, or its source's tools cannot be used. No selector, manifest or meta-tool
 * offers it; `message` and `errors` say why.
 */
const InvalidToolDocumentSchema = v.object({
  path: v.string(),
  layer: v.picklist(["project", "tenant", "bundled"]),
  message: v.string(),
  errors: v.array(
    v.object({ path: v.string(), message: v.string(), line: v.optional(v.pipe(v.number(), v.integer())) }),
  ),
});

export const ToolListSchema = v.object({
  tools: v.array(ToolSummarySchema),
  invalid: v.array(InvalidToolDocumentSchema),
  /** Pack documents whose source did not answer with a current list (`unavailable`: no sub-tools listed). */
  stalePacks: v.array(StalePackSchema),
  /** Every pack document of the listing with its source's state, failing ones included. */
  packs: v.array(PackStateSchema),
});

/** A tool as `GET T/tools/{name}` answers it: `config` is the normalised document. */
export const ToolViewSchema = v.object({
  name: v.string(),
  layer: LayerSchema,
  etag: v.nullable(v.string()),
  ...AuditFields,
  config: ServerToolConfigSchema,
  inputSchema: JsonObjectSchema,
  /** A sub-tool's pack document and the source's own name of the tool (an MCP tool, an operation). */
  pack: v.optional(v.object({ name: v.string(), sourceName: v.string() })),
  stale: v.optional(v.literal(true)),
  /** A pack document's source state (its sub-tools are `{name}__*`). */
  source: v.optional(PackStateSchema),
});

export const DocumentWrittenSchema = v.object({
  path: v.string(),
  layer: v.picklist(["project", "tenant"]),
  etag: v.string(),
  ...AuditFields,
});

/** `GET /v1/tenants/{tenant}/projects`: the projects that hold documents (at most 1,000; `truncated` when more). */
export const ProjectListSchema = v.object({
  tenant: v.string(),
  projects: NamesSchema,
  tenantLayer: v.boolean(),
  truncated: v.boolean(),
});

/** `GET T/documents`: the addressed layer's own documents (not the cascade), sorted by path. */
export const LayerDocumentsSchema = v.object({
  layer: v.picklist(["project", "tenant"]),
  documents: v.array(v.object({ path: v.string(), etag: v.string(), size: v.number() })),
});

/** A tool call's outcome: a value, the tool's own failure as data, or a client tool to route. */
export const InvocationSchema = v.union([
  v.object({ value: v.unknown(), durationMs: v.number() }),
  v.object({
    error: v.string(),
    message: v.string(),
    status: v.optional(v.number()),
    /** `tool_description`'s `UnknownTools`: the names it looked at that named nothing… */
    unknown: v.optional(NamesSchema),
    /** …and those beyond its 25 per call, which it did not look at. */
    skipped: v.optional(NamesSchema),
    durationMs: v.number(),
  }),
  v.object({ route: v.literal("client"), name: v.string(), params: v.unknown(), durationMs: v.number() }),
]);

/** An entry a resolution or spawn accepted that does nothing as written. */
const RecipeWarningSchema = v.object({
  code: v.picklist([
    "unknown_tool",
    "invalid_tool",
    "unknown_label",
    "not_allowed",
    "matches_nothing",
    "unknown_model_instance",
    "tool_search_added",
  ]),
  /** The request field the entry is in (`allowedToolsAdd`, `models`, …). */
  list: v.string(),
  entry: v.string(),
  message: v.string(),
});

/**
 * `POST T/recipes/resolve`: names (plain tools and the sub-tools packs offer now), packs by
 * reference (every sub-tool their source offers when a turn reads it, but `excludedTools`), the
 * referenced packs whose source is not current, and warnings for entries that named nothing.
 */
export const RecipeResolutionSchema = v.object({
  allowedTools: NamesSchema,
  allowedPacks: NamesSchema,
  excludedTools: NamesSchema,
  stalePacks: v.array(StalePackSchema),
  warnings: v.array(RecipeWarningSchema),
});

/** `POST T/processes` → 201: the frozen allow set, and what the spawn should tell its caller. */
export const SpawnedProcessSchema = v.object({
  processId: v.string(),
  allowedTools: NamesSchema,
  allowedPacks: NamesSchema,
  excludedTools: NamesSchema,
  stalePacks: v.array(StalePackSchema),
  warnings: v.array(RecipeWarningSchema),
});

export const ProcessRecordSchema = v.object({
  tenant: v.string(),
  project: v.string(),
  processId: v.string(),
  createdAt: v.string(),
  recipe: v.nullable(v.string()),
  engine: v.nullable(v.string()),
  role: v.string(),
  allowedTools: NamesSchema,
  /** Packs allowed by reference: each sub-tool their source offers at the time, but `excludedTools`. */
  allowedPacks: NamesSchema,
  excludedTools: NamesSchema,
  allowedToolsAdd: NamesSchema,
  allowedToolsKeep: NamesSchema,
  allowedToolsDefer: NamesSchema,
  allowedToolsDropFirst: NamesSchema,
  models: NamesSchema,
  clientTools: v.array(
    v.object({
      name: v.string(),
      description: v.string(),
      inputSchema: JsonObjectSchema,
      packHint: v.optional(v.string()),
    }),
  ),
  /** Tool name → last use, epoch milliseconds. */
  activatedTools: v.record(v.string(), v.number()),
  /**
   * Epoch milliseconds at which the process expires unless a request reads it before
   * (`VANCE_PROCESS_IDLE_TTL_SECONDS`); later requests answer 404 `process_not_found`. Absent on
   * processes spawned before idle expiry.
   */
  expiresAt: v.optional(v.number()),
});

const OpenAiToolSchema = v.object({
  type: v.literal("function"),
  function: v.object({ name: v.string(), description: v.string(), parameters: JsonObjectSchema }),
});

const AnthropicToolSchema = v.object({
  name: v.string(),
  description: v.string(),
  input_schema: JsonObjectSchema,
});

/** A turn's manifest (API.md "Recipes and processes"); `tools` in the requested wire format. */
export const ManifestSchema = v.object({
  tools: v.union([v.array(OpenAiToolSchema), v.array(AnthropicToolSchema)]),
  primary: NamesSchema,
  deferred: v.optional(
    v.pipe(NamesSchema, v.description("left out when `?names=` is this answer's `namesVersion`")),
  ),
  demoted: v.optional(
    v.pipe(NamesSchema, v.description("left out when `?names=` is this answer's `namesVersion`")),
  ),
  namesVersion: v.pipe(
    v.string(),
    v.description(
      "the version of `deferred` and `demoted` (equal lists, equal versions): sent back as `?names=`, the answer leaves them out while they are the same",
    ),
  ),
  budget: v.object({
    maxTools: v.nullable(v.number()),
    reserve: v.number(),
    limit: v.nullable(v.number()),
    /** The chain's maxToolTokens: tokens the tools array's schemas may take (estimated); absent for none. */
    maxToolTokens: v.optional(v.number()),
  }),
  /** Deferred minus demoted (spec §14.3): stable across turns that only change the demotions. */
  discoveryBlock: v.string(),
  demotedDiscoveryBlock: v.string(),
  /** The process's packs whose source did not answer with a current list (their line in `discoveryBlock` says so). */
  stalePacks: v.array(StalePackSchema),
});

export const ToolUsageSchema = v.object({
  roles: v.array(
    v.object({
      role: v.string(),
      tools: v.array(
        v.object({ name: v.string(), calls: v.number(), discoveryHits: v.number(), lastUsedAt: v.string() }),
      ),
    }),
  ),
});

export const SecretListSchema = v.object({
  secrets: v.array(v.object({ name: v.string(), updatedAt: v.string() })),
});

export const ChainBudgetSchema = v.object({
  maxTools: v.nullable(v.number()),
  maxToolTokens: v.optional(v.number()),
  models: v.array(
    v.object({
      model: v.string(),
      maxTools: v.nullable(v.number()),
      source: v.picklist(["model", "provider", "observed", "none"]),
      maxToolTokens: v.optional(v.number()),
    }),
  ),
});

export const ObservedLimitSchema = v.object({ model: v.string(), maxTools: v.number() });

/** The learned limits an admin sees (`GET /v1/models/observed-limits`). */
export const LearnedLimitsSchema = v.object({
  limits: v.array(
    v.object({
      scope: v.pipe(v.string(), v.description("`*` (binds every tenant) or the reporting tenant")),
      instance: v.pipe(v.string(), v.description("the catalog endpoint the limit binds")),
      model: v.pipe(v.string(), v.description("the model whose rejection taught it")),
      maxTools: v.number(),
      observedAt: v.pipe(v.string(), v.description("ISO-8601")),
    }),
  ),
});

/** One provider of the compiled catalog (`GET /v1/models`); the secret holding its key is never shown. */
const ProviderViewSchema = v.object({
  instance: v.string(),
  wireType: v.nullable(v.string()),
  /** As the provider document says (`0`: no limit); null when it names none. */
  maxTools: v.nullable(v.number()),
  maxToolTokens: v.optional(v.number()),
  baseUrl: v.optional(v.string()),
  models: v.array(
    v.object({
      slug: v.string(),
      maxTools: v.optional(v.number()),
      maxToolTokens: v.optional(v.number()),
      size: v.optional(v.picklist(MODEL_SIZES)),
    }),
  ),
});

/** `GET /v1/models`: the compiled catalog, providers by instance. */
export const ModelCatalogSchema = v.object({ providers: v.array(ProviderViewSchema) });

/** A catalog document as `PUT /v1/models/{instance}/{file}` takes it: a provider's (`_provider`) or a model's. */
export const CatalogDocumentSchema = v.union([ProviderSpecSchema, ModelSpecSchema]);

/** `PUT /v1/models/{instance}/{file}`: the stored path and the instance as the rebuilt catalog shows it. */
export const CatalogWrittenSchema = v.object({ path: v.string(), provider: ProviderViewSchema });

/** `POST T/diagnostics/empty-response`: what the diagnosis found, and whether this report was the first. */
export const EmptyResponseDiagnosisSchema = v.object({
  kind: v.picklist(["phantom", "blank", "skipped"]),
  candidates: v.array(v.object({ name: v.string(), origin: v.picklist(["prompt", "user", "context"]) })),
  firstReport: v.boolean(),
});

/** One cache: reads answered from it and not; entries, bytes and bounds where the cache counts them; thrash windows where it has tenants' shares. */
const ListedCacheSchema = v.object({
  name: v.string(),
  hits: v.number(),
  misses: v.number(),
  entries: v.optional(v.number()),
  maxEntries: v.optional(v.number()),
  bytes: v.optional(v.number()),
  maxBytes: v.optional(v.number()),
  /** Windows in which one tenant's own entries evicted more than its share of the cache (each logged once as `cache_thrash`). */
  thrashes: v.optional(v.number()),
});

/** `GET /v1/metrics`: this instance's caches (every one, by name, sorted) and pool since it started. */
export const MetricsSchema = v.object({
  caches: v.array(ListedCacheSchema),
  generations: v.object({
    reads: v.number(),
    bumps: v.number(),
    /** Calls of `read` answered by a read another request of this instance had asked for. */
    sharedReads: v.number(),
  }),
  /** Packs by their source's state when this instance last listed them (`vance.packs.sources`). */
  packs: v.object({ current: v.number(), stale: v.number(), unavailable: v.number(), invalid: v.number() }),
  /** Tokens remembered as verified, and each trusted issuer's keys: how many, reads, failed reads. */
  identity: v.object({
    verifiedTokens: v.number(),
    issuers: v.array(
      v.object({ issuer: v.string(), keys: v.number(), reads: v.number(), failures: v.number() }),
    ),
  }),
  /** The script pool: its threads, runs, busy and rate-limited answers and queued runs; null before a lazy pool started. */
  scripts: v.nullable(
    v.object({
      workers: v.object({
        idle: v.number(),
        busy: v.number(),
        starting: v.number(),
        started: v.number(),
        /** Threads stopped: `retired` idle ones, the rest ended mid-run (a run that ignored its deadline or cancel: a regex). */
        terminated: v.number(),
        /** Idle threads stopped above the warm ones. A cancelled run stops on its thread, which is kept. */
        retired: v.number(),
      }),
      runs: v.number(),
      busy: v.number(),
      rateLimited: v.number(),
      queued: v.number(),
    }),
  ),
  /**
   * Where JSON Schemas were compiled: Ajv compiles on the serving thread, those of them of 200
   * nodes and more, and validators compiled on a worker thread and loaded here.
   */
  schemaCompiles: v.object({
    servingThread: v.number(),
    servingThreadLarge: v.number(),
    worker: v.number(),
  }),
});

export type Metrics = v.InferOutput<typeof MetricsSchema>;

/** RFC 9728 protected-resource metadata: the resource, who issues its tokens, the scopes to ask for. */
export const ProtectedResourceSchema = v.object({
  resource: v.string(),
  authorization_servers: NamesSchema,
  scopes_supported: v.optional(NamesSchema),
  bearer_methods_supported: NamesSchema,
  resource_name: v.string(),
  resource_documentation: v.string(),
});

/** RFC 8414 metadata of the development issuer (the service's own tokens), which issues none over OAuth. */
export const AuthorizationServerSchema = v.object({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  registration_endpoint: v.string(),
  response_types_supported: NamesSchema,
  grant_types_supported: NamesSchema,
  code_challenge_methods_supported: NamesSchema,
  service_documentation: v.string(),
});
