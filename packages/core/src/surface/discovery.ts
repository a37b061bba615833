import { LRUCache } from "lru-cache";
import { CacheCounters, type CacheReport, lruExtent } from "../cache/cache-registry";
import { operationOf } from "../ids";
import { byString, compareStrings } from "../order";
import type { SurfaceTool } from "./classify";
import { estimateTokens } from "./tokens";
import { isPackTool, packSubFamily, toolFamily } from "./tool-family";

export { estimateTokens } from "./tokens";

const HINT_LENGTH = 120;

/**
 * Tokens the static discovery block may take (issue 23: ≤ 2,000 at 10,000 tools); past it the
 * block collapses to one line per family, then per pack. Counted by {@link estimateTokens}.
 */
export const DISCOVERY_BLOCK_TOKENS = 2_000;
/** Tokens the demoted block may take before it collapses the same way. */
export const DEMOTED_BLOCK_TOKENS = 1_000;

/** What a block reads of a tool: a surface tool's, or a `CallableTool`'s for a description. */
type BlockTool = Pick<SurfaceTool, "name" | "description" | "packHint" | "family">;

/** How collapsed a block's lines are: every tool, one line per family, one line per pack. */
type Detail = "tools" | "families" | "packs";

/** Writes a tool's one-line hint from its description ({@link toolHint}, or a cache of it). */
export type HintWriter = (description: string) => string;

/**
 * Hints by description ({@link toolHint}, remembered). Every manifest lists each deferred tool's
 * hint, and the same descriptions come back turn after turn (a 5,000-tool manifest computes
 * thousands); bounded in bytes. One per composition root, listed in `/v1/metrics`.
 */
export class ToolHintCache {
  readonly #hints = new LRUCache<string, string>({
    maxSize: 4 * 1024 * 1024,
    sizeCalculation: (hint, description) => 2 * (hint.length + description.length),
  });
  readonly #reads = new CacheCounters();

  /** {@link toolHint} of `description`, computed once while it stays in the cache. */
  readonly hint: HintWriter = (description) => {
    let hint = this.#reads.read(this.#hints.get(description));
    if (hint === undefined) {
      hint = toolHint(description);
      this.#hints.set(description, hint);
    }
    return hint;
  };

  /** The cache's counters and extent. */
  report(): CacheReport {
    return this.#reads.report(lruExtent(this.#hints));
  }
}

/** A one-line hint from a description: its first sentence, at most 120 characters, cut between words. */
export function toolHint(description: string): string {
  return firstSentence(description);
}

function firstSentence(description: string): string {
  const flat = description.replace(/\s+/g, " ").trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  return sentence.length > HINT_LENGTH ? `${cutAtWord(sentence, HINT_LENGTH - 1)}…` : sentence;
}

/**
 * The longest start of `text` within `max` characters that ends at a word's end (a word longer
 * than half the room is cut where the room ends), without a dangling comma or colon.
 */
export function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max);
  const space = text[max] === " " ? max : room.lastIndexOf(" ");
  const cut = space >= max / 2 ? room.slice(0, space) : room;
  let end = cut.trimEnd().length;
  while (end > 0 && ",;:".includes(cut[end - 1]!)) end--;
  return cut.slice(0, end);
}

/** The block's lines at the most detail that fits `budget` tokens (the coarsest when none does). */
function fittedLines(
  tools: readonly BlockTool[],
  budget: number,
  hint: HintWriter,
): { lines: string[]; collapsed: boolean } {
  const full = lines(tools, hint);
  if (estimateTokens(full.join("\n")) <= budget) return { lines: full, collapsed: false };
  const families = collapsedLines(tools, "families", hint);
  if (estimateTokens(families.join("\n")) <= budget) return { lines: families, collapsed: true };
  const packs = collapsedLines(tools, "packs", hint);
  if (estimateTokens(packs.join("\n")) <= budget) return { lines: packs, collapsed: true };
  return { lines: prefixLines(tools, budget), collapsed: true };
}

/**
 * The last resort for surfaces too large to list even by family (10,000 tools): the family
 * prefixes alone, as many as the budget holds, then how many more there are — `tool_search`
 * and `tool_list` find the rest.
 */
