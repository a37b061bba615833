import { LRUCache } from "lru-cache";
import {
  type Freshness,
  type GenerationStamp,
  type Generations,
  OBSERVED_LIMITS_MARKER,
} from "../cascade/generations";
import { VanceError } from "../errors";
import type { Logger } from "../ports/logger";
import type { StateStore } from "../ports/state-store";
import { parseModelId } from "./model-catalog";

/**
 * How providers word a rejected tools array. Each pattern is anchored on the `tools` (or legacy
 * `functions`) parameter itself and captures the LIMIT, never the length that was sent: an
 * error about another array (`messages`) or about a field inside one tool (`tools[0].…`) names
 * a number that is not the tool budget.
 */
const LIMIT_PATTERNS: readonly { readonly pattern: RegExp; readonly group: number }[] = [
  // OpenAI: Invalid 'tools': array too long. Expected an array with maximum length 128, but got … 163 instead.
  {
    pattern:
      /\b(?:tools|functions)["'`\\]*\s*:?\s*array too long\.?\s*expected an array with maximum length (\d+)/i,
    group: 1,
  },
  // Anthropic / pydantic: tools: List should have at most 128 items after validation, not 163
  {
    pattern: /\b(?:tools|functions)["'`\\]*\s*:?\s*(?:list|array) should have at most (\d+) items?\b/i,
    group: 1,
  },
  // vLLM and OpenAI-compatible gateways: 'tools' must contain at most 128 items
  {
    pattern:
      /\b(?:tools|functions)["'`\\]*\s+(?:must|should|can|may)\s+(?:only\s+)?(?:contain|have|include)\s+(?:at most|no more than|a maximum of|up to)\s+(\d+)\b/i,
    group: 1,
  },
  // Too many tools provided: 163 > 128
  { pattern: /\btoo many (?:tools|functions)\b[^\n\d]{0,40}\d+\s*>\s*(\d+)\b/i, group: 1 },
  // too many tools: maximum is 64 / Too many tools (163); the maximum allowed is 128
  {
    pattern:
      /\btoo many (?:tools|functions)\b[^\n]{0,60}?\b(?:maximum|max|limit|at most|allowed)\b\s*(?:is|of|=|:)?\s*(\d+)\b/i,
    group: 1,
  },
  // … exceeds the maximum of 128 tools / at most 128 tools are supported
  {
    pattern:
      /\b(?:maximum|max|limit|at most|no more than|up to)\s+(?:of\s+)?(\d+)\s+(?:tools|functions|function declarations)\b/i,
    group: 1,
  },
  // maximum number of tools is 128 / max tools: 128
  {
    pattern:
      /\b(?:maximum|max)\s+(?:number\s+of\s+)?(?:tools|functions)(?:\s+(?:allowed|supported|permitted))?\s*(?:is|=|:)\s*(\d+)\b/i,
    group: 1,
  },
];

/** A limit above this is not a tool budget but a misread number (a token count, a byte size). */
const MAX_PLAUSIBLE_LIMIT = 100_000;

/**
 * The tool limit a provider's rejection names, or `null` when the text names none. Understands
 * OpenAI's `array_above_max_length`, Anthropic/pydantic list validation, and vLLM-style gateways.
 */
export function parseToolLimitFromError(text: string): number | null {
  for (const { pattern, group } of LIMIT_PATTERNS) {
    const digits = pattern.exec(text)?.[group];
    if (digits === undefined) continue;
    const limit = Number(digits);
    if (Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_PLAUSIBLE_LIMIT) return limit;
  }
  return null;
}

export interface ObservedToolLimitsOptions {
  readonly state: Pick<StateStore, "putObservedToolLimit" | "getObservedToolLimits">;
  readonly logger: Logger;
  /** Epoch milliseconds. */
  readonly now: () => number;
  /**
   * Generation markers: limits read are then kept warm until any instance learns one. Without
   * them every call reads the state store.
   */
  readonly generations?: Generations;
}

/** Models whose observed limit (or its absence) an instance keeps; a forgotten one is read again. */
const KNOWN_MODELS = 10_000;
/** Stands for "no limit observed" in the cache, which holds no nulls. */
const NONE_OBSERVED = 0;

/**
 * `ObservedToolLimitRegistry` (spec §14.1 "Self-correction on Drift"): learns a model's tool
 * limit from the endpoint's rejection and keeps it in the shared state store, so every function
 * instance cuts the next manifest at once (the spec's per-pod memory would let each Lambda
 * instance fail once on its own). The permanent fix is `maxTools` in the catalog; the WARN says so.
 */
export class ObservedToolLimits {
  readonly #state: ObservedToolLimitsOptions["state"];
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #generations: Generations | undefined;
  #known: { readonly stamp: GenerationStamp; readonly limits: LRUCache<string, number> } | null = null;

  constructor(options: ObservedToolLimitsOptions) {
    this.#state = options.state;
    this.#logger = options.logger;
    this.#now = options.now;
    this.#generations = options.generations;
  }

  /** Learns the limit `errorText` names for `model`; `no_limit_in_error` (422) when it names none. */
  async learn(model: string, errorText: string): Promise<number> {
    const { instance, slug } = parseModelId(model);
    const maxTools = parseToolLimitFromError(errorText);
    if (maxTools === null) {
      throw new VanceError(
        "no_limit_in_error",
        422,
        "the error text names no tool limit; nothing was learned (set maxTools in the catalog instead)",
      );
    }
    await this.#state.putObservedToolLimit({ model, maxTools, observedAt: this.#now() });
    await this.#generations?.bump(OBSERVED_LIMITS_MARKER);
    this.#logger.warn("budget.observed_tool_limit", {
      model,
      maxTools,
      fix: `add maxTools: ${maxTools} to model/${instance}/${slug}.yaml (or _provider.yaml) in the catalog`,
    });
    return maxTools;
  }

  /**
   * The observed limits of these models, by model id; models never rejected are absent. With
   * generation markers, only models this instance has not read under the current generation
   * cost a state-store request.
   */
  async limitsFor(models: readonly string[], freshness: Freshness = "fresh"): Promise<Map<string, number>> {
    if (models.length === 0) return new Map();
    const generations = this.#generations;
    if (!generations) {
      const limits = await this.#state.getObservedToolLimits(models);
      return new Map(limits.map((limit) => [limit.model, limit.maxTools]));
    }
    if (freshness === "fresh") await generations.read([OBSERVED_LIMITS_MARKER]);
    else await generations.ensure([OBSERVED_LIMITS_MARKER]);
    let known = this.#known;
    if (!known || !generations.isCurrent(OBSERVED_LIMITS_MARKER, known.stamp)) {
      known = {
        stamp: generations.stamp(OBSERVED_LIMITS_MARKER),
        limits: new LRUCache({ max: KNOWN_MODELS }),
      };
      this.#known = known;
    }
    const missing = [...new Set(models)].filter((model) => !known.limits.has(model));
    if (missing.length > 0) {
      const found = new Map(
        (await this.#state.getObservedToolLimits(missing)).map((limit) => [limit.model, limit.maxTools]),
      );
      for (const model of missing) known.limits.set(model, found.get(model) ?? NONE_OBSERVED);
    }
    return new Map(
      models.flatMap((model) => {
        const limit = known.limits.get(model) ?? NONE_OBSERVED;
        return limit === NONE_OBSERVED ? [] : [[model, limit] as const];
      }),
    );
  }
}
