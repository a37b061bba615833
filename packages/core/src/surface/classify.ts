import { inCapabilityFloor } from "../calls/capability-floor";
import type { JsonSchema } from "../json-schema";
import { sortByName } from "./name-order";
import { estimateTokens } from "./tokens";
import { isPackTool, ToolHints } from "./tool-family";
import { type TriageCandidate, type TriageClass, type TriageResult, triageTools } from "./tool-triage";

/** A tool the process may invoke, as classification sees it. */
export interface SurfaceTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly origin: "configured" | "builtin" | "client";
  /** The configuration's `primary` flag (client tools count as primary: the engine declared them). */
  readonly primary: boolean;
  /** Packs: sub-tools start deferred. */
  readonly defaultDeferred: boolean;
  /** Packs: one usage line for the whole pack. */
  readonly packHint?: string;
  /** Packs: the sub-tool's family inside its pack as the source groups it (an OpenAPI tag). */
  readonly family?: string;
}

/** The recipe's lists that steer classification (names, or prefix patterns such as `doc_*`). */
export interface RecipeHints {
  readonly allowedToolsAdd: readonly string[];
  readonly allowedToolsKeep: readonly string[];
  readonly allowedToolsDefer: readonly string[];
  readonly allowedToolsDropFirst: readonly string[];
}

export interface ClassificationInput {
  /** Every tool the process may invoke, the floor included. */
  readonly tools: readonly SurfaceTool[];
  readonly hints: RecipeHints;
  /** Live activations (decayed and capped already): name → last use, epoch ms. */
  readonly activated: ReadonlyMap<string, number>;
  /** Measured demand per tool for the process's role (calls + discovery hits). */
  readonly demand: ReadonlyMap<string, number>;
  /** Tools added after classification (skills): primary, ranked as keep. */
  readonly additional?: readonly string[];
  /** `maxTools − reserve`, or null for no known limit. */
  readonly limit: number | null;
  /** The chain's `maxToolTokens`: tokens the tools array's schemas may take; null or absent for none. */
  readonly tokenLimit?: number | null;
  /** A tool's tokens where `tokenLimit` reads them: `toolTokens`, or a caller's memo of it (`ToolSurface`'s). */
  readonly tokensOf?: (tool: SurfaceTool) => number;
}

export interface Classification {
  /** In the tools array this turn, sorted by name. */
  readonly primary: string[];
  /** Invocable but not in the array (statically deferred, or demoted), sorted by name. */
  readonly deferred: string[];
  /** Demoted by the budget this turn, in demotion order. */
  readonly demoted: string[];
  readonly demotedUnits: TriageResult["demotedUnits"];
  /**
   * `deferred` minus `demoted`, sorted: what the cache-stable discovery block lists (spec §14.3).
   * Activated tools are not in it (they are primary); demoted ones go to the dynamic block.
   */
  readonly staticDeferred: string[];
}

/** A classification up to the budget triage, which alone reads measured demand. */
export interface PreparedClassification {
  /** Whether the budget cuts anything: only then does measured demand change the outcome. */
  readonly needsDemand: boolean;
  /** Finishes the classification with the measured demand per tool (the triage). */
  finish(demand: ReadonlyMap<string, number>): Classification;
}

/**
 * Classifies a process's tools into primary and deferred (spec §13, §14.2): the configuration's
 * `primary` flags, recipe promotions (`allowedToolsAdd` by name, `allowedToolsKeep`) and
 * deferrals (`allowedToolsDefer`, packs' `defaultDeferred`), live activations, the mandatory
 * floor, then the budget triage. Pure and allocation-light: it runs on every manifest.
 */
export function classifyTools(input: ClassificationInput): Classification {
  const prepared = prepare(input, input.demand);
  return complete(prepared, prepared.candidates, input.limit, input.tokenLimit ?? null);
}

/**
 * {@link classifyTools} in two steps, for a caller that reads the demand counters only when the
 * budget cuts: everything but the triage once, then `finish` with the demand.
 *
 * @example
 * const prepared = prepareClassification(input);
 * const result = prepared.finish(prepared.needsDemand ? await readDemand() : new Map());
 */
export function prepareClassification(input: Omit<ClassificationInput, "demand">): PreparedClassification {
  const prepared = prepare(input, new Map());
  const { candidates, measured } = prepared;
  const tokenLimit = input.tokenLimit ?? null;
  let tokens = 0;
  if (tokenLimit !== null) for (const candidate of candidates) tokens += candidate.tokens ?? 0;
  return {
    needsDemand:
      (input.limit !== null && candidates.length > input.limit) ||
      (tokenLimit !== null && tokens > tokenLimit),
    finish(demand) {
      const ranked =
        demand.size === 0
          ? candidates
          : candidates.map((candidate, index) =>
              measured[index] ? { ...candidate, demand: demand.get(candidate.name) ?? 0 } : candidate,
            );
      return complete(prepared, ranked, input.limit, tokenLimit);
    },
  };
}

interface Prepared {
  /** The tools in name order. */
  readonly tools: readonly SurfaceTool[];
  /** Triage candidates in name order. */
  readonly candidates: readonly TriageCandidate[];
  /** Per candidate: whether its demand is measured (not its activation, not the floor's 0). */
  readonly measured: readonly boolean[];
}

/** The recipe's lists, read once for many tools. */
class CompiledHints {
  readonly add: ReadonlySet<string>;
  readonly keep: ToolHints;
  readonly defer: ToolHints;
  readonly dropFirst: ToolHints;

