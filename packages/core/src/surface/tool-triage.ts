import { VanceError } from "../errors";
import { compareStrings } from "../order";
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
  readonly members: string[];
  demand: number;
}

const CLASS_RANK = new Map(TRIAGE_CLASSES.map((triageClass, index) => [triageClass, index]));

/**
 * `ToolTriage` (spec §14.2): while the candidates exceed `limit`, demote whole families, in
 * class order and, within a class, lowest demand first (ties by family name, for determinism).
 * A floor (mandatory tools) larger than the limit is a configuration error: 409.
 */
export function triageTools(candidates: readonly TriageCandidate[], limit: number | null): TriageResult {
  const all = candidates.map((candidate) => candidate.name).sort();
  if (limit === null || candidates.length <= limit) return { kept: all, demoted: [], demotedUnits: [] };
  const mandatory = candidates.filter((candidate) => candidate.triageClass === "mandatory").length;
  if (mandatory > limit) {
    throw new VanceError(
      "budget_floor_exceeded",
      409,
      `the model chain allows ${limit} tools after the reserve, but the mandatory floor alone has ${mandatory} (tool_list, tool_description); raise maxTools in the catalog or lower the reserve`,
      [],
      { limit, floor: mandatory },
    );
  }
  const units = new Map<string, Unit>();
  for (const candidate of candidates) {
    if (candidate.triageClass === "mandatory") continue;
    const family = candidate.namedInHint ? candidate.name : toolFamily(candidate.name);
    const key = `${candidate.triageClass}\u0000${candidate.namedInHint ? "=" : "~"}${family}`;
    const unit = units.get(key);
    if (unit) {
      unit.members.push(candidate.name);
      unit.demand = Math.max(unit.demand, candidate.demand);
    } else {
      units.set(key, {
        family,
        triageClass: candidate.triageClass,
        members: [candidate.name],
        demand: candidate.demand,
      });
    }
  }
  const order = [...units.values()].sort(
    (a, b) =>
      CLASS_RANK.get(a.triageClass)! - CLASS_RANK.get(b.triageClass)! ||
      a.demand - b.demand ||
      compareStrings(a.family, b.family),
  );
  let size = candidates.length;
  const demoted: string[] = [];
  const demotedUnits: TriageResult["demotedUnits"] = [];
  for (const unit of order) {
    if (size <= limit) break;
    size -= unit.members.length;
    demoted.push(...unit.members.sort());
    demotedUnits.push({ family: unit.family, triageClass: unit.triageClass, tools: unit.members.length });
  }
  const gone = new Set(demoted);
  return { kept: all.filter((name) => !gone.has(name)), demoted, demotedUnits };
}
