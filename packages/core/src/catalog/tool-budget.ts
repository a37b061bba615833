import { CATALOG_MARKER, type Generations, OBSERVED_LIMITS_MARKER } from "../cascade/generations";
import { VanceError } from "../errors";
import {
  type CompiledCatalog,
  type LimitSource,
  maxToolsFor,
  maxToolTokensFor,
  parseModelId,
} from "./model-catalog";
import type { CatalogSnapshot } from "./model-catalog-service";
import type { ObservedToolLimits } from "./observed-tool-limits";

/** One chain entry's limit and where it came from. */
export interface ModelBudget {
  readonly model: string;
  readonly maxTools: number | null;
  readonly source: LimitSource;
  /** The catalog's `maxToolTokens` for the model; absent when it names none. */
  readonly maxToolTokens?: number;
}

/** The budget of a model chain: `maxTools` is the smallest known limit, `null` when none is known. */
export interface ChainBudget {
  readonly maxTools: number | null;
  /** The smallest `maxToolTokens` of the chain; absent when none is known. */
  readonly maxToolTokens?: number;
  readonly models: readonly ModelBudget[];
}

export interface ToolBudgetServiceOptions {
  readonly observed: ObservedToolLimits;
  /** The markers the catalog and the observed limits are kept warm by: a fresh budget reads both in one request. */
  readonly generations?: Generations;
}

/**
 * `ToolBudgetService` (spec §14.1): the tool limit a manifest must respect for a whole model
 * chain. The manifest is built once per turn and the resilient layer may fall back along the
 * chain, so the budget is the minimum over every entry — a budget of the primary alone builds a
 * manifest the fallback rejects. Unknown stays unknown (`null`): a number is never invented.
 */
export class ToolBudgetService {
  readonly #observed: ObservedToolLimits;
  readonly #generations: Generations | undefined;
  constructor(options: ToolBudgetServiceOptions) {
    this.#observed = options.observed;
    this.#generations = options.generations;
  }

  /**
   * Per model the smaller of the catalog's and the observed limit of its endpoint (the platform's,
   * and `tenant`'s own when given); the chain's is the min over all. `catalog` is the request's
   * snapshot of the model catalog: the catalog's and the observed limits' markers are read under
   * its read, both in one request.
   */
  async budgetForChain(
    models: readonly string[],
    options: { readonly tenant?: string; readonly catalog: CatalogSnapshot },
  ): Promise<ChainBudget> {
    const { catalog: snapshot } = options;
    if (models.length === 0) throw new VanceError("invalid_model", "the chain names no model");
    // Validate every id before any I/O, so a typo answers 400 and costs no request.
    for (const model of models) parseModelId(model);
    await snapshot.ensure(this.#generations, BUDGET_MARKERS);
    // Both kept by their generations (the catalog by its ETag, a chain's learned limits under the
    // limits' generation, listed in `/v1/metrics` as `catalog`): what is left is a few look-ups.
    const [catalog, observed] = await Promise.all([
      snapshot.catalog(),
      this.#observed.limitsFor(models, options.tenant ?? null, snapshot),
    ]);
    return this.#budget(models, catalog, observed);
  }

  #budget(
    models: readonly string[],
    catalog: CompiledCatalog,
    observed: ReadonlyMap<string, number>,
  ): ChainBudget {
    const budgets = models.map((model): ModelBudget => {
      const known = maxToolsFor(catalog, model);
      const tokens = maxToolTokensFor(catalog, model);
      const maxToolTokens = tokens === null ? {} : { maxToolTokens: tokens };
      const seen = observed.get(model);
      // A rejection is hard evidence: it binds even where the catalog says "no limit".
      if (seen !== undefined && (known.maxTools === null || seen < known.maxTools)) {
        return { model, maxTools: seen, source: "observed", ...maxToolTokens };
      }
      return { model, ...known, ...maxToolTokens };
    });
    const maxToolTokens = smallest(budgets.map((budget) => budget.maxToolTokens));
    return {
      maxTools: smallest(budgets.map((budget) => budget.maxTools)),
      ...(maxToolTokens === null ? {} : { maxToolTokens }),
      models: budgets,
    };
  }
}

/** What a budget reads by generation: the learned limits and the catalog. */
const BUDGET_MARKERS: readonly string[] = Object.freeze([OBSERVED_LIMITS_MARKER, CATALOG_MARKER]);

/**
 * The smallest known value, null when none is: a function of the module, not a closure made per
 * call, which the bundles' `keepNames` would name every time.
 */
function smallest(values: readonly (number | null | undefined)[]): number | null {
  const known = values.filter((value): value is number => typeof value === "number");
  return known.length > 0 ? Math.min(...known) : null;
}
