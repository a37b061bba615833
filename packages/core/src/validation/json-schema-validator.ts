import type { Ajv, CodeOptions, ErrorObject, ValidateFunction } from "ajv";
import type { RE2JS } from "re2js";
import { CacheCounters, type CacheReport } from "../cache/cache-registry";
import { TenantByteCache } from "../cache/tenant-byte-cache";
import { Errors, type FieldError, VanceError } from "../errors";
import type { JsonSchema } from "../json-schema";
import { jsonSchemaSizeProblem, measureJsonSchema } from "../json-schema-size";
import type { Logger } from "../ports/logger";
import { loadRe2 } from "../re2";
import { TimeAllowance } from "../time-allowance";

/**
 * A JSON Schema made ready to check values: a validator, or why the schema cannot be used.
 * Tenants and callers supply schemas, so an unusable one is an expected outcome, not a throw.
 */
export type CompiledJsonSchema =
  | { readonly ok: true; readonly validate: (value: unknown) => FieldError[] }
  | { readonly ok: false; readonly message: string };

/**
 * Heap a compiled schema keeps, estimated from measurements on Node 20: a fixed part, a multiple
 * of the schema's JSON text (generated code, the schema object) and each distinct pattern's RE2
 * program, which grows with its instructions (`^.{0,255}$` has 516 and keeps ~280 KiB).
 */
const ENTRY_BYTES = 4 * 1024;
const BYTES_PER_SCHEMA_CHAR = 24;
const BYTES_PER_PATTERN = 2 * 1024;
const BYTES_PER_PATTERN_INSTRUCTION = 640;
/** RE2 instructions one schema's patterns may have in all (~6 MiB of heap). */
export const MAX_PATTERN_INSTRUCTIONS = 10_000;
/** Distinct patterns one schema may have: compiling one for RE2 costs ~0.3 ms on the serving thread. */
export const MAX_PATTERNS = 64;

/**
 * Each tenant's share of the serving thread's time spent compiling schemas that are not cached
 * (`compileAsTenant`): compiles of one tenant run one at a time (`turnsPerTenant`), at most
 * `queuedPerTenant` more wait, each at most `maxWaitMs` (beyond, 429 `busy`); after each compile
 * the tenant's turn rests `restPerCompile` times as long, and together its compiles take at most
 * `msPerMinute` of the thread per minute (beyond, 429 `rate_limited`). A compile at the size caps
 * costs ~0.1-0.3 s here, so one tenant keeps the thread at most that long at a time, at most a
 * third of it while it floods, and a sixth of it over a minute.
 */
export const SCHEMA_COMPILE_SHARES: SchemaCompileShares = Object.freeze({
  turnsPerTenant: 1,
  queuedPerTenant: 8,
  maxWaitMs: 5_000,
  restPerCompile: 2,
  msPerMinute: 10_000,
});

/** How the serving thread's compile time is shared among tenants (`SCHEMA_COMPILE_SHARES`). */
export interface SchemaCompileShares {
  readonly turnsPerTenant: number;
  readonly queuedPerTenant: number;
  readonly maxWaitMs: number;
  readonly restPerCompile: number;
  readonly msPerMinute: number;
}

/** A compiled schema as the cache keeps it, with its estimated heap bytes. */
interface CachedSchema {
  readonly result: CompiledJsonSchema;
  readonly bytes: number;
}

/** Whom a compile outside every tenant's scope is charged to (no tenant id is empty). */
const UNATTRIBUTED = "";

/** Bounds of the compiled-schema cache: entries, and estimated heap bytes (see `ENTRY_BYTES`). */
export const JSON_SCHEMA_CACHE_LIMITS = { maxEntries: 1024, maxBytes: 32 * 1024 * 1024 } as const;

/**
 * Checks elsewhere — on a worker thread — whether a tenant's schema can be a tool's input schema:
 * why not, or null (`JsonSchemaValidator.inputSchemaProblem` there). Its compile never runs on
 * the serving thread.
 */
export type InputSchemaCheck = (tenant: string, schema: JsonSchema) => Promise<string | null>;

/**
 * A schema compiled elsewhere (a worker thread, `JsonSchemaValidator.compileSource` there): the
 * validator's code, which the serving thread only loads, or why the schema is unusable.
 */
export type CompiledSchemaSource =
  | { readonly ok: true; readonly source: string }
  | { readonly ok: false; readonly message: string };

/**
 * Compiles a tenant's schema elsewhere — on a worker thread — into validator code. Throws 429
 * `busy` when the tenant's place there is taken past its wait.
 */
export type SchemaCompileOffload = (tenant: string, schema: JsonSchema) => Promise<CompiledSchemaSource>;

/**
 * Where this instance's schemas were compiled since it started: Ajv compiles on this (the
 * serving) thread, those of them of at least {@link OFFLOAD_MIN_NODES} nodes, and validators
 * compiled on a worker thread and loaded here (`/v1/metrics`, `schemaCompiles`).
 */
export interface SchemaCompileCounts {
  readonly servingThread: number;
  readonly servingThreadLarge: number;
  readonly worker: number;
}

/**
 * Schemas of at least this many nodes (refs expanded) that only need checking go to the
 * {@link InputSchemaCheck} when there is one, and those that must compile to the
 * {@link SchemaCompileOffload}: a compile near the size caps (1,000 nodes) costs
 * 0.1–0.3 s of the thread here, and up to ~0.9 s at a load of 20; one of 200 nodes a fifth of that.
 */
export const OFFLOAD_MIN_NODES = 200;

/** Heap bytes the verdicts of checked schemas may keep: their JSON text is the key. */
const CHECKED_BYTES = 8 * 1024 * 1024;

