import { VanceError } from "../errors";
import { compareStrings } from "../order";
import { sortByName } from "./name-order";
import { isPackTool, packSubFamily, toolFamily } from "./tool-family";

/**
 * Triage classes in demotion order: the first class goes first. `mandatory` never goes.
 * (spec §14.2: allowedToolsDropFirst → pack → built-in → allowedToolsAdd → allowedToolsKeep → activated)
 */
export const TRIAGE_CLASSES = [
  "dropFirst",
  "pack",
  "builtIn",
  "add",
  "keep",
  "activated",
  "mandatory",
] as const;
export type TriageClass = (typeof TRIAGE_CLASSES)[number];

/** One primary candidate as triage sees it. */
export interface TriageCandidate {
  readonly name: string;
  readonly triageClass: TriageClass;
  /** Measured demand: higher stays longer within a class (activation time, or usage counts). A family counts its strongest member. */
  readonly demand: number;
  /** Named exactly in a hint list: the tool is its own unit, cut out of its family. */
  readonly namedInHint: boolean;
  /** A pack sub-tool's family inside its pack, from its source (an OpenAPI tag); see `packSubFamily`. */
  readonly family?: string;
  /** What the tool takes of the tools array, estimated (`toolTokens`); counted against a token limit only. */
  readonly tokens?: number;
}

export interface TriageResult {
  /** Candidates that stay primary, sorted by name. */
  readonly kept: string[];
  /** Candidates moved to deferred, in demotion order. */
  readonly demoted: string[];
  /** The demoted units: family (or single tool) with class and size, in demotion order. */
  readonly demotedUnits: { family: string; triageClass: TriageClass; tools: number }[];
}

interface Unit {
  readonly family: string;
  readonly triageClass: TriageClass;
  /** In name order: candidates are grouped after sorting. */
  readonly members: string[];
  /** Indexes into the sorted candidates, in step with `members`. */
  readonly indexes: number[];
  demand: number;
  tokens: number;
  demoted: boolean;
}

const CLASS_RANK = new Map(TRIAGE_CLASSES.map((triageClass, index) => [triageClass, index]));

/**
 * `ToolTriage` (spec §14.2): while the candidates exceed `limit` — in number, or in the tokens
 * of their schemas past `tokenLimit` (the catalog's `maxToolTokens`) — demote whole families, in
 * class order and, within a class, lowest demand first (ties by family name, for determinism).
 * A floor (mandatory tools) larger than either limit is a configuration error: 409.
 * Candidate names are unique; candidates already in name order are not sorted again.
 */