  constructor(hints: RecipeHints) {
    this.add = new Set(hints.allowedToolsAdd);
    this.keep = new ToolHints(hints.allowedToolsKeep);
    this.defer = new ToolHints(hints.allowedToolsDefer);
    this.dropFirst = new ToolHints(hints.allowedToolsDropFirst);
  }

  /**
   * Whether the configuration and the recipe alone keep `tool` out of the tools array — before
   * activations, skills and the budget, which change from turn to turn.
   */
  deferred(tool: SurfaceTool, added: boolean, kept: "name" | "pattern" | null): boolean {
    const { name } = tool;
    const promoted = tool.primary || added || kept !== null;
    return (
      !promoted ||
      this.defer.has(name) ||
      (tool.defaultDeferred && !added && kept === null && isPackTool(name))
    );
  }
}

/**
 * The tools of `tools` that their configuration and the recipe defer (spec §13: `primary`,
 * `allowedToolsAdd`, `allowedToolsKeep`, `allowedToolsDefer`, a pack's `defaultDeferred`): what
 * every turn defers before activations, skills and the budget move anything. The floor is never
 * deferred.
 */
export function configuredDeferred(tools: readonly SurfaceTool[], hints: RecipeHints): ReadonlySet<string> {
  const compiled = new CompiledHints(hints);
  const deferred = new Set<string>();
  for (const tool of tools) {
    if (inCapabilityFloor(tool.name)) continue;
    if (compiled.deferred(tool, compiled.add.has(tool.name), compiled.keep.match(tool.name))) {
      deferred.add(tool.name);
    }
  }
  return deferred;
}

/** Everything but the triage: the candidates, ranked by `demand` where it applies. */
function prepare(input: Omit<ClassificationInput, "demand">, demand: ReadonlyMap<string, number>): Prepared {
  const hints = new CompiledHints(input.hints);
  const { add, keep, dropFirst } = hints;
  const additional = new Set(input.additional ?? []);
  // Schema tokens are estimated only where a token limit reads them.
  const counted = (input.tokenLimit ?? null) !== null;
  const tokensOf = input.tokensOf ?? toolTokens;

  // One sort: every list below is built in name order, so none is sorted again.
  const tools = sortByName(input.tools);
  const candidates: TriageCandidate[] = [];
  const measured: boolean[] = [];
  for (let index = 0; index < tools.length; index++) {
    const tool = tools[index]!;
    const { name } = tool;
    if (inCapabilityFloor(name)) {
      candidates.push({
        name,
        triageClass: "mandatory",
        demand: 0,
        namedInHint: false,
        ...(counted ? { tokens: tokensOf(tool) } : {}),
      });
      measured.push(false);
      continue;
    }
    const added = add.has(name);
    const kept = keep.match(name);
    const deferredByConfig = hints.deferred(tool, added, kept);
    const activatedAt = input.activated.get(name);
    const isAdditional = additional.has(name);
    if (deferredByConfig && activatedAt === undefined && !isAdditional) continue;
    let triageClass: TriageClass;
    let namedInHint = false;
    if (isAdditional) {
      triageClass = "keep";
    } else if (activatedAt !== undefined) {
      triageClass = "activated";
    } else if (kept !== null) {
      triageClass = "keep";
      namedInHint = kept === "name";
    } else {
      const dropped = dropFirst.match(name);
      if (dropped !== null) {
        triageClass = "dropFirst";
        namedInHint = dropped === "name";
      } else if (added) {
        triageClass = "add";
      } else {
        triageClass = isPackTool(name) ? "pack" : "builtIn";
      }
    }
    candidates.push({
      name,
      triageClass,
      demand: activatedAt ?? demand.get(name) ?? 0,
      namedInHint,
      ...(tool.family ? { family: tool.family } : {}),
      ...(counted ? { tokens: tokensOf(tool) } : {}),
    });
    measured.push(activatedAt === undefined);
  }
  return { tools, candidates, measured };
}

/** The triage over `candidates`, and the buckets from it. */
function complete(
  prepared: Prepared,
  candidates: readonly TriageCandidate[],
  limit: number | null,
  tokenLimit: number | null,
): Classification {
  const triage = triageTools(candidates, limit, tokenLimit);
  const deferred = complement(prepared.tools, triage.kept);
  const demoted = new Set(triage.demoted);
  return {
    primary: triage.kept,
    deferred,
    demoted: triage.demoted,
    demotedUnits: triage.demotedUnits,
    staticDeferred: demoted.size === 0 ? [...deferred] : deferred.filter((name) => !demoted.has(name)),
  };
}

/**
 * What a tool takes of the tools array, estimated like the discovery blocks (`estimateTokens`):
 * its name, description and input schema as JSON, and a few tokens of the wire's frame.
 */
export function toolTokens(tool: SurfaceTool): number {
  return (
    TOOL_FRAME_TOKENS +
    estimateTokens(tool.name) +
    estimateTokens(tool.description) +
    estimateTokens(JSON.stringify(tool.inputSchema))
  );
}

/** Tokens of a tool's frame on the wire (`type`, `function`, `name`, `parameters` keys). */
const TOOL_FRAME_TOKENS = 8;

/** The names of `tools` not in `kept`, in name order; both lists are in name order, `kept` a subset. */
function complement(tools: readonly SurfaceTool[], kept: readonly string[]): string[] {
  const rest: string[] = [];
  let next = 0;
  for (let index = 0; index < tools.length; index++) {
    const { name } = tools[index]!;
    if (next < kept.length && kept[next] === name) next++;
    else rest.push(name);
  }
  return rest;
}
