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
  /** `configureTools(tools, hints)` kept by the caller (the classification memo); computed without. */
  readonly configured?: ConfiguredTools;
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
  readonly configured: ConfiguredTools;
  /** Tools configuration defers that activations or skills made candidates. */
  readonly promoted: readonly string[];
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

/**
 * The part of a classification that only the tools and the recipe decide — not activations,
 * skills, the budget or demand: the tools in name order and, per tool, where configuration alone
 * puts it. **The classification memo (issue 36):** `ToolSurface` keeps one per process and
 * listing (a process's allow set and recipe are frozen at spawn), so a turn or a `tool_search`
 * whose activations changed classifies only the tools that can be on the wire — not every tool
 * of a 17,000-operation allow set again. Pure and immutable: a tool snapshot can own it later.
 */
export interface ConfiguredTools {
  /** The tools in name order. */
  readonly tools: readonly SurfaceTool[];
  /** A tool's position in `tools`, by name. */
  readonly positions: ReadonlyMap<string, number>;
  /** Per tool in name order: where configuration puts it. */
  readonly entries: readonly ConfiguredEntry[];
  /** Positions of the tools configuration alone puts in the array (the floor included), ascending. */
  readonly inArray: readonly number[];
  /** Names of the tools configuration alone defers, in name order. */
  readonly deferred: readonly string[];
}

/** Where configuration alone puts one tool. */
interface ConfiguredEntry {
  /** Its class when neither a skill nor an activation promotes it; null when configuration defers it. */
  readonly triageClass: TriageClass | null;
  readonly namedInHint: boolean;
}

/** {@link ConfiguredTools} of `tools` under `hints`: linear in the tools, one sort. */
export function configureTools(tools: readonly SurfaceTool[], hints: RecipeHints): ConfiguredTools {
  const compiled = new CompiledHints(hints);
  const { add, keep, dropFirst } = compiled;
  // One sort: every list below is built in name order, so none is sorted again.
  const ordered = sortByName(tools);
  const positions = new Map<string, number>();
  const entries: ConfiguredEntry[] = [];
  const inArray: number[] = [];
  const deferred: string[] = [];
  for (let index = 0; index < ordered.length; index++) {
    const tool = ordered[index]!;
    const { name } = tool;
    positions.set(name, index);
    if (inCapabilityFloor(name)) {
      entries.push({ triageClass: "mandatory", namedInHint: false });
      inArray.push(index);
      continue;
    }
    const added = add.has(name);
    const kept = keep.match(name);
    if (compiled.deferred(tool, added, kept)) {
      entries.push({ triageClass: null, namedInHint: false });
      deferred.push(name);
      continue;
    }
    let triageClass: TriageClass;
    let namedInHint = false;
    if (kept !== null) {
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
    entries.push({ triageClass, namedInHint });
    inArray.push(index);
  }
  return { tools: ordered, positions, entries, inArray, deferred };
}

/**
 * Everything but the triage: the candidates, ranked by `demand` where it applies. Reads only the
 * tools configuration puts in the array and those activations or skills promote.
 */
function prepare(input: Omit<ClassificationInput, "demand">, demand: ReadonlyMap<string, number>): Prepared {
  const configured = input.configured ?? configureTools(input.tools, input.hints);
  const { tools, positions, entries } = configured;
  const additional = new Set(input.additional ?? []);
  // Schema tokens are estimated only where a token limit reads them.
  const counted = (input.tokenLimit ?? null) !== null;
  const tokensOf = input.tokensOf ?? toolTokens;

  // The positions to read: configuration's, and the tools activations and skills promote.
  let reads = configured.inArray;
  const promoted: number[] = [];
  for (const name of [...input.activated.keys(), ...additional]) {
    const at = positions.get(name);
    if (at !== undefined && entries[at]!.triageClass === null) promoted.push(at);
  }
  if (promoted.length > 0) reads = mergeAscending(reads, promoted);

  const candidates: TriageCandidate[] = [];
  const measured: boolean[] = [];
  const promotedNames: string[] = [];
  for (const index of reads) {
    const tool = tools[index]!;
    const { name } = tool;
    const entry = entries[index]!;
    if (entry.triageClass === "mandatory") {
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
    const activatedAt = input.activated.get(name);
    const isAdditional = additional.has(name);
    if (entry.triageClass === null) promotedNames.push(name);
    const triageClass: TriageClass = isAdditional
      ? "keep"
      : activatedAt !== undefined
        ? "activated"
        : entry.triageClass!;
    candidates.push({
      name,
      triageClass,
      demand: activatedAt ?? demand.get(name) ?? 0,
      namedInHint: isAdditional || activatedAt !== undefined ? false : entry.namedInHint,
      ...(tool.family ? { family: tool.family } : {}),
      ...(counted ? { tokens: tokensOf(tool) } : {}),
    });
    measured.push(activatedAt === undefined);
  }
  return { tools, configured, promoted: promotedNames, candidates, measured };
}

/** `a` and `b` (each ascending) merged, ascending, without repeats. */
function mergeAscending(a: readonly number[], b: readonly number[]): number[] {
  const other = [...new Set(b)].sort((x, y) => x - y);
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < other.length) {
    const next = j >= other.length || (i < a.length && a[i]! <= other[j]!) ? a[i++]! : other[j++]!;
    if (out.length === 0 || out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

/** The triage over `candidates`, and the buckets from it. */
function complete(
  prepared: Prepared,
  candidates: readonly TriageCandidate[],
  limit: number | null,
  tokenLimit: number | null,
): Classification {
  const triage = triageTools(candidates, limit, tokenLimit);
  const demoted = new Set(triage.demoted);
  // The deferred lists (every tool of a big allow set) are written when first read: a search
  // reads only whether a tool is in the array (see `isDeferred`).
  let deferred: string[] | undefined;
  let staticDeferred: string[] | undefined;
  const deferredList = () => {
    deferred ??= deferredNames(prepared, demoted);
    return deferred;
  };
  return {
    primary: triage.kept,
    get deferred() {
      return deferredList();
    },
    demoted: triage.demoted,
    demotedUnits: triage.demotedUnits,
    get staticDeferred() {
      staticDeferred ??=
        demoted.size === 0 ? [...deferredList()] : deferredList().filter((name) => !demoted.has(name));
      return staticDeferred;
    },
  };
}

/**
 * Every candidate is kept or demoted: the tools not kept are configuration's deferred ones but
 * those activations or skills promoted and kept, and the demoted ones. In name order.
 */
function deferredNames(prepared: Prepared, demoted: ReadonlySet<string>): string[] {
  const { configured, promoted } = prepared;
  if (demoted.size === 0 && promoted.length === 0) return [...configured.deferred];
  const promotedNow = new Set(promoted);
  const { entries } = configured;
  const rest: string[] = [];
  // `configured.tools` is in name order: one pass, no sort.
  for (let index = 0; index < configured.tools.length; index++) {
    const { name } = configured.tools[index]!;
    const deferredByConfig = entries[index]!.triageClass === null;
    if (demoted.has(name) || (deferredByConfig && !promotedNow.has(name))) rest.push(name);
  }
  return rest;
}

/**
 * Whether `name` is one of `classification`'s tools outside the tools array: one of `tools`
 * (every tool the process may invoke) and not primary. Reads no deferred list.
 */
export function isDeferred(
  classification: Pick<Classification, "primary">,
  tools: { has(name: string): boolean },
  name: string,
): boolean {
  return tools.has(name) && !classification.primary.includes(name);
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
