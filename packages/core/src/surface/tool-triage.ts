import { VanceError } from "../errors";
import { compareStrings } from "../order";
import { sortByName } from "./name-order";
import { toolFamily } from "./tool-family";

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
  demand: number;
  demoted: boolean;
}

const CLASS_RANK = new Map(TRIAGE_CLASSES.map((triageClass, index) => [triageClass, index]));

/**
 * `ToolTriage` (spec §14.2): while the candidates exceed `limit`, demote whole families, in
 * class order and, within a class, lowest demand first (ties by family name, for determinism).
 * A floor (mandatory tools) larger than the limit is a configuration error: 409.
 * Candidate names are unique; candidates already in name order are not sorted again.
 */
export function triageTools(candidates: readonly TriageCandidate[], limit: number | null): TriageResult {
  const sorted = sortByName(candidates);
  if (limit === null || sorted.length <= limit)
    return { kept: sorted.map((candidate) => candidate.name), demoted: [], demotedUnits: [] };
  let mandatory = 0;
  for (const candidate of sorted) if (candidate.triageClass === "mandatory") mandatory++;
  if (mandatory > limit) {
    throw new VanceError(
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
      unit.demand = Math.max(unit.demand, candidate.demand);
    } else {
      unit = { family, triageClass, members: [candidate.name], demand: candidate.demand, demoted: false };
      group.set(family, unit);
      order.push(unit);
    }
    unitOf[index] = unit;
  }
  order.sort(
    (a, b) =>
      CLASS_RANK.get(a.triageClass)! - CLASS_RANK.get(b.triageClass)! ||
      a.demand - b.demand ||
      compareStrings(a.family, b.family),
  );
  let size = sorted.length;
  const demoted: string[] = [];
  const demotedUnits: TriageResult["demotedUnits"] = [];
  for (const unit of order) {
    if (size <= limit) break;
    size -= unit.members.length;
    unit.demoted = true;
    demoted.push(...unit.members);
    demotedUnits.push({ family: unit.family, triageClass: unit.triageClass, tools: unit.members.length });
  }
  const kept: string[] = [];
  for (let index = 0; index < sorted.length; index++)
    if (!unitOf[index]?.demoted) kept.push(sorted[index]!.name);
  return { kept, demoted, demotedUnits };
}
