import type { RE2JS } from "re2js";
import { CacheCounters, type CacheReport } from "../cache/cache-registry";
import { CountedLru } from "../cache/counted-lru";
import { CAPABILITY_FLOOR } from "../calls/capability-floor";
import { type GenerationStamp, type Generations, OBSERVED_LIMITS_MARKER } from "../cascade/generations";
import { VanceError } from "../errors";
import { ID_PATTERN } from "../ids";
import type { Logger } from "../ports/logger";
import type { ObservedLimitStore } from "../ports/observed-limit-store";
import { loadedRe2, loadRe2 } from "../re2";
import { parseModelId } from "./model-catalog";
import type { CatalogSnapshot, ModelCatalogService } from "./model-catalog-service";

/**
 * How providers word a rejected tools array. Each pattern is anchored on the `tools` (or legacy
 * `functions`) parameter itself and captures the LIMIT, never the length that was sent: an
 * error about another array (`messages`) or about a field inside one tool (`tools[0].…`) names
 * a number that is not the tool budget. Error texts come from tenants and upstreams, so the
 * patterns run on RE2 (linear time), and only on windows around the keyword (see `WINDOW_*`).
 */
const LIMIT_PATTERN_SOURCES: readonly string[] = [
  // OpenAI: Invalid 'tools': array too long. Expected an array with maximum length 128, but got … 163 instead.
  String.raw`\b(?:tools|functions)["'\x60\\]*\s*:?\s*array too long\.?\s*expected an array with maximum length (\d+)`,
  // Anthropic / pydantic: tools: List should have at most 128 items after validation, not 163
  String.raw`\b(?:tools|functions)["'\x60\\]*\s*:?\s*(?:list|array) should have at most (\d+) items?\b`,
  // vLLM and OpenAI-compatible gateways: 'tools' must contain at most 128 items
  String.raw`\b(?:tools|functions)["'\x60\\]*\s+(?:must|should|can|may)\s+(?:only\s+)?(?:contain|have|include)\s+(?:at most|no more than|a maximum of|up to)\s+(\d+)\b`,
  // Too many tools provided: 163 > 128
  String.raw`\btoo many (?:tools|functions)\b[^\n\d]{0,40}\d+\s*>\s*(\d+)\b`,
  // too many tools: maximum is 64 / Too many tools (163); the maximum allowed is 128
  String.raw`\btoo many (?:tools|functions)\b[^\n]{0,60}?\b(?:maximum|max|limit|at most|allowed)\b\s*(?:is|of|=|:)?\s*(\d+)\b`,
  // … exceeds the maximum of 128 tools / at most 128 tools are supported
  String.raw`\b(?:maximum|max|limit|at most|no more than|up to)\s+(?:of\s+)?(\d+)\s+(?:tools|functions|function declarations)\b`,
  // maximum number of tools is 128 / max tools: 128
  String.raw`\b(?:maximum|max)\s+(?:number\s+of\s+)?(?:tools|functions)(?:\s+(?:allowed|supported|permitted))?\s*(?:is|=|:)\s*(\d+)\b`,
];

let limitPatterns: readonly RE2JS[] | undefined;

/**
 * The patterns, compiled at the first rejection read rather than at every cold start: compiling
 * them case-insensitively builds RE2's case-folding tables, ~8% of the API bundle's import.
 */
function compiledLimitPatterns(): readonly RE2JS[] {
  const re2 = loadedRe2();
  limitPatterns ??= LIMIT_PATTERN_SOURCES.map((pattern) => re2.compile(pattern, re2.CASE_INSENSITIVE));
  return limitPatterns;
}

/** Every pattern names one of these; the patterns only run near them. */
const KEYWORDS = ["tools", "functions"] as const;
/** How far before and after a keyword a pattern's match may reach (the longest pattern fits with room). */
const WINDOW_BEFORE = 120;
const WINDOW_AFTER = 240;
/** Keyword occurrences looked at: a rejection names its parameter early, and the work stays bounded. */
const MAX_WINDOWS = 64;

/** A limit above this is not a tool budget but a misread number (a token count, a byte size). */
const MAX_PLAUSIBLE_LIMIT = 100_000;

/**
 * The tool limit a provider's rejection names, or `null` when the text names none. Understands
 * OpenAI's `array_above_max_length`, Anthropic/pydantic list validation, and vLLM-style gateways.
 * Linear in the text: a scan for the keywords, then RE2 on at most `MAX_WINDOWS` short windows.
 * RE2 must be loaded (`loadRe2`; `learn` does).
 */