/**
 * What compiling needs, loaded at the first schema rather than at every cold start: Ajv
 * (~130 KiB of JavaScript with fast-uri) and RE2 (~150 KiB), each an `import()` and so a chunk of
 * its own in the function bundles, and the meta-schema checker (an Ajv with its meta-schemas
 * takes ~10 ms to make). The checker only validates schemas as data and never compiles one, so it
 * keeps nothing of any tenant between calls.
 */
interface Engine {
  readonly Ajv: typeof Ajv;
  readonly RE2JS: typeof RE2JS;
  readonly metaSchemas: Ajv;
  /** Ajv's `standaloneCode`: a compiled validator as the code of a module (`compileSource`). */
  readonly standaloneCode: (ajv: Ajv, validate: ValidateFunction) => string;
  /** What validator code from `standaloneCode` may `require`: Ajv's runtime helpers, by their name there. */
  readonly runtime: Readonly<Record<string, unknown>>;
}

/** The name validator code `require`s the RE2 pattern engine by (`Patterns.engine`'s `code`). */
const RE2_MODULE = "vance:re2";

/** The Ajv runtime helpers validator code may `require` (formats and JTD's are never generated here). */
const RUNTIME_MODULES = ["equal", "ucs2length", "uri"] as const;

/**
 * A CommonJS module's `module.exports` from its `import()` namespace: Node's `default` is
 * `module.exports` (which carries `__esModule` and its own `default`); a bundler's may be the
 * namespace itself.
 */
function commonJsExports(namespace: Record<string, unknown>): unknown {
  const value = namespace.default;
  return typeof value === "object" && value !== null && "__esModule" in value ? value : namespace;
}

let engine: Engine | undefined;
let loading: Promise<Engine> | undefined;

/**
 * Loads what compiling schemas needs, once per process (a failed load is not kept). Every
 * composition root awaits it before serving (the Lambda entry before the first event that is
 * not a health check); the compiling methods are synchronous and throw before it.
 */
