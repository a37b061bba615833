import type { JsonSchema } from "../json-schema";
import { isPackTool, ToolHints } from "./tool-family";
import { type TriageCandidate, type TriageClass, type TriageResult, triageTools } from "./tool-triage";

/** The capability floor (spec §13.1): always primary, added even when an engine's list lacks them. */
export const MANDATORY_TOOLS: readonly string[] = ["tool_description", "tool_list"];
const MANDATORY = new Set(MANDATORY_TOOLS);

/** Whether `name` is one of the capability floor's tools. */
export function isMandatoryTool(name: string): boolean {
  return MANDATORY.has(name);
}

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
}

export interface Classification {
  /** In the tools array this turn, sorted by name. */
  readonly primary: string[];
  /** Invocable but not in the array (statically deferred, or demoted), sorted by name. */
  readonly deferred: string[];
  /** Demoted by the budget this turn, in demotion order. */
  readonly demoted: string[];
  readonly demotedUnits: TriageResult["demotedUnits"];
  /** Deferred by configuration alone: what the cache-stable discovery block lists, sorted. */
  readonly staticDeferred: string[];
}

/**
 * Classifies a process's tools into primary and deferred (spec §13, §14.2): the configuration's
 * `primary` flags, recipe promotions (`allowedToolsAdd` by name, `allowedToolsKeep`) and
 * deferrals (`allowedToolsDefer`, packs' `defaultDeferred`), live activations, the mandatory
 * floor, then the budget triage. Pure and allocation-light: it runs on every manifest.
 */
export function classifyTools(input: ClassificationInput): Classification {
  const add = new Set(input.hints.allowedToolsAdd);
  const keep = new ToolHints(input.hints.allowedToolsKeep);
  const defer = new ToolHints(input.hints.allowedToolsDefer);
  const dropFirst = new ToolHints(input.hints.allowedToolsDropFirst);
  const additional = new Set(input.additional ?? []);

  const candidates: TriageCandidate[] = [];
  const staticDeferred: string[] = [];
  const deferredOnly: string[] = [];
  for (const tool of input.tools) {
    const { name } = tool;
    if (isMandatoryTool(name)) {
      candidates.push({ name, triageClass: "mandatory", demand: 0, namedInHint: false });
      continue;
    }
    const promoted = tool.primary || add.has(name) || keep.has(name);
    const deferredByConfig =
      !promoted ||
      defer.has(name) ||
      (tool.defaultDeferred && isPackTool(name) && !add.has(name) && !keep.has(name));
    if (deferredByConfig) staticDeferred.push(name);
    const activatedAt = input.activated.get(name);
    if (deferredByConfig && activatedAt === undefined && !additional.has(name)) {
      deferredOnly.push(name);
      continue;
    }
    let triageClass: TriageClass;
    let namedInHint = false;
    if (additional.has(name)) {
      triageClass = "keep";
    } else if (activatedAt !== undefined) {
      triageClass = "activated";
    } else if (keep.has(name)) {
      triageClass = "keep";
      namedInHint = keep.match(name) === "name";
    } else if (dropFirst.has(name)) {
      triageClass = "dropFirst";
      namedInHint = dropFirst.match(name) === "name";
    } else if (add.has(name)) {
      triageClass = "add";
    } else {
      triageClass = isPackTool(name) ? "pack" : "builtIn";
    }
    const demand = activatedAt ?? input.demand.get(name) ?? 0;
    candidates.push({ name, triageClass, demand, namedInHint });
  }
  const triage = triageTools(candidates, input.limit);
  const deferred = [...deferredOnly, ...triage.demoted].sort();
  return {
    primary: triage.kept,
    deferred,
    demoted: triage.demoted,
    demotedUnits: triage.demotedUnits,
    staticDeferred: staticDeferred.sort(),
  };
}