export function parseToolLimitFromError(text: string): number | null {
  const windows = keywordWindows(text);
  for (const pattern of compiledLimitPatterns()) {
    for (const window of windows) {
      const matcher = pattern.matcher(window);
      if (!matcher.find()) continue;
      const limit = Number(matcher.group(1));
      if (Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_PLAUSIBLE_LIMIT) return limit;
    }
  }
  return null;
}

/** The text around the first `MAX_WINDOWS` keyword occurrences, overlapping windows merged. */
function keywordWindows(text: string): string[] {
  const hits: number[] = [];
  for (const keyword of KEYWORDS) {
    for (let at = indexOfAsciiCaseless(text, keyword, 0); at >= 0 && hits.length < 2 * MAX_WINDOWS; ) {
      hits.push(at);
      at = indexOfAsciiCaseless(text, keyword, at + keyword.length);
    }
  }
  hits.sort((a, b) => a - b);
  const windows: string[] = [];
  let start = -1;
  let end = -1;
  for (const at of hits.slice(0, MAX_WINDOWS)) {
    const from = Math.max(0, at - WINDOW_BEFORE);
    if (from > end && start >= 0) {
      windows.push(text.slice(start, end));
      start = -1;
    }
    if (start < 0) start = from;
    end = Math.min(text.length, at + WINDOW_AFTER);
  }
  if (start >= 0) windows.push(text.slice(start, end));
  return windows;
}

/** `indexOf` ignoring the case of ASCII letters; `needle` is lower case. Linear: needles are short. */
function indexOfAsciiCaseless(text: string, needle: string, from: number): number {
  const last = text.length - needle.length;
  outer: for (let at = from; at <= last; at++) {
    for (let i = 0; i < needle.length; i++) {
      const code = text.charCodeAt(at + i);
      const lower = code >= 65 && code <= 90 ? code + 32 : code;
      if (lower !== needle.charCodeAt(i)) continue outer;
    }
    return at;
  }
  return -1;
}

export interface ObservedToolLimitsOptions {
  readonly state: ObservedLimitStore;
  /**
   * The model catalog: a limit is learned only for an endpoint (instance) it knows, so what a
   * tenant can store is one limit per endpoint, never one per made-up name.
   */
  readonly catalog: Pick<ModelCatalogService, "begin">;
  /**
   * Tools kept free for the engine's own (`VANCE_EXTERNAL_RESERVE`): a limit that cannot hold
   * the capability floor plus these is refused, since every spawn would then be refused.
   */
  readonly reserve?: number;
  readonly logger: Logger;
  /** Epoch milliseconds. */
  readonly now: () => number;
  /**
   * Generation markers: limits read are then kept warm until any instance learns one. Without
   * them every call reads the state store.
   */
  readonly generations?: Generations;
}

/** Who a learned limit binds: `*` (a platform report: every tenant) or one tenant's id. */
export type LimitScope = "*" | (string & {});

/** The scope of a platform report: its limit cuts every tenant's manifests. */
export const PLATFORM_SCOPE = "*";

/** The state-store key of a limit learned for `instance` in `scope`. */
export function observedLimitKey(scope: LimitScope, instance: string): string {
  return `${scope}/${instance}`;
}

/** A learned limit as an admin lists it. */
export interface LearnedLimit {
  /** `*` (every tenant) or the reporting tenant. */
  readonly scope: string;
  /** The catalog endpoint it binds. */
  readonly instance: string;
  /** The model whose rejection taught it. */
  readonly model: string;
  readonly maxTools: number;
  /** Epoch milliseconds. */
  readonly observedAt: number;
}

/** The scope and instance of a key {@link observedLimitKey} built (the scope never holds `/`). */
function splitLimitKey(key: string): { scope: string; instance: string } {
  const at = key.indexOf("/");
  return { scope: key.slice(0, at), instance: key.slice(at + 1) };
}

/**
 * The keys of the limits that bind `model` for a process of `tenant` (null: only the platform's).
 * A function of the module, not a closure made per call, which the bundles' `keepNames` would name.
 */
function limitKeysOf(model: string, tenant: string | null): string[] {
  const { instance } = parseModelId(model);
  return tenant === null || tenant === PLATFORM_SCOPE
    ? [observedLimitKey(PLATFORM_SCOPE, instance)]
    : [observedLimitKey(PLATFORM_SCOPE, instance), observedLimitKey(tenant, instance)];
}

/** Keys an instance keeps (with their limit or its absence); a forgotten one is read again. */
const KNOWN_KEYS = 10_000;

/** Chains (a tenant and its models) whose limits an instance keeps answered under one generation. */
const KNOWN_CHAINS = 1_024;

/** The one marker the learned limits are kept by. */
const LIMITS_MARKERS: readonly string[] = Object.freeze([OBSERVED_LIMITS_MARKER]);

