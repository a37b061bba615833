import { decodeSecretsKey } from "@vance/adapters";
import {
  DEFAULT_PARSED_CACHE_BYTES,
  DEFAULT_PROCESS_IDLE_TTL_MS,
  DEFAULT_QUOTAS,
  DEFAULT_SNAPSHOT_CACHE_BYTES,
  DEFAULT_SOURCE_CACHE_BYTES,
  DEFAULT_TENANT_SHARE,
  issuesToFieldErrors,
  MIB,
  commaList as splitList,
  trimChar,
} from "@vance/core";
import { DEFAULT_WORKER_NICE, POOL_DEFAULTS, tenantShareProblem } from "@vance/sandbox/pool-defaults";
import * as v from "valibot";
import { IssuersSettingSchema } from "./identity/issuers";

/** `true`/`1` or `false`/`0`; unset is `fallback`. */
const flag = (fallback: "true" | "false") =>
  v.pipe(
    v.optional(v.picklist(["true", "false", "1", "0"]), fallback),
    v.transform((value) => value === "true" || value === "1"),
  );

const Flag = flag("false");

const Count = (name: string, fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.transform(Number),
    v.integer(`${name} must be a whole number`),
    v.minValue(0, `${name} must not be negative`),
  );

/** A comma-separated list, entries trimmed, empty ones dropped; unset is `fallback`'s list. */
const commaList = (fallback = "") =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.transform((list: string) => splitList(list)),
  );

/** A comma-separated list; unset is the empty list. */
const CommaList = commaList();

/** A whole number of at least `least`, or unset (the component's own default applies). */
const OptionalWhole = (name: string, least: number) =>
  v.optional(
    v.pipe(
      v.string(),
      v.transform(Number),
      v.integer(`${name} must be a whole number`),
      v.minValue(least, `${name} must be at least ${least}`),
    ),
  );

/** The largest `rest` response body unless `VANCE_REST_MAX_RESPONSE_BYTES` says otherwise. */
export const DEFAULT_REST_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Where the embedded default keeps documents, state and its generated secrets. */
export const DEFAULT_DATA_DIR = "./.data";

/** `scheme://host[:port]`, as a browser sends it in `Origin` (a trailing `/` is tolerated). */
function isOrigin(entry: string): boolean {
  if (!URL.canParse(entry)) return false;
  const url = new URL(entry);
  return url.origin !== "null" && url.origin === entry.replace(/\/$/, "").toLowerCase();
}

/** One entry of `VANCE_DEFAULT_MODEL_INSTANCE`: `instance` or `tenant=instance`, spelled like ids. */
const DEFAULT_INSTANCE_ENTRY = /^(?:[a-z0-9][a-z0-9_-]{0,62}=)?[a-z0-9][a-z0-9_-]{0,62}$/;

/** The default instance per tenant: the `tenant=instance` entries, else the bare one (the last wins). */
function defaultInstances(entries: string[]): (tenant: string) => string | undefined {
  let fallback: string | undefined;
  const byTenant = new Map<string, string>();
  for (const entry of entries) {
    const [tenant, instance] = entry.includes("=") ? entry.split("=") : [undefined, entry];
    if (tenant === undefined) fallback = instance;
    else byTenant.set(tenant, instance!);
  }
  return (tenant) => byTenant.get(tenant) ?? fallback;
}

/**
 * The service's settings, read once from the environment at the entry and validated here;
 * a bad or missing value fails fast naming the variable.
 */