function prefixLines(tools: readonly BlockTool[], budget: number): string[] {
  const counts = new Map<string, number>();
  for (const tool of [...tools].sort(byString((tool) => tool.name))) {
    const key = isPackTool(tool.name) ? `${toolFamily(tool.name)}__` : `${toolFamily(tool.name)}_`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const head = `- ${tools.length} tools in ${counts.size} families; call \`tool_search\` with what you need (when you have it) or \`tool_list\` with a prefix:`;
  const out = [head];
  let used = estimateTokens(head) + 40;
  let shown = 0;
  for (const [prefix, count] of counts) {
    const line = `  - ${prefix}* (${count})`;
    const cost = estimateTokens(line) + 1;
    if (used + cost > budget) break;
    out.push(line);
    used += cost;
    shown++;
  }
  if (shown < counts.size) out.push(`  - … and ${counts.size - shown} more families`);
  return out;
}

/**
 * One line per family (`- github__issues_* (38 tools)`; a pack's hint on a line of its own) or
 * per pack and name prefix (`- github__* (1,223 tools in 40 families: actions, issues, …)`). A
 * family of one tool keeps its own line. `tool_list` with the prefix names the tools.
 */
function collapsedLines(
  tools: readonly BlockTool[],
  detail: Exclude<Detail, "tools">,
  toolHint: HintWriter,
): string[] {
  const sorted = [...tools].sort(byString((tool) => tool.name));
  const groups = new Map<string, BlockTool[]>();
  for (const tool of sorted) {
    const key = isPackTool(tool.name)
      ? detail === "families"
        ? packSubFamily(tool.name, tool.family)
        : toolFamily(tool.name)
      : toolFamily(tool.name);
    const members = groups.get(key);
    if (members) members.push(tool);
    else groups.set(key, [tool]);
  }
  const out: string[] = [];
  const hinted = new Set<string>();
  for (const [key, members] of groups) {
    const first = members[0]!;
    const pack = isPackTool(first.name) ? toolFamily(first.name) : null;
    const hint = members.find((member) => member.packHint)?.packHint;
    if (members.length === 1 && pack === null) {
      out.push(`- ${first.name} — ${toolHint(first.description)}`);
      continue;
    }
    if (pack !== null && detail === "families") {
      if (hint && !hinted.has(pack)) {
        hinted.add(pack);
        out.push(`- ${pack}__* — ${toolHint(hint)}`);
      }
      out.push(`  - ${key}_* (${members.length} tool${members.length === 1 ? "" : "s"})`);
      continue;
    }
    if (pack !== null) {
      const inside = [...new Set(members.map((member) => packSubFamily(member.name, member.family)))];
      const names = inside.map((family) => family.slice(pack.length + 2)).join(", ");
      out.push(
        `- ${pack}__* (${members.length} tools in ${inside.length} families: ${names})${hint ? ` — ${toolHint(hint)}` : ""}`,
      );
      continue;
    }
    out.push(`- ${key}_* (${members.length} tools) — ${toolHint(first.description)}`);
  }
  return out;
}

/** What a block's heading, instruction and collapse note take of its budget (estimated). */
const BLOCK_FRAME_TOKENS = 300;

const COLLAPSED_NOTE =
  "Lines ending in `_*` stand for several tools: call `tool_list` with that prefix (for example `github__issues_`) to see their names.";

function lines(tools: readonly BlockTool[], toolHint: HintWriter): string[] {
  const out: string[] = [];
  const packs = new Map<string, BlockTool[]>();
  const sorted = [...tools].sort(byString((tool) => tool.name));
  for (const tool of sorted) {
    if (!isPackTool(tool.name)) continue;
    const pack = toolFamily(tool.name);
    const members = packs.get(pack);
    if (members) members.push(tool);
    else packs.set(pack, [tool]);
  }
  const seenPacks = new Set<string>();
  for (const tool of sorted) {
    if (!isPackTool(tool.name)) {
      out.push(`- ${tool.name} — ${toolHint(tool.description)}`);
      continue;
    }
    const pack = toolFamily(tool.name);
    if (seenPacks.has(pack)) continue;
    seenPacks.add(pack);
    const members = packs.get(pack)!;
    const hint = members.find((member) => member.packHint)?.packHint;
    const ops = members.map((member) => operationOf(member.name, pack)).join(", ");
    out.push(`- ${pack}__* (${members.length} tools: ${ops})${hint ? ` — ${toolHint(hint)}` : ""}`);
  }
  return out;
}

/**
 * The discovery block for the cache-stable system prefix (spec §14.3): the deferred tools minus
 * those the budget demoted this turn — so neither an activated tool (it is in the tools array)
 * nor a demoted one (the dynamic block has it) — as `name — hint`, packs grouped with one line
 * each, and the activate-first instruction. A demotion never changes it; an activation takes the
 * activated tool's line out. `unavailablePacks` are the process's packs whose source has never
 * answered: each gets a line saying so, so the model knows the pack exists and to look again.
 */
export function discoveryBlock(
  deferred: readonly SurfaceTool[],
  unavailablePacks: readonly string[] = [],
  budgetTokens: number = DISCOVERY_BLOCK_TOKENS,
  hint: HintWriter = toolHint,
): string {
  if (deferred.length === 0 && unavailablePacks.length === 0) return "";
  const fitted = fittedLines(deferred, budgetTokens - BLOCK_FRAME_TOKENS, hint);
  return [
    "## More tools, available on request",
    "",
    "These tools are not in your tools array. To use one, first call `tool_description` with its name (several names at once are fine); it is then added to your tools array and you can call it.",
    ...(fitted.collapsed ? [COLLAPSED_NOTE] : []),
    "",
    ...fitted.lines,
    ...[...unavailablePacks]
      .sort()
      .map(
        (pack) =>
          `- ${pack}__* — unavailable right now: its source does not answer; call tool_list later to see its tools`,
      ),
    "",
  ].join("\n");
}

/**
 * Tokens the discovery summary in `tool_description`'s description may take: it repeats, for
 * clients that drop `initialize`'s instructions, what the static block says — within a quarter of
 * the block's budget, so it collapses sooner.
 */
export const DISCOVERY_SUMMARY_TOKENS = 500;

/**
 * The discovery summary a meta-tool's description carries (issue 36): the tools deferred by
 * configuration and the recipe, as the static block lists them, collapsed within
 * {@link DISCOVERY_SUMMARY_TOKENS}. Frameworks that drop the server's `initialize` instructions
 * (the AI SDK, LangChain, the OpenAI Agents SDK) still show the model what it can ask for. It
 * depends on the deferred tools alone, never on activations or the budget, so the description
 * reads the same in every turn.
 */
export function discoverySummary(deferred: readonly BlockTool[], hint: HintWriter = toolHint): string {
  if (deferred.length === 0) return "";
  const fitted = fittedLines(deferred, DISCOVERY_SUMMARY_TOKENS - 120, hint);
  return [
    "More tools, not in your tool list, are available on request: call tool_description with their names (several at once), then call them.",
    ...(fitted.collapsed ? [COLLAPSED_NOTE] : []),
    ...fitted.lines,
  ].join("\n");
}

/**
 * The dynamic block for a separate system message: exactly the tools the budget moved out of
 * the tools array this turn. Empty when nothing was demoted.
 */
export function demotedDiscoveryBlock(
  demoted: readonly SurfaceTool[],
  budgetTokens: number = DEMOTED_BLOCK_TOKENS,
  hint: HintWriter = toolHint,
): string {
  if (demoted.length === 0) return "";
  const fitted = fittedLines(demoted, budgetTokens - BLOCK_FRAME_TOKENS, hint);
  return [
    "## Tools moved out of your tools array this turn",
    "",
    "The model endpoint limits how many tools can be sent, so these are not in the array right now. They still work: call `tool_description` with their names first, then call them — invoking one by name also activates it.",
    ...(fitted.collapsed ? [COLLAPSED_NOTE] : []),
    "",
    ...fitted.lines,
    "",
  ].join("\n");
}

/** How `tool_list` without a prefix says an entry stands for several tools. */
export const COLLAPSED_LIST_NOTE =
  "Entries like `github__issues_* (38 tools)` stand for several tools: call tool_list with that prefix (for example `github__issues_`) to see their names.";

/**
 * Name lists (`tool_list`'s `inContext` and `available`) within `budget` tokens of JSON, collapsed
 * as the discovery blocks collapse: every name while they fit, else one entry per family
 * (`github__issues_* (38 tools)`; a family of one keeps its name) — packs' first, plain tools'
 * then —, else one per pack, else as many entries as fit and how many more there are. Families are read off the names, so each entry's
 * prefix is one `tool_list` expands.
 */
export function collapsedNameLists(
  lists: readonly (readonly string[])[],
  budget: number,
): { lists: string[][]; collapsed: boolean } {
  const fits = (candidate: readonly (readonly string[])[]) =>
    estimateTokens(JSON.stringify(candidate)) <= budget;
  const full = lists.map((names) => [...names]);
  if (fits(full)) return { lists: full, collapsed: false };
  // A pack's sub-tools go first (its machine-made names are the bulk); plain tools keep their
  // names while that fits, then group by family too.
  const levels: ((name: string) => string | null)[] = [
    (name) => (isPackTool(name) ? packSubFamily(name) : null),
    (name) => packSubFamily(name),
    toolFamily,
  ];
  let grouped: string[][] = full;
  for (const keyOf of levels) {
    grouped = lists.map((names) => groupedNames(names, keyOf));
    if (fits(grouped)) return { lists: grouped, collapsed: true };
  }
  // Too many packs even for that: the first entries of each list, in turn, while they fit.
  const cut: string[][] = grouped.map(() => []);
  let used = estimateTokens(JSON.stringify(cut)) + 20;
  for (const [index, entries] of grouped.entries()) {
    for (const entry of entries) {
      const cost = estimateTokens(JSON.stringify(entry)) + 1;
      if (used + cost > budget) break;
      cut[index]!.push(entry);
      used += cost;
    }
    const left = entries.length - cut[index]!.length;
    if (left > 0) cut[index]!.push(`… and ${left} more entries: call tool_list with a prefix`);
  }
  return { lists: cut, collapsed: true };
}

/**
 * `names` grouped by `keyOf`: a group of one is its name, a larger one `key_* (N tools)`; a name
 * whose key is null stays itself.
 */
function groupedNames(names: readonly string[], keyOf: (name: string) => string | null): string[] {
  const groups = new Map<string, string[]>();
  for (const name of [...names].sort(compareStrings)) {
    const key = keyOf(name) ?? `\0${name}`;
    const members = groups.get(key);
    if (members) members.push(name);
    else groups.set(key, [name]);
  }
  return [...groups].map(([key, members]) =>
    members.length === 1
      ? members[0]!
      : `${key}${isPackTool(members[0]!) && key === toolFamily(members[0]!) ? "__" : "_"}* (${members.length} tools)`,
  );
}