/** What an instance knows under one generation of the learned limits. */
interface KnownLimits {
  readonly stamp: GenerationStamp;
  /** The limit under each key read (`NONE_OBSERVED` for none). */
  readonly limits: CountedLru<string, number>;
  /** Each chain's answer (`limitsFor`), shared by its callers, and the keys it read. */
  readonly chains: Map<string, { readonly keys: number; readonly limits: ReadonlyMap<string, number> }>;
}

/** Stands for "no limit observed" in the cache, which holds no nulls. */
const NONE_OBSERVED = 0;

/**
 * `ObservedToolLimitRegistry` (spec §14.1 "Self-correction on Drift"): learns an endpoint's tool
 * limit from its rejection and keeps it in the shared state store, so every function instance
 * cuts the next manifest at once (the spec's per-pod memory would let each Lambda instance fail
 * once on its own). The limit belongs to the endpoint — the model's catalog instance — so a
 * rejection seen with `cortecs/model-a` cuts `cortecs/model-b` as well. A platform report binds
 * every tenant; a tenant's binds that tenant's processes only, so no tenant can shrink another's
 * tool surface. The permanent fix is `maxTools` in the catalog; the WARN says so.
 */
export class ObservedToolLimits {
  readonly #state: ObservedToolLimitsOptions["state"];
  readonly #catalog: ObservedToolLimitsOptions["catalog"];
  readonly #reserve: number;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #generations: Generations | undefined;
  #known: KnownLimits | null = null;
  readonly #reads = new CacheCounters();

  constructor(options: ObservedToolLimitsOptions) {
    this.#state = options.state;
    this.#catalog = options.catalog;
    this.#reserve = options.reserve ?? 0;
    this.#logger = options.logger;
    this.#now = options.now;
    this.#generations = options.generations;
  }