export function triageTools(
  candidates: readonly TriageCandidate[],
  countLimit: number | null,
  tokenLimit: number | null = null,
): TriageResult {
  const sorted = sortByName(candidates);
  let totalTokens = 0;
  if (tokenLimit !== null) for (const candidate of sorted) totalTokens += candidate.tokens ?? 0;
  const overTokens = tokenLimit !== null && totalTokens > tokenLimit;
  if ((countLimit === null || sorted.length <= countLimit) && !overTokens)
    return { kept: sorted.map((candidate) => candidate.name), demoted: [], demotedUnits: [] };
  const limit = countLimit ?? sorted.length;
  const tokenBudget = tokenLimit ?? Number.POSITIVE_INFINITY;
  let mandatory = 0;
  let mandatoryTokens = 0;
  for (const candidate of sorted) {
    if (candidate.triageClass !== "mandatory") continue;
    mandatory++;
    mandatoryTokens += candidate.tokens ?? 0;
  }
  if (tokenLimit !== null && mandatoryTokens > tokenLimit) {
    throw VanceError.withStatus(
      "budget_floor_exceeded",
      409,
      `the model chain allows ${tokenLimit} tokens of tool schemas, but the mandatory floor alone takes ${mandatoryTokens} (tool_list, tool_description); raise maxToolTokens in the catalog`,
      [],
      { tokenLimit, floorTokens: mandatoryTokens },
    );
  }
  if (mandatory > limit) {
    throw VanceError.withStatus(
      "budget_floor_exceeded",
      409,
      `the model chain allows ${limit} tools after the reserve, but the mandatory floor alone has ${mandatory} (tool_list, tool_description); raise maxTools in the catalog or lower the reserve`,
      [],
      { limit, floor: mandatory },
    );
  }
  // A unit is a family (or a tool named in a hint) within one class; nested maps rather than a
  // joined key, so no key string is built per candidate.
  const units = new Map<
    TriageClass,
    { readonly named: Map<string, Unit>; readonly families: Map<string, Unit> }
  >();
  const unitOf: (Unit | undefined)[] = new Array(sorted.length);
  const order: Unit[] = [];
  for (let index = 0; index < sorted.length; index++) {
    const candidate = sorted[index]!;
    const { triageClass } = candidate;
    if (triageClass === "mandatory") continue;
    let byClass = units.get(triageClass);
    if (!byClass) {
      byClass = { named: new Map(), families: new Map() };
      units.set(triageClass, byClass);
    }
    const family = candidate.namedInHint ? candidate.name : toolFamily(candidate.name);
    const group = candidate.namedInHint ? byClass.named : byClass.families;
    let unit = group.get(family);
    if (unit) {
      unit.members.push(candidate.name);
      unit.indexes.push(index);
      unit.demand = Math.max(unit.demand, candidate.demand);
      unit.tokens += candidate.tokens ?? 0;
    } else {
      unit = {
        family,
        triageClass,
        members: [candidate.name],
        indexes: [index],
        demand: candidate.demand,
        tokens: candidate.tokens ?? 0,
        demoted: false,
      };
      group.set(family, unit);
      order.push(unit);
    }
    unitOf[index] = unit;
  }
  order.sort(byDemotionOrder);
  let size = sorted.length;
  let tokens = totalTokens;
  const demotedOrder: Unit[] = [];
  for (const unit of order) {
    if (size <= limit && tokens <= tokenBudget) break;
    size -= unit.members.length;
    tokens -= unit.tokens;
    unit.demoted = true;
    demotedOrder.push(unit);
  }
  // Never leave free slots a demoted family could fill: the last unit demoted may have freed
  // more than needed. Demoted units come back, most valued first, while they fit whole; a pack
  // larger than the whole budget comes back by its families inside (`packSubFamily`), each whole.
  // Order determines membership (spec §14.2): once a family that could be on the wire stays
  // demoted, no family of a lower class comes back in its place; only a unit that could never be
  // on the wire whole (a pack larger than the budget) leaves the lower classes free to fill.
  let room = limit - size;
  let tokenRoom = tokenBudget - tokens;
  const fits = (part: Unit) => part.members.length <= room && part.tokens <= tokenRoom;
  const finalDemoted: Unit[] = [];
  let blockedBelow = Number.NEGATIVE_INFINITY;
  for (let at = demotedOrder.length - 1; at >= 0; at--) {
    const unit = demotedOrder[at]!;
    const rank = CLASS_RANK.get(unit.triageClass)!;
    if (rank < blockedBelow) {
      finalDemoted.push(unit);
      continue;
    }
    if (room > 0 && fits(unit)) {
      unit.demoted = false;
      room -= unit.members.length;
      tokenRoom -= unit.tokens;
      continue;
    }
    // Only a pack that could never be on the wire whole is cut: one that fits the budget stays
    // one family (spec §14.2: a half-visible pack is the worst state).
    const neverWhole = unit.members.length > limit - mandatory || unit.tokens > tokenBudget - mandatoryTokens;
    if (!neverWhole) blockedBelow = Math.max(blockedBelow, rank);
    if (
      room > 0 &&
      neverWhole &&
      unit.family === toolFamily(unit.members[0]!) &&
      isPackTool(unit.members[0]!)
    ) {
      const parts = splitPack(unit, sorted);
      for (const part of parts) {
        if (fits(part)) {
          room -= part.members.length;
          tokenRoom -= part.tokens;
          for (const index of part.indexes) unitOf[index] = part;
        } else {
          part.demoted = true;
          for (const index of part.indexes) unitOf[index] = part;
          finalDemoted.push(part);
        }
      }
      continue;
    }
    finalDemoted.push(unit);
  }
  // In demotion order: the least valued first, as before.
  finalDemoted.sort(byDemotionOrder);
  const demoted: string[] = [];
  const demotedUnits: TriageResult["demotedUnits"] = [];
  for (const unit of finalDemoted) {
    demoted.push(...unit.members);
    demotedUnits.push({ family: unit.family, triageClass: unit.triageClass, tools: unit.members.length });
  }
  const kept: string[] = [];
  for (let index = 0; index < sorted.length; index++)
    if (!unitOf[index]?.demoted) kept.push(sorted[index]!.name);
  return { kept, demoted, demotedUnits };
}

/** Class order, then lowest demand, then family name: the order units are demoted in. */
function byDemotionOrder(a: Unit, b: Unit): number {
  return (
    CLASS_RANK.get(a.triageClass)! - CLASS_RANK.get(b.triageClass)! ||
    a.demand - b.demand ||
    compareStrings(a.family, b.family)
  );
}

/**
 * A pack's unit cut into its families inside the pack, most valued first (highest demand, then
 * the smaller family, then by name): the order they come back in while they fit.
 */
function splitPack(unit: Unit, sorted: readonly TriageCandidate[]): Unit[] {
  const parts = new Map<string, Unit>();
  for (const index of unit.indexes) {
    const candidate = sorted[index]!;
    const family = packSubFamily(candidate.name, candidate.family);
    let part = parts.get(family);
    if (!part) {
      part = {
        family,
        triageClass: unit.triageClass,
        members: [],
        indexes: [],
        demand: 0,
        tokens: 0,
        demoted: false,
      };
      parts.set(family, part);
    }
    part.members.push(candidate.name);
    part.indexes.push(index);
    part.demand = Math.max(part.demand, candidate.demand);
    part.tokens += candidate.tokens ?? 0;
  }
  return [...parts.values()].sort(
    (a, b) =>
      b.demand - a.demand || a.members.length - b.members.length || compareStrings(a.family, b.family),
  );
}