export function loadJsonSchemaEngine(): Promise<void> {
  if (engine) return Promise.resolve();
  loading ??= Promise.all([
    import("ajv"),
    loadRe2(),
    import("ajv/dist/standalone/index.js"),
    import("ajv/dist/runtime/equal.js"),
    import("ajv/dist/runtime/ucs2length.js"),
    import("ajv/dist/runtime/uri.js"),
  ]).then(
    ([ajv, re2, standalone, ...runtime]) => {
      // Ajv is CommonJS: Node's namespace has its named exports, esbuild's (the function bundles)
      // only `default`, which is the class in both.
      const AjvClass = ajv.default;
      const standaloneCode = standalone.default as unknown as Engine["standaloneCode"];
      engine = {
        Ajv: AjvClass,
        RE2JS: re2,
        metaSchemas: new AjvClass({ strict: false, logger: false, validateFormats: false }),
        standaloneCode,
        runtime: Object.fromEntries(
          RUNTIME_MODULES.map((name, index) => [
            `ajv/dist/runtime/${name}`,
            commonJsExports(runtime[index] as unknown as Record<string, unknown>),
          ]),
        ),
      };
      return engine;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading.then(() => undefined);
}

/** Whether `loadJsonSchemaEngine` has answered: the synchronous methods work from then on. */
export function jsonSchemaEngineLoaded(): boolean {
  return engine !== undefined;
}

function loadedEngine(): Engine {
  if (!engine)
    throw new Error("the JSON Schema engine is not loaded yet: await loadJsonSchemaEngine() first");
  return engine;
}

/**
 * Compiles and caches JSON Schemas; every caller-supplied schema (tool input schemas, `rest`
 * response schemas) goes through one. The composition root makes one per instance, registers its
 * cache (`/v1/metrics` lists it as `jsonSchemas`) and hands it to what checks schemas: the tool
 * type registry's environment (parsers and types' checks), the dispatcher (and through it each
 * invocation's context), the process records; the OpenAPI compiler's thread has its own.
 *
 * Each schema compiles in its own Ajv instance, so one tenant's `$id` is never visible to
 * another's schema and a `$ref` reaches only its own schema; remote `$ref`s are never fetched
 * (unresolved means unusable). `pattern` and `patternProperties` run on RE2, linear in the input
 * whatever the pattern; a pattern RE2 cannot run (backreferences, lookaround) makes the schema
 * unusable, never a fallback to backtracking. Formats are not checked. A schema beyond
 * `JSON_SCHEMA_LIMITS` is not compiled at all (its compile would hold the serving thread). The
 * engine must be loaded (`loadJsonSchemaEngine`).
 *
 * Compiled schemas are kept by their JSON text: parsed configurations and process records are new
 * objects on every read, and one warm instance serves every tenant, so the cache is bounded by
 * count and by estimated size, not by the number of tools in existence. Unusable schemas are
 * cached too.
 */
export class JsonSchemaValidator {
  /**
   * Compiled schemas by their text, each charged to the tenant that compiled it first (another
   * tenant's use of the same text reads it, uncharged); each tenant at most its share.
   */
  readonly #compiled: TenantByteCache<CachedSchema>;
  /** Whom a compile now is charged to (`asTenant`, a tenant's turn); `UNATTRIBUTED` outside them. */
  #charging = UNATTRIBUTED;
  readonly #reads = new CacheCounters();
  readonly #turns = new Map<string, TenantTurns>();
  readonly #allowance: TimeAllowance;
  readonly #shares: SchemaCompileShares;
  /** The compiles running in a tenant's turn, by tenant and schema text (`compileAsTenant`). */
  readonly #compiling = new Map<string, Promise<CompiledJsonSchema>>();
  /** Set while `inTenantTurn` runs its work with compiling held back (`#probed`). */
  #probe: Probe | null = null;
  /** Where large schemas that only need checking are checked (`inputSchemaProblemsAsTenant`). */
  readonly #offload: InputSchemaCheck | undefined;
  /** Where large schemas that must compile are compiled (`compileAsTenant`). */
  readonly #offloadCompile: SchemaCompileOffload | undefined;
  #compiles = { servingThread: 0, servingThreadLarge: 0, worker: 0 };
  /**
   * The offload's verdicts by schema text: a problem, or "" for a usable input schema; each
   * charged to the tenant whose check found it, each tenant at most its share.
   */
  readonly #checked: TenantByteCache<{ readonly problem: string }>;

  constructor(
    limits: {
      readonly maxEntries: number;
      readonly maxBytes: number;
      /**
       * The part of the entries and bytes one tenant's compiles may hold (compiles outside every
       * tenant's scope count as one more tenant); the whole cache when not given.
       */
      readonly tenantShare?: number;
    } = JSON_SCHEMA_CACHE_LIMITS,
    shares: SchemaCompileShares = SCHEMA_COMPILE_SHARES,
    options: {
      readonly offload?: InputSchemaCheck;
      readonly offloadCompile?: SchemaCompileOffload;
      /** Where a tenant thrashing its share of the caches is named (`cache_thrash`); none by default. */
      readonly logger?: Logger;
      /** The clock of the caches' thrash windows (ms); `Date.now` by default. */
      readonly now?: () => number;
    } = {},
  ) {
    const thrash = {
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.now === undefined ? {} : { now: options.now }),
    };
    this.#compiled = new TenantByteCache<CachedSchema>({
      maxBytes: limits.maxBytes,
      maxEntries: limits.maxEntries,
      sizeOf: (entry) => entry.bytes,
      // Without a share, one tenant's (the parse worker's, the CLI's): the whole cache.
      tenantShare: limits.tenantShare ?? 1,
      name: "jsonSchemas",
      ...thrash,
    });
    this.#checked = new TenantByteCache({
      maxBytes: CHECKED_BYTES,
      sizeOf: (verdict, key) => 2 * (key.length + verdict.problem.length) + 64,
      tenantShare: limits.tenantShare ?? 1,
      name: "jsonSchemas.checked",
      ...thrash,
    });
    this.#shares = shares;
    this.#allowance = new TimeAllowance(shares.msPerMinute, 60_000);
    this.#offload = options.offload;
    this.#offloadCompile = options.offloadCompile;
  }

  /** Where this instance's schemas were compiled since it started ({@link SchemaCompileCounts}). */
  compileCounts(): SchemaCompileCounts {
    return { ...this.#compiles };
  }

  /**
   * Why each of a tenant's schemas cannot be a tool's input schema, or null — what
   * `inputSchemaProblemOf` answers over `compileAsTenant`, for schemas that are only checked (a
   * spawn's client tools). A schema compiled here already answers from it; one of at least
   * `OFFLOAD_MIN_NODES` nodes is checked by the offload (a worker thread) when there is one, its
   * verdict kept by its text, so no compile of it runs on the serving thread; the others compile
   * in the tenant's turn (`compileAsTenant`).
   */
  async inputSchemaProblemsAsTenant(
    tenant: string,
    schemas: readonly JsonSchema[],
  ): Promise<(string | null)[]> {
    const offload = this.#offload;
    const texts = schemas.map((schema) => jsonSchemaText(schema));
    const elsewhere = schemas.map((schema, index) => {
      const text = texts[index];
      if (offload === undefined || text === undefined || this.#compiled.hasShared(text)) return false;
      const nodes = measureJsonSchema(schema, text.length);
      return typeof nodes === "number" && nodes >= OFFLOAD_MIN_NODES;
    });
    const hereAt = schemas.flatMap((_, index) => (elsewhere[index] ? [] : [index]));
    const compiled =
      hereAt.length === 0
        ? []
        : await this.compileAsTenant(
            tenant,
            hereAt.map((index) => schemas[index]!),
          );
    const problems: (string | null)[] = [];
    // One check at a time: a spawn holds one place in its tenant's queue of the worker pool.
    for (const [index, schema] of schemas.entries()) {
      if (!elsewhere[index]) {
        problems.push(inputSchemaProblemOf(schema, compiled[hereAt.indexOf(index)]!));
        continue;
      }
      const text = texts[index]!;
      const known = this.#checked.readShared(text)?.problem;
      if (known !== undefined) {
        problems.push(known === "" ? null : known);
        continue;
      }
      const problem = await offload!(tenant, schema);
      this.#checked.setCharged(tenant, text, { problem: problem ?? "" });
      problems.push(problem);
    }
    return problems;
  }

  /**
   * Compiles schemas a tenant (or its caller) supplied, on the serving thread but in the
   * tenant's share of it: those already compiled answer at once; the others compile one at a
   * time in the tenant's turn, the event loop served before each, and their time is charged to
   * the tenant (`SCHEMA_COMPILE_SHARES`). Throws 429 `busy` when the tenant's turns are taken
   * past the wait, 429 `rate_limited` when it spent its compile time.
   */
  async compileAsTenant(tenant: string, schemas: readonly JsonSchema[]): Promise<CompiledJsonSchema[]> {
    const results = schemas.map((schema) => this.#cached(schema));
    const missing = results.flatMap((result, index) => (result ? [] : [index]));
    if (missing.length === 0) return results as CompiledJsonSchema[];
    // A schema this tenant is compiling already (a concurrent call's: 20 invokes of one tool) is
    // awaited, not compiled again in a turn of its own: one compile, one turn, no 429 `busy`.
    const keys = new Map(missing.map((index) => [index, inFlightKey(tenant, schemas[index]!)]));
    const shared = missing.filter((index) => this.#compiling.has(keys.get(index) ?? ""));
    const own = missing.filter((index) => !shared.includes(index));
    const offload = this.#offloadCompile;
    const elsewhere = offload ? own.filter((index) => isLarge(schemas[index]!)) : [];
    const turn =
      own.length === 0
        ? Promise.resolve()
        : (async () => {
            // Large schemas compile on a worker first, one at a time (the tenant's place in the
            // pool's queue), outside the turn; the turn then only loads their code.
            const sources = new Map<number, CompiledSchemaSource>();
            for (const index of elsewhere) sources.set(index, await offload!(tenant, schemas[index]!));
            await this.#inTurn(tenant, async (paced) => {
              for (const index of own) {
                const source = sources.get(index);
                const result = await paced(() =>
                  source ? this.#loadCompiled(schemas[index]!, source) : this.compile(schemas[index]!),
                );
                // V8 compiles a loaded validator's body at its first call (about half of the load at
                // the caps): made as a paced piece of its own, so neither piece holds the thread long.
                if (source && result.ok) await paced(() => result.validate(undefined));
                results[index] = result;
              }
            });
          })();
    for (const index of own) {
      const key = keys.get(index);
      if (key === undefined || this.#compiling.has(key)) continue;
      const entry = turn.then(() => results[index]!);
      this.#compiling.set(key, entry);
      const forget = () => {
        if (this.#compiling.get(key) === entry) this.#compiling.delete(key);
      };
      // Whoever awaits the entry hears its failure; this only forgets it.
      entry.then(forget, forget);
    }
    await Promise.all([
      turn,
      ...shared.map(async (index) => {
        results[index] = await this.#compiling.get(keys.get(index)!)!;
      }),
    ]);
    return results as CompiledJsonSchema[];
  }

  /**
   * Runs `work` — synchronous work on the serving thread that compiles `tenant`'s schemas (a tool
   * document's parse, say) — in the tenant's turn, as `compileAsTenant` runs its compiles.
   * Throws 429 `busy` / `rate_limited` as `compileAsTenant` does. Like `compileAsTenant`, work
   * whose schemas are all compiled already answers at once, without a turn: it runs first with
   * compiling held back (`#probe`), and only when it met a schema not cached (or a check that
   * compiles patterns) is its answer dropped and it runs again in the turn. So 20 concurrent
   * writes of tool documents with known schemas are not refused 429 `busy`: they compile nothing.
   */
  async inTenantTurn<T>(tenant: string, work: () => T): Promise<T> {
    const probed = this.#probed(tenant, work);
    if (probed.done) {
      if ("error" in probed) throw probed.error;
      return probed.value;
    }
    // The schemas the probe held back compile first as `compileAsTenant` compiles them (large
    // ones on the worker): the work's own run below then finds them cached.
    if (probed.missed.length > 0) await this.compileAsTenant(tenant, probed.missed);
    let result: { value: T } | undefined;
    await this.#inTurn(tenant, async (paced) => {
      result = { value: await paced(work) };
    });
    return result!.value;
  }

  /**
   * Runs `work` — synchronous work that compiles `tenant`'s schemas where no turn is taken (a
   * stored tool document parsed on a read: a cold instance's lookup or listing) — as `asTenant`
   * does, except that its large schemas (at least {@link OFFLOAD_MIN_NODES} nodes) compile on the
   * worker first (`offloadCompile`), so no large compile runs on the serving thread. The work runs
   * once with those compiles held back (a large-only probe: small schemas compile as they always
   * did); when it met a large schema not cached, its answer is dropped, the schemas compile on the
   * worker (a compile of the same text this tenant has in flight is awaited, not repeated), their
   * code is loaded here, and the work runs again, finding them cached. Without an offload, or
   * inside a probe, it is `asTenant`. Throws what the offload threw when it refused (429 `busy`);
   * a worker that failed otherwise leaves the compile to the serving thread, as before.
   */
  async asTenantLargeOnWorker<T>(tenant: string, work: () => T): Promise<T> {
    const offload = this.#offloadCompile;
    if (offload === undefined || this.#probe !== null) return this.asTenant(tenant, work);
    const probe: Probe = { missed: false, schemas: [], largeOnly: true };
    this.#probe = probe;
    let outcome: { readonly value: T } | { readonly error: unknown };
    try {
      outcome = { value: this.asTenant(tenant, work) };
    } catch (error) {
      outcome = { error };
    } finally {
      this.#probe = null;
    }
    if (!probe.missed) {
      if ("error" in outcome) throw outcome.error;
      return outcome.value;
    }
    for (const schema of probe.schemas) {
      if (this.#cached(schema) !== undefined) continue;
      const key = inFlightKey(tenant, schema);
      const running = key === undefined ? undefined : this.#compiling.get(key);
      if (running) {
        await running;
        continue;
      }
      const entry = (async () => {
        let source: CompiledSchemaSource;
        try {
          source = await offload(tenant, schema);
        } catch (error) {
          if (error instanceof VanceError) throw error;
          // The worker failed (not a refusal): the work's own run compiles it here, as before.
          return undefined;
        }
        return this.asTenant(tenant, () => this.#loadCompiled(schema, source));
      })();
      if (key === undefined) {
        await entry;
        continue;
      }
      const shared = entry.then((result) => result ?? this.asTenant(tenant, () => this.compile(schema)));
      this.#compiling.set(key, shared);
      const forget = () => {
        if (this.#compiling.get(key) === shared) this.#compiling.delete(key);
      };
      shared.then(forget, forget);
      await shared;
    }
    return this.asTenant(tenant, work);
  }

  /**
   * Runs `body` holding one of `tenant`'s turns; each piece of work it hands `paced` runs after
   * whoever else waits for the thread (a health check, another tenant), is charged to the
   * tenant's compile time, and makes the turn rest `restPerCompile` times as long after it. The
   * answer need not wait for the last rest; the tenant's next turn does.
   */
  async #inTurn(
    tenant: string,
    body: (paced: <T>(work: () => T) => Promise<T>) => Promise<void>,
  ): Promise<void> {
    const waitMs = this.#allowance.waitMs(tenant);
    if (waitMs > 0) {
      throw Errors.rateLimited(
        `tenant '${tenant}' spent its ${this.#shares.msPerMinute / 1000} s per minute of compiling JSON Schemas; try again in ${Math.ceil(waitMs / 1000)} s`,
        waitMs / 1000,
      );
    }
    const release = await this.#turn(tenant);
    let restMs = 0;
    const paced = async <T>(work: () => T): Promise<T> => {
      await new Promise((resolve) => setTimeout(resolve, restMs));
      const started = performance.now();
      try {
        return this.asTenant(tenant, work);
      } finally {
        const spent = performance.now() - started;
        this.#allowance.charge(tenant, spent);
        restMs = spent * this.#shares.restPerCompile;
      }
    };
    try {
      await body(paced);
    } finally {
      setTimeout(release, restMs);
    }
  }

  /**
   * Runs `work` once with compiling held back: `done` with its value (or error) when it compiled
   * nothing, else not done (its answer, built on stand-ins, is dropped). Its time is charged to
   * the tenant's compile allowance either way.
   */
  #probed<T>(
    tenant: string,
    work: () => T,
  ):
    | { readonly done: true; readonly value: T }
    | { readonly done: true; readonly error: unknown }
    | { readonly done: false; readonly missed: readonly JsonSchema[] } {
    const probe: Probe = { missed: false, schemas: [] };
    const outer = this.#probe;
    this.#probe = probe;
    const started = performance.now();
    try {
      const value = this.asTenant(tenant, work);
      return probe.missed ? { done: false, missed: probe.schemas } : { done: true, value };
    } catch (error) {
      return probe.missed ? { done: false, missed: probe.schemas } : { done: true, error };
    } finally {
      this.#probe = outer;
      this.#allowance.charge(tenant, performance.now() - started);
    }
  }

  /** In a probe (`#probed`): notes that the work would compile (`schema`, when a compile), and answers true. */
  #heldBack(schema?: JsonSchema, text?: string): boolean {
    if (!this.#probe) return false;
    if (this.#probe.largeOnly) {
      // A large-only probe (`asTenantLargeOnWorker`) holds back only compiles of large schemas.
      if (schema === undefined || text === undefined) return false;
      const nodes = measureJsonSchema(schema, text.length);
      if (typeof nodes !== "number" || nodes < OFFLOAD_MIN_NODES) return false;
    }
    this.#probe.missed = true;
    if (schema !== undefined) this.#probe.schemas.push(schema);
    return true;
  }

  /**
   * The compiled schema of this text when one is cached, else undefined: nothing compiles and no
   * turn is taken (a call checks its params with it, and falls back to `compileAsTenant`).
   * `text`, when given, is the schema's JSON text (`jsonSchemaText`) as computed once for the
   * parsed tool holding it, so that a warm call does not serialise the schema again to find it.
   */
  compiledNow(schema: JsonSchema, text?: string): CompiledJsonSchema | undefined {
    if (text === undefined) return this.#cached(schema);
    return this.#compiled.readShared(text)?.result;
  }

  /**
   * Caches the validator a worker compiled for `schema` (its code loaded here, in a fraction of
   * the compile's time), or why it is unusable; answers the cached one when there is one.
   */
  #loadCompiled(schema: JsonSchema, source: CompiledSchemaSource): CompiledJsonSchema {
    const key = JSON.stringify(schema);
    const known = this.#compiled.readShared(key)?.result;
    if (known !== undefined) return known;
    const { result, patternBytes } = source.ok
      ? load(loadedEngine(), source.source)
      : { result: { ok: false, message: source.message } as const, patternBytes: 0 };
    this.#compiled.setCharged(this.#charging, key, {
      result,
      bytes: ENTRY_BYTES + BYTES_PER_SCHEMA_CHAR * key.length + patternBytes,
    });
    this.#compiles.worker += 1;
    return result;
  }

  /** The compiled schema when it is cached, else undefined (nothing compiled). */
  #cached(schema: JsonSchema): CompiledJsonSchema | undefined {
    try {
      return this.#compiled.readShared(JSON.stringify(schema))?.result;
    } catch {
      // Unserialisable: `compile` answers why.
      return undefined;
    }
  }

  /** Waits for one of `tenant`'s compile turns; 429 `busy` when its queue is full or the wait too long. */
  #turn(tenant: string): Promise<() => void> {
    let turns = this.#turns.get(tenant);
    if (!turns) {
      turns = { running: 0, waiting: [] };
      this.#turns.set(tenant, turns);
    }
    const own = turns;
    const release = () => {
      const next = own.waiting.shift();
      if (next) next();
      else {
        own.running -= 1;
        if (own.running === 0) this.#turns.delete(tenant);
      }
    };
    if (own.running < this.#shares.turnsPerTenant) {
      own.running += 1;
      return Promise.resolve(once(release));
    }
    const refusal = () =>
      Errors.busy(`tenant '${tenant}' has too many JSON Schemas compiling; try again shortly`);
    if (own.waiting.length >= this.#shares.queuedPerTenant) return Promise.reject(refusal());
    return new Promise((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve(once(release));
      };
      const timer = setTimeout(() => {
        const index = own.waiting.indexOf(granted);
        if (index >= 0) own.waiting.splice(index, 1);
        reject(refusal());
      }, this.#shares.maxWaitMs);
      own.waiting.push(granted);
    });
  }

  /** Answers once the engine is loaded (`loadJsonSchemaEngine`): the first validation awaits this. */
  async ready(): Promise<this> {
    await loadJsonSchemaEngine();
    return this;
  }

  /** The compiled-schema cache's counters, entries and bytes. */
  cacheReport(): CacheReport {
    const { hits: _hits, misses: _misses, ...extent } = this.#compiled.report();
    return this.#reads.report(extent);
  }

  /**
   * Compiles a JSON Schema, or answers why it is unusable; results are cached by the schema's
   * JSON text.
   *
   * @example
   * const schema = new JsonSchemaValidator().compile({ type: "object", required: ["q"] });
   * if (schema.ok) schema.validate({}); // [{ path: "q", message: "must have required property 'q'" }]
   */
  compile(schema: JsonSchema): CompiledJsonSchema {
    let key: string;
    try {
      key = JSON.stringify(schema);
    } catch (error) {
      // JSON.parse accepts nesting far deeper than the stack allows to walk back.
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, message: `not a usable JSON Schema: ${reason}` };
    }
    const known = this.#compiled.readShared(key)?.result;
    if (known === undefined && this.#heldBack(schema, key)) {
      return { ok: false, message: "not compiled: held back in a probe" };
    }
    const cached = this.#reads.read(known);
    if (cached) return cached;
    const nodes = measureJsonSchema(schema, key.length);
    if (typeof nodes === "number") {
      this.#compiles.servingThread += 1;
      if (nodes >= OFFLOAD_MIN_NODES) this.#compiles.servingThreadLarge += 1;
    }
    const { result, patternBytes } =
      typeof nodes === "string"
        ? { result: { ok: false, message: `not a usable JSON Schema: ${nodes}` } as const, patternBytes: 0 }
        : compile(loadedEngine(), schema);
    this.#compiled.setCharged(this.#charging, key, {
      result,
      bytes: ENTRY_BYTES + BYTES_PER_SCHEMA_CHAR * key.length + patternBytes,
    });
    return result;
  }

  /**
   * Compiles a schema into the code of its validator (Ajv's standalone code), or answers why it is
   * unusable: what a worker thread does for {@link SchemaCompileOffload}; the serving thread loads
   * the code (`compileAsTenant`). Nothing is cached here.
   */
  compileSource(schema: JsonSchema): CompiledSchemaSource {
    let text: string;
    try {
      text = JSON.stringify(schema);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, message: `not a usable JSON Schema: ${reason}` };
    }
    const tooLarge = jsonSchemaSizeProblem(schema, text.length);
    if (tooLarge) return { ok: false, message: `not a usable JSON Schema: ${tooLarge}` };
    return compileToSource(loadedEngine(), schema);
  }

  /**
   * Runs `work` (synchronous) with what it compiles charged to `tenant`'s share of the cache:
   * a tool document's parse, say. Compiles in a tenant's turn (`compileAsTenant`,
   * `inTenantTurn`) are charged so already; others to the instance (`UNATTRIBUTED`).
   */
  asTenant<T>(tenant: string, work: () => T): T {
    const outer = this.#charging;
    this.#charging = tenant;
    try {
      return work();
    } finally {
      this.#charging = outer;
    }
  }

  /**
   * Why a schema cannot be a tool's input schema, or null when it can: it must compile, and its
   * root must describe an object (`type: "object"`), since models send a tool's arguments as one
   * JSON object and OpenAI's and Anthropic's APIs refuse any other root.
   */
  inputSchemaProblem(schema: JsonSchema): string | null {
    return inputSchemaProblemOf(schema, this.compile(schema));
  }

  /**
   * What `compile` checks before it generates a validator — the size limits, the meta-schema, the
   * patterns (RE2 runs each; their count and programs) — and the object root, without generating
   * it: code generation is nine tenths of a compile, and the OpenAPI compiler checks every
   * operation of a document (Microsoft Graph's 11,422) this way; each schema compiles at its first
   * call. Answers the problems, each with the JSON pointer of the value at fault when one is
   * known (the meta-schema's first complaint, a pattern), so a caller can leave that part out; []
   * when there are none.
   */
  gateProblems(schema: JsonSchema): { readonly pointer: string | null; readonly message: string }[] {
    if (this.#heldBack()) return [];
    let text: string;
    try {
      text = JSON.stringify(schema);
    } catch (error) {
      return [{ pointer: null, message: error instanceof Error ? error.message : String(error) }];
    }
    const tooLarge = jsonSchemaSizeProblem(schema, text.length);
    if (tooLarge) return [{ pointer: null, message: `not a usable JSON Schema: ${tooLarge}` }];
    if (schema.type !== "object") {
      return [{ pointer: null, message: 'the root must be an object schema (type: "object")' }];
    }
    const { $schema: _dialect, ...body } = schema;
    const engine = loadedEngine();
    if (!engine.metaSchemas.validateSchema(body)) {
      const first = engine.metaSchemas.errors?.[0];
      return [
        {
          pointer: first?.instancePath ?? null,
          message: `not a valid JSON Schema: ${describe(engine.metaSchemas.errors)}`,
        },
      ];
    }
    return patternProblems(engine.RE2JS, body);
  }

  /**
   * Why RE2 cannot run `pattern` (a backreference, a lookaround), or null when it can: what a
   * schema's `pattern` must pass to compile here.
   */
  patternProblem(pattern: string): string | null {
    if (this.#heldBack()) return null;
    try {
      const re2 = loadedEngine().RE2JS;
      re2.compile(re2.translateRegExp(pattern));
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * Checks a value against a JSON Schema and returns the failures, or `[]`. Meant for schemas
   * known to be usable (this service's own): one that does not compile throws. Callers holding a
   * tenant's or caller's schema use `compile` and handle the outcome.
   */
  validate(schema: JsonSchema, value: unknown): FieldError[] {
    const result = this.compile(schema);
    if (!result.ok) throw new Error(result.message);
    return result.validate(value);
  }
}

/** Why `schema`, compiled as `compiled`, cannot be a tool's input schema, or null ({@link JsonSchemaValidator.inputSchemaProblem}). */
export function inputSchemaProblemOf(schema: JsonSchema, compiled: CompiledJsonSchema): string | null {
  if (!compiled.ok) return compiled.message;
  return schema.type === "object" ? null : 'the root must be an object schema (type: "object")';
}

/**
 * The JSON text of `schema`, the key its compiled validator is cached by, or undefined when it has
 * none (`compile` answers why): computed once for a parsed tool, it spares each call the
 * serialisation (`compiledNow(schema, text)`).
 */
export function jsonSchemaText(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}

/** The key of a tenant's compile of `schema` in flight; undefined when it has no JSON text. */
function inFlightKey(tenant: string, schema: JsonSchema): string | undefined {
  try {
    return `${tenant}\u0000${JSON.stringify(schema)}`;
  } catch {
    return undefined;
  }
}

/** What a probe (`#probed`) noted: whether the work would compile, and the schemas it would compile. */
interface Probe {
  missed: boolean;
  readonly schemas: JsonSchema[];
  /** Only compiles of large schemas are held back (`asTenantLargeOnWorker`). */
  readonly largeOnly?: boolean;
}

/** Whether `schema` has at least {@link OFFLOAD_MIN_NODES} nodes (and is within the size caps). */
function isLarge(schema: JsonSchema): boolean {
  const text = jsonSchemaText(schema);
  if (text === undefined) return false;
  const nodes = measureJsonSchema(schema, text.length);
  return typeof nodes === "number" && nodes >= OFFLOAD_MIN_NODES;
}

/** One tenant's compile turns: how many run, and who waits (in order). */
interface TenantTurns {
  running: number;
  readonly waiting: (() => void)[];
}

/** `release` that acts once, however often it is called. */
function once(release: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}

/** Ajv's regex engine option, and what it answers for a pattern. */
type RegExpEngine = NonNullable<CodeOptions["regExp"]>;
type RegExpLike = ReturnType<RegExpEngine>;

function compile(engine: Engine, schema: JsonSchema): { result: CompiledJsonSchema; patternBytes: number } {
  const generated = generate(engine, schema, false);
  return "message" in generated
    ? { result: { ok: false, message: generated.message }, patternBytes: 0 }
    : {
        result: { ok: true, validate: fieldErrors(generated.validate) },
        patternBytes: generated.patternBytes,
      };
}

/** {@link JsonSchemaValidator.compileSource}: the validator of a schema within the caps, as module code. */
function compileToSource(engine: Engine, schema: JsonSchema): CompiledSchemaSource {
  const generated = generate(engine, schema, true);
  if ("message" in generated) return { ok: false, message: generated.message };
  try {
    return { ok: true, source: engine.standaloneCode(generated.ajv, generated.validate) };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `not a usable JSON Schema: ${reason}` };
  }
}

/**
 * Loads validator code from {@link compileToSource} (a worker's): the module runs with a
 * `require` that answers Ajv's runtime helpers and the RE2 pattern engine, nothing else. Ajv's
 * own compile evaluates the same generated code with `new Function`.
 */
function load(engine: Engine, source: string): { result: CompiledJsonSchema; patternBytes: number } {
  const patterns = new Patterns(engine.RE2JS);
  const require = (name: string): unknown => {
    if (name === RE2_MODULE) return patterns.engine;
    if (!Object.hasOwn(engine.runtime, name)) throw new Error(`validator code asks for module '${name}'`);
    return engine.runtime[name];
  };
  const module: { exports: unknown } = { exports: {} };
  try {
    new Function("require", "module", "exports", source)(require, module, module.exports);
    const validate = module.exports as ValidateFunction;
    if (typeof validate !== "function") throw new Error("validator code exports no function");
    return { result: { ok: true, validate: fieldErrors(validate) }, patternBytes: patterns.bytes };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { result: { ok: false, message: `not a usable JSON Schema: ${reason}` }, patternBytes: 0 };
  }
}

/**
 * Ajv's validator of `schema` (`source`: with its code kept, for `standaloneCode`), or why the
 * schema is unusable.
 */
function generate(
  engine: Engine,
  schema: JsonSchema,
  source: boolean,
): { validate: ValidateFunction; ajv: Ajv; patternBytes: number } | { message: string } {
  // The dialect is not fetched or trusted: every schema reads as draft-07, where 2020-12's
  // common keywords (`$defs` included) mean the same.
  const { $schema: _dialect, ...body } = schema;
  const patterns = new Patterns(engine.RE2JS);
  try {
    const checker = engine.metaSchemas;
    if (!checker.validateSchema(body))
      return { message: `not a valid JSON Schema: ${describe(checker.errors)}` };
    const ajv = new engine.Ajv({
      allErrors: true,
      strict: false,
      logger: false,
      validateFormats: false,
      meta: false,
      validateSchema: false,
      // Ajv's optimising pass over the generated code costs twice the rest of the compile and
      // barely changes how fast the validator runs.
      code: { regExp: patterns.engine, optimize: false, source },
    });
    const validate = ajv.compile(body);
    if ("$async" in validate && validate.$async) {
      // An async validator answers a promise, which would pass every value as "valid".
      return { message: "not a usable JSON Schema: asynchronous schemas ($async) are not supported" };
    }
    return { validate, ajv, patternBytes: patterns.bytes };
  } catch (error) {
    // Ajv throws for unresolved `$ref`s and schemas it cannot build; deep nesting overflows the stack.
    const reason = error instanceof Error ? error.message : String(error);
    return { message: `not a usable JSON Schema: ${reason}` };
  }
}

/**
 * The patterns of one schema, compiled for Ajv by RE2: matching takes time linear in the input,
 * whatever the pattern. Their RE2 programs together are bounded (`MAX_PATTERN_INSTRUCTIONS`),
 * and their size feeds the cache entry's estimate.
 */
class Patterns {
  bytes = 0;
  private instructions = 0;
  private readonly known = new Map<string, RegExpLike>();

  readonly #re2: typeof RE2JS;

  constructor(re2: typeof RE2JS) {
    this.#re2 = re2;
  }

  /** Its `code` is how validator code from `standaloneCode` names it (`load` answers it). */
  readonly engine: RegExpEngine = Object.assign((pattern: string) => this.compile(pattern), {
    code: `require(${JSON.stringify(RE2_MODULE)})`,
  });

  private compile(pattern: string): RegExpLike {
    const known = this.known.get(pattern);
    if (known) return known;
    if (this.known.size >= MAX_PATTERNS) {
      throw new Error(`the schema has more than ${MAX_PATTERNS} distinct patterns`);
    }
    let regex: RE2JS;
    try {
      regex = this.#re2.compile(this.#re2.translateRegExp(pattern));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `pattern ${JSON.stringify(pattern)} is not supported (patterns run on RE2: no backreferences, no lookaround): ${reason}`,
      );
    }
    this.instructions += regex.programSize();
    if (this.instructions > MAX_PATTERN_INSTRUCTIONS) {
      throw new Error(
        `the patterns are too large: RE2 programs of more than ${MAX_PATTERN_INSTRUCTIONS} instructions in all (pattern ${JSON.stringify(pattern)} reached ${this.instructions})`,
      );
    }
    this.bytes += BYTES_PER_PATTERN + BYTES_PER_PATTERN_INSTRUCTION * regex.programSize();
    // Ajv shares one compiled pattern per distinct `toString()` within a schema.
    const like = { test: (text: string) => regex.test(text), toString: () => `re2:${pattern}` };
    this.known.set(pattern, like);
    return like;
  }
}

function fieldErrors(validate: ValidateFunction): (value: unknown) => FieldError[] {
  return (value) => {
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => {
      const path = error.instancePath.split("/").filter(Boolean);
      const missing = (error.params as { missingProperty?: string; additionalProperty?: string }) ?? {};
      if (missing.missingProperty) path.push(missing.missingProperty);
      if (missing.additionalProperty) path.push(missing.additionalProperty);
      return { path: path.join("."), message: error.message ?? "is invalid" };
    });
  };
}

function describe(errors: readonly ErrorObject[] | null | undefined): string {
  const shown = (errors ?? [])
    .slice(0, 3)
    .map((error) => `${error.instancePath || "/"} ${error.message ?? "is invalid"}`);
  return shown.join("; ") || "rejected by the meta-schema";
}

/**
 * The patterns of a schema (its `pattern` strings and `patternProperties` names) that RE2 cannot
 * run or that pass `MAX_PATTERNS` / `MAX_PATTERN_INSTRUCTIONS`, each at its pointer. The walk is
 * over a schema already within the size limits.
 */
function patternProblems(
  re2: typeof RE2JS,
  schema: Record<string, unknown>,
): { pointer: string; message: string }[] {
  const seen = new Map<string, number>();
  let instructions = 0;
  const check = (pattern: string, pointer: string): { pointer: string; message: string } | null => {
    if (seen.has(pattern)) return null;
    if (seen.size >= MAX_PATTERNS) {
      return { pointer, message: `the schema has more than ${MAX_PATTERNS} distinct patterns` };
    }
    try {
      const size = re2.compile(re2.translateRegExp(pattern)).programSize();
      seen.set(pattern, size);
      instructions += size;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { pointer, message: `pattern ${JSON.stringify(pattern)} is not supported (RE2): ${reason}` };
    }
    return instructions > MAX_PATTERN_INSTRUCTIONS
      ? {
          pointer,
          message: `the patterns are too large: RE2 programs of more than ${MAX_PATTERN_INSTRUCTIONS} instructions in all`,
        }
      : null;
  };
  const problems: { pointer: string; message: string }[] = [];
  const pending: [unknown, string][] = [[schema, ""]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [value, pointer] = item;
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const at = `${pointer}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if (key === "pattern" && typeof child === "string" && !Array.isArray(value)) {
        const problem = check(child, at);
        if (problem) problems.push(problem);
      } else if (key === "patternProperties" && typeof child === "object" && child !== null) {
        for (const name of Object.keys(child)) {
          const problem = check(name, `${at}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`);
          if (problem) problems.push(problem);
        }
      }
      if (key !== "enum" && key !== "const" && key !== "default" && key !== "examples")
        pending.push([child, at]);
    }
  }
  return problems;
}