  /**
   * Learns the limit `errorText` names for `model`'s endpoint, for `scope` (the reporting tenant,
   * or `*` for a platform report); `no_limit_in_error` (422) when the text names none,
   * `invalid_model` (400) when the catalog knows no such endpoint, `budget_floor_exceeded` (422)
   * when the limit could not hold the capability floor plus the reserve.
   */
  async learn(model: string, errorText: string, scope: LimitScope = PLATFORM_SCOPE): Promise<number> {
    const { instance, slug } = parseModelId(model);
    if (scope !== PLATFORM_SCOPE && !ID_PATTERN.test(scope)) {
      throw new VanceError("invalid_id", `'${scope}' is neither a tenant id nor '*'`);
    }
    await loadRe2();
    const maxTools = parseToolLimitFromError(errorText);
    if (maxTools === null) {
      throw new VanceError(
        "no_limit_in_error",
        "the error text names no tool limit; nothing was learned (set maxTools in the catalog instead)",
      );
    }
    // A report is a request of its own: it reads the catalog's generation (a write on any instance counts).
    const { providers } = await this.#catalog.begin().catalog();
    if (!Object.hasOwn(providers, instance)) {
      throw new VanceError(
        "invalid_model",
        `the model catalog knows no endpoint '${instance}'; limits are learned only for catalog endpoints (add model/${instance}/_provider.yaml first)`,
      );
    }
    const floor = CAPABILITY_FLOOR.length + this.#reserve;
    if (maxTools < floor) {
      throw new VanceError(
        "budget_floor_exceeded",
        `the reported limit ${maxTools} is below the capability floor (${CAPABILITY_FLOOR.join(", ")}) plus the ${this.#reserve} tools kept for the engine: ${floor}; every spawn on '${instance}' would be refused, so nothing was learned (set maxTools in the catalog if the endpoint really allows so few)`,
        [{ path: "error", message: `names a limit of ${maxTools}, below ${floor}` }],
        { maxTools, floor },
      );
    }
    const key = observedLimitKey(scope, instance);
    await this.#state.putObservedToolLimit({ key, model, maxTools, observedAt: this.#now() });
    await this.#generations?.bump(OBSERVED_LIMITS_MARKER);
    this.#logger.warn("budget.observed_tool_limit", {
      model,
      instance,
      scope,
      maxTools,
      fix: `add maxTools: ${maxTools} to model/${instance}/_provider.yaml in the catalog (the endpoint's limit; model/${instance}/${slug}.yaml for this model alone)`,
    });
    return maxTools;
  }

  /** The learned limits `scope` may see: all of them for `*` (a platform admin), else the tenant's own. */
  async list(scope: LimitScope): Promise<LearnedLimit[]> {
    const all = await this.#state.listObservedToolLimits();
    return all
      .map((limit) => ({
        ...splitLimitKey(limit.key),
        model: limit.model,
        maxTools: limit.maxTools,
        observedAt: limit.observedAt,
      }))
      .filter((limit) => scope === PLATFORM_SCOPE || limit.scope === scope);
  }

  /**
   * Withdraws the limit learned for `instance` in `scope`; every instance stops applying it at its
   * next read of the generations. `false` when none was learned.
   */
  async withdraw(scope: LimitScope, instance: string): Promise<boolean> {
    const key = observedLimitKey(scope, instance);
    const removed = await this.#state.deleteObservedToolLimit(key);
    if (!removed) return false;
    await this.#generations?.bump(OBSERVED_LIMITS_MARKER);
    this.#logger.info("budget.observed_tool_limit_withdrawn", { scope, instance });
    return true;
  }

  /**
   * The observed limits of these models for a process of `tenant` (null: only the platform's),
   * by model id: the smaller of the platform's and the tenant's limit for the model's instance;
   * models whose instance was never rejected are absent. With generation markers, only keys this
   * instance has not read under the current generation cost a state-store request; `catalog` is
   * the request's snapshot of the model catalog, under whose read the limits' marker is read once.
   */
  async limitsFor(
    models: readonly string[],
    tenant: string | null,
    catalog: Pick<CatalogSnapshot, "ensure">,
  ): Promise<ReadonlyMap<string, number>> {
    if (models.length === 0) return new Map();
    // Every id valid before any I/O, so a typo answers 400 and costs no read; a chain answered
    // before had valid ids then (parsing them is pure), so they are now.
    const chain = `${tenant ?? ""}\n${models.join("\n")}`;
    if (!this.#known?.chains.has(chain)) for (const model of models) parseModelId(model);
    await catalog.ensure(this.#generations, LIMITS_MARKERS);
    // Under the generation it was answered in, a chain's answer stands (a learned or withdrawn
    // limit bumps it): a turn reads one map instead of each key's.
    const known = this.#currentKnown();
    const kept = known?.chains.get(chain);
    if (kept) {
      this.#reads.hits += kept.keys;
      return kept.limits;
    }
    const keys = [...new Set(models.flatMap((model) => limitKeysOf(model, tenant)))];
    const limits = await this.#limitsByKey(keys);
    const result = new Map<string, number>();
    for (const model of models) {
      const found = limitKeysOf(model, tenant).flatMap((key) => {
        const limit = limits.get(key) ?? NONE_OBSERVED;
        return limit === NONE_OBSERVED ? [] : [limit];
      });
      if (found.length > 0) result.set(model, Math.min(...found));
    }
    if (known !== null && this.#known === known) {
      if (known.chains.size >= KNOWN_CHAINS) known.chains.clear();
      known.chains.set(chain, { keys: keys.length, limits: result });
    }
    return result;
  }

  /** What this instance knows under the limits' current generation (null without generations). */
  #currentKnown(): KnownLimits | null {
    const generations = this.#generations;
    if (!generations) return null;
    let known = this.#known;
    if (!known || !generations.isCurrent(OBSERVED_LIMITS_MARKER, known.stamp)) {
      known = {
        stamp: generations.stamp(OBSERVED_LIMITS_MARKER),
        limits: new CountedLru({ max: KNOWN_KEYS }),
        chains: new Map(),
      };
      this.#known = known;
    }
    return known;
  }

  /**
   * The limits (and absences) this instance knows under the limits' current generation, by key:
   * listed in `/v1/metrics` as part of `catalog`.
   */
  cacheReport(): CacheReport {
    return this.#reads.report({ entries: this.#known?.limits.size ?? 0, maxEntries: KNOWN_KEYS });
  }

  /**
   * The limit under each key (`NONE_OBSERVED` for none), from the cache where it is current under
   * the generation the caller's read made known.
   */
  async #limitsByKey(keys: readonly string[]): Promise<Map<string, number>> {
    const known = this.#currentKnown();
    if (!known) {
      const found = await this.#state.getObservedToolLimits(keys);
      return new Map(found.map((limit) => [limit.key, limit.maxTools]));
    }
    const missing = keys.filter((key) => !known.limits.has(key));
    this.#reads.hits += keys.length - missing.length;
    this.#reads.misses += missing.length;
    if (missing.length > 0) {
      const found = new Map(
        (await this.#state.getObservedToolLimits(missing)).map((limit) => [limit.key, limit.maxTools]),
      );
      for (const key of missing) known.limits.set(key, found.get(key) ?? NONE_OBSERVED);
    }
    return new Map(keys.map((key) => [key, known.limits.get(key) ?? NONE_OBSERVED]));
  }
}