export const ConfigSchema = v.pipe(
  v.object({
    PORT: v.pipe(
      v.optional(v.string(), "8787"),
      v.transform(Number),
      v.integer("PORT must be a port number (1 to 65535)"),
      v.minValue(1, "PORT must be a port number (1 to 65535)"),
      v.maxValue(65535, "PORT must be a port number (1 to 65535)"),
    ),
    HOST: v.optional(v.string(), "127.0.0.1"),
    VANCE_DATA_DIR: v.optional(v.string(), DEFAULT_DATA_DIR),
    VANCE_JWT_SECRET: v.optional(
      v.pipe(v.string(), v.minLength(16, "VANCE_JWT_SECRET must have at least 16 characters")),
    ),
    /**
     * Whether `/v1` takes the service's own HS256 tokens (signed with `VANCE_JWT_SECRET`): on for
     * `npm start`; the Lambda entry (production) defaults it off.
     */
    VANCE_LOCAL_TOKENS: flag("true"),
    /** The trusted identity providers, a JSON list (see `IssuerSchema`). */
    VANCE_TOKEN_ISSUERS: IssuersSettingSchema,
    /** The service's base URL as clients reach it, named in OAuth metadata; unset, each request's origin. */
    VANCE_PUBLIC_URL: v.optional(
      v.pipe(
        v.string(),
        v.url("VANCE_PUBLIC_URL must be a URL"),
        v.check((url) => /^https?:\/\//.test(url), "VANCE_PUBLIC_URL must be an http(s) URL"),
        v.check(
          (url) => !new URL(url).search && !new URL(url).hash,
          "VANCE_PUBLIC_URL must have no query or fragment",
        ),
        v.transform((url) => trimChar(url, "/", "end")),
      ),
    ),
    /** Seals tenant secrets (AES-256-GCM): the base64 of 32 bytes, e.g. `openssl rand -base64 32`. */
    VANCE_SECRETS_KEY: v.optional(
      v.pipe(
        v.string(),
        v.rawTransform(({ dataset, addIssue, NEVER }) => {
          const key = decodeSecretsKey(dataset.value);
          if (key) return key;
          addIssue({
            message: "VANCE_SECRETS_KEY must be the base64 of exactly 32 bytes (openssl rand -base64 32)",
          });
          return NEVER;
        }),
      ),
    ),
    VANCE_STORE: v.optional(v.picklist(["fs", "s3"], "VANCE_STORE must be 'fs' or 's3'"), "fs"),
    VANCE_DOCUMENTS_BUCKET: v.optional(v.string()),
    VANCE_CATALOG_BUCKET: v.optional(v.string()),
    VANCE_S3_ENDPOINT: v.optional(v.pipe(v.string(), v.url("VANCE_S3_ENDPOINT must be a URL"))),
    VANCE_S3_FORCE_PATH_STYLE: Flag,
    VANCE_STATE: v.optional(
      v.picklist(["sqlite", "dynamodb"], "VANCE_STATE must be 'sqlite' or 'dynamodb'"),
      "sqlite",
    ),
    VANCE_STATE_TABLE: v.optional(v.string()),
    VANCE_DYNAMODB_ENDPOINT: v.optional(v.pipe(v.string(), v.url("VANCE_DYNAMODB_ENDPOINT must be a URL"))),
    /** Longest one S3 or DynamoDB request may take, retries included, before the route answers 503. */
    VANCE_STORE_TIMEOUT_MS: v.pipe(
      Count("VANCE_STORE_TIMEOUT_MS", "3000"),
      v.minValue(100, "VANCE_STORE_TIMEOUT_MS must be at least 100"),
    ),
    VANCE_EXTERNAL_RESERVE: Count("VANCE_EXTERNAL_RESERVE", "1"),
    VANCE_ACTIVATION_TTL_SECONDS: Count("VANCE_ACTIVATION_TTL_SECONDS", "1800"),
    VANCE_MAX_ACTIVATED: Count("VANCE_MAX_ACTIVATED", "15"),
    VANCE_REST_MAX_RESPONSE_BYTES: v.pipe(
      Count("VANCE_REST_MAX_RESPONSE_BYTES", String(DEFAULT_REST_MAX_RESPONSE_BYTES)),
      v.minValue(1, "VANCE_REST_MAX_RESPONSE_BYTES must be at least 1"),
    ),
    /** Document bodies and layer listings a warm instance keeps, in MiB. */
    VANCE_CACHE_DOCUMENTS_MB: v.pipe(
      Count("VANCE_CACHE_DOCUMENTS_MB", "64"),
      v.minValue(1, "VANCE_CACHE_DOCUMENTS_MB must be at least 1"),
    ),
    /** Parsed tool documents and merged tool listings a warm instance keeps, in MiB. */
    VANCE_CACHE_PARSED_MB: v.pipe(
      Count("VANCE_CACHE_PARSED_MB", String(DEFAULT_PARSED_CACHE_BYTES / MIB)),
      v.minValue(1, "VANCE_CACHE_PARSED_MB must be at least 1"),
    ),
    /** Remote sources' tool lists (MCP servers, OpenAPI packs) a warm instance keeps, in MiB. */
    VANCE_CACHE_SOURCES_MB: v.pipe(
      Count("VANCE_CACHE_SOURCES_MB", String(DEFAULT_SOURCE_CACHE_BYTES / MIB)),
      v.minValue(1, "VANCE_CACHE_SOURCES_MB must be at least 1"),
    ),
    /** Tool snapshots (a project's listing and the views derived from it) a warm instance keeps, in MiB. */
    VANCE_CACHE_SNAPSHOTS_MB: v.pipe(
      Count("VANCE_CACHE_SNAPSHOTS_MB", String(DEFAULT_SNAPSHOT_CACHE_BYTES / MIB)),
      v.minValue(1, "VANCE_CACHE_SNAPSHOTS_MB must be at least 1"),
    ),
    /** The percentage of the document, parsed, snapshot, source and compiled-schema caches one tenant may hold. */
    VANCE_CACHE_TENANT_PERCENT: v.pipe(
      Count("VANCE_CACHE_TENANT_PERCENT", String(DEFAULT_TENANT_SHARE * 100)),
      v.minValue(1, "VANCE_CACHE_TENANT_PERCENT must be at least 1"),
      v.maxValue(100, "VANCE_CACHE_TENANT_PERCENT must be at most 100"),
    ),
    /** Processes (MCP sessions included) one tenant may spawn per clock hour; past it 429 `quota_exceeded`. */
    VANCE_QUOTA_PROCESSES_PER_HOUR: v.pipe(
      Count("VANCE_QUOTA_PROCESSES_PER_HOUR", String(DEFAULT_QUOTAS.processesPerHour)),
      v.minValue(1, "VANCE_QUOTA_PROCESSES_PER_HOUR must be at least 1"),
    ),
    /** Processes (MCP sessions included) one tenant may have stored at once, spawned and not ended; past it 429 `quota_exceeded`. */
    VANCE_QUOTA_LIVE_PROCESSES: v.pipe(
      Count("VANCE_QUOTA_LIVE_PROCESSES", String(DEFAULT_QUOTAS.liveProcesses)),
      v.minValue(1, "VANCE_QUOTA_LIVE_PROCESSES must be at least 1"),
    ),
    /**
     * How long a process lives without a request that reads it; after it the process answers 404
     * `process_not_found` and no longer counts against `VANCE_QUOTA_LIVE_PROCESSES`.
     */
    VANCE_PROCESS_IDLE_TTL_SECONDS: v.pipe(
      Count("VANCE_PROCESS_IDLE_TTL_SECONDS", String(DEFAULT_PROCESS_IDLE_TTL_MS / 1000)),
      v.minValue(60, "VANCE_PROCESS_IDLE_TTL_SECONDS must be at least 60"),
    ),
    /** The bytes of one tenant's documents, every layer together, in MiB; past it 429 `quota_exceeded`. */
    VANCE_QUOTA_DOCUMENT_MB: v.pipe(
      Count("VANCE_QUOTA_DOCUMENT_MB", String(DEFAULT_QUOTAS.documentBytes / MIB)),
      v.minValue(1, "VANCE_QUOTA_DOCUMENT_MB must be at least 1"),
    ),
    /** Safety net: nothing cached is used longer than this without reading the store again. */
    /** How long a role's usage counters, read for a demoting manifest's triage, serve later manifests (0: every time). */
    VANCE_DEMAND_CACHE_SECONDS: Count("VANCE_DEMAND_CACHE_SECONDS", "5"),
    /** How long a remote source's tool list (MCP `tools/list`, an OpenAPI document) serves before it is read again. */
    VANCE_SOURCE_TTL_SECONDS: v.pipe(
      Count("VANCE_SOURCE_TTL_SECONDS", "60"),
      v.minValue(1, "VANCE_SOURCE_TTL_SECONDS must be at least 1"),
    ),
    /** How long a listing waits for a remote source before it answers with the last known tools. */
    VANCE_SOURCE_WAIT_MS: Count("VANCE_SOURCE_WAIT_MS", "2000"),
    VANCE_CACHE_REVALIDATE_SECONDS: v.pipe(
      Count("VANCE_CACHE_REVALIDATE_SECONDS", "300"),
      v.minValue(1, "VANCE_CACHE_REVALIDATE_SECONDS must be at least 1"),
    ),
    /** The local server scans its stores this often for writes made behind its back; 0 turns it off. */
    VANCE_STORE_SCAN_SECONDS: Count("VANCE_STORE_SCAN_SECONDS", "30"),
    VANCE_SCRIPT_WORKER: v.optional(v.string()),
    /** The bundled task worker (OpenAPI compiles); unset, `npm run build:worker`'s dist/parse-worker.mjs. */
    VANCE_PARSE_WORKER: v.optional(v.string()),
    /** QuickJS's `.wasm` file; unset, the installed package's (a function bundle ships a copy). */
    VANCE_SCRIPT_WASM: v.optional(v.string()),
    VANCE_SCRIPT_WORKERS: OptionalWhole("VANCE_SCRIPT_WORKERS", 0),
    VANCE_SCRIPT_MAX_WORKERS: OptionalWhole("VANCE_SCRIPT_MAX_WORKERS", 1),
    VANCE_SCRIPT_MAX_RUNS_PER_TENANT: OptionalWhole("VANCE_SCRIPT_MAX_RUNS_PER_TENANT", 1),
    VANCE_SCRIPT_MAX_QUEUED_PER_TENANT: OptionalWhole("VANCE_SCRIPT_MAX_QUEUED_PER_TENANT", 0),
    /** A tenant's share of the script threads, its nested runs included (less than VANCE_SCRIPT_MAX_WORKERS). */
    VANCE_SCRIPT_MAX_THREADS_PER_TENANT: OptionalWhole("VANCE_SCRIPT_MAX_THREADS_PER_TENANT", 1),
    /** Seconds of script thread time one tenant may spend per minute; beyond, 429 `rate_limited`. */
    VANCE_SCRIPT_SECONDS_PER_MINUTE: OptionalWhole("VANCE_SCRIPT_SECONDS_PER_MINUTE", 1),
    /**
     * Nice levels the script and parse threads run below the serving thread (Linux; 0 to 19), so
     * that the thread answering every tenant wins the CPU over their work.
     */
    VANCE_WORKER_NICE: v.pipe(
      Count("VANCE_WORKER_NICE", String(DEFAULT_WORKER_NICE)),
      v.maxValue(19, "VANCE_WORKER_NICE must be at most 19"),
    ),
    VANCE_DEFAULTS_DIR: v.optional(v.string()),
    VANCE_NETWORK_ALLOWLIST: CommaList,
    /**
     * Browser origins the MCP endpoints answer, comma-separated (`http://localhost:6274`).
     * Requests without `Origin` (programs, not pages) always pass; so does the server's own
     * origin when it listens on loopback.
     */
    VANCE_MCP_ALLOWED_ORIGINS: v.pipe(
      CommaList,
      v.check(
        (list) => list.every(isOrigin),
        "VANCE_MCP_ALLOWED_ORIGINS must be comma-separated origins such as http://localhost:6274",
      ),
      v.transform((list) => list.map((origin) => new URL(origin).origin)),
    ),
    /** `trace` adds the TRACE lines (every demoted tool's name) to the INFO and WARN lines. */
    VANCE_LOG_LEVEL: v.optional(
      v.picklist(["info", "trace"], "VANCE_LOG_LEVEL must be 'info' or 'trace'"),
      "info",
    ),
    /**
     * The catalog instance whose models `prompt_template`'s `modelSize` picks from: `instance`
     * for every tenant, `tenant=instance` entries for single tenants, comma-separated.
     */
    VANCE_DEFAULT_MODEL_INSTANCE: v.pipe(
      commaList("openai"),
      v.check(
        (entries) => entries.every((entry) => DEFAULT_INSTANCE_ENTRY.test(entry)),
        "VANCE_DEFAULT_MODEL_INSTANCE must be an instance (openai) and/or tenant=instance entries, comma-separated",
      ),
      v.transform(defaultInstances),
    ),
    /** Where phantom empty-response diagnoses are posted (JSON); unset: the WARN line only. */
    VANCE_DIAGNOSTIC_WEBHOOK_URL: v.optional(
      v.pipe(v.string(), v.url("VANCE_DIAGNOSTIC_WEBHOOK_URL must be a URL")),
    ),
    /** The webhook gets the same tenant and phantom name at most once within this many seconds. */
    VANCE_DIAGNOSTIC_DEDUP_SECONDS: v.pipe(
      Count("VANCE_DIAGNOSTIC_DEDUP_SECONDS", "3600"),
      v.minValue(1, "VANCE_DIAGNOSTIC_DEDUP_SECONDS must be at least 1"),
    ),
    AWS_REGION: v.optional(v.string(), "us-east-1"),
  }),
  // Companion settings: partial checks run even when other settings are bad, and each names
  // the missing variable, so one start reports everything that is wrong.
  v.forward(
    v.partialCheck(
      [["VANCE_STORE"], ["VANCE_DOCUMENTS_BUCKET"]],
      (env) => env.VANCE_STORE !== "s3" || env.VANCE_DOCUMENTS_BUCKET !== undefined,
      "required when VANCE_STORE=s3",
    ),
    ["VANCE_DOCUMENTS_BUCKET"],
  ),
  v.forward(
    v.partialCheck(
      [["VANCE_STORE"], ["VANCE_CATALOG_BUCKET"]],
      (env) => env.VANCE_STORE !== "s3" || env.VANCE_CATALOG_BUCKET !== undefined,
      "required when VANCE_STORE=s3",
    ),
    ["VANCE_CATALOG_BUCKET"],
  ),
  v.forward(
    v.partialCheck(
      [["VANCE_LOCAL_TOKENS"], ["VANCE_TOKEN_ISSUERS"]],
      (env) => env.VANCE_LOCAL_TOKENS || env.VANCE_TOKEN_ISSUERS.length > 0,
      "required when VANCE_LOCAL_TOKENS is off (no token could be verified): a JSON list of trusted issuers, or VANCE_LOCAL_TOKENS=true",
    ),
    ["VANCE_TOKEN_ISSUERS"],
  ),
  v.forward(
    v.partialCheck(
      [["VANCE_SCRIPT_MAX_THREADS_PER_TENANT"], ["VANCE_SCRIPT_MAX_WORKERS"]],
      (env) =>
        env.VANCE_SCRIPT_MAX_THREADS_PER_TENANT === undefined ||
        tenantShareProblem(
          env.VANCE_SCRIPT_MAX_THREADS_PER_TENANT,
          env.VANCE_SCRIPT_MAX_WORKERS ?? POOL_DEFAULTS.maxWorkers,
        ) === null,
      "must be less than VANCE_SCRIPT_MAX_WORKERS (default 32): no tenant may hold every script thread",
    ),
    ["VANCE_SCRIPT_MAX_THREADS_PER_TENANT"],
  ),
  v.forward(
    v.partialCheck(
      [["VANCE_STATE"], ["VANCE_STATE_TABLE"]],
      (env) => env.VANCE_STATE !== "dynamodb" || env.VANCE_STATE_TABLE !== undefined,
      "required when VANCE_STATE=dynamodb",
    ),
    ["VANCE_STATE_TABLE"],
  ),
);

export type Config = v.InferOutput<typeof ConfigSchema>;

/**
 * Validates the environment; throws one error listing every bad or missing setting. `require`
 * names settings an entry cannot do without (Lambda: `VANCE_JWT_SECRET`), reported in the same error.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  options: { readonly require?: readonly (keyof Config)[] } = {},
): Config {
  // An empty variable means "not set", as deploy tools often write them.
  const set = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ""),
  );
  const result = v.safeParse(ConfigSchema, set);
  // One line per variable: `PORT=abc` is one mistake, not "no integer" and "not ≥ 1" besides.
  const lines = result.success
    ? []
    : issuesToFieldErrors(result.issues, undefined).map(
        (error) => `- ${error.path || "settings"}: ${error.message}`,
      );
  for (const name of options.require ?? []) {
    if (set[name] === undefined) lines.push(`- ${name}: required here`);
  }
  if (result.success && lines.length === 0) return result.output;
  throw new Error(`invalid configuration:\n${lines.join("\n")}`);
}
