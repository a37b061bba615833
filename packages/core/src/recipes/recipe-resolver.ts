import * as v from "valibot";
import { Errors } from "../errors";
import {
  InvocableToolNameSchema,
  LabelSchema,
  META_TOOL,
  packOf,
  TOOL_NAME_PATTERN,
  toolDocumentPath,
} from "../ids";
import type { PackSource, ToolListing } from "../tools/resolved-tool";
import type { ToolSnapshot } from "../tools/tool-snapshot";

/** A recipe entry: a tool name (pack sub-tools `pack__op` included) or a `@label` selector. */
export const RecipeEntrySchema = v.pipe(
  v.string(),
  v.check(
    (entry) =>
      entry.startsWith("@") ? v.is(LabelSchema, entry.slice(1)) : v.is(InvocableToolNameSchema, entry),
    "a tool name (at most 64 characters) or an @label selector",
  ),
);

/** A hint entry: a tool name or a prefix pattern ending in `*` (`doc_*`). */
export const HintEntrySchema = v.pipe(
  v.string(),
  v.check(
    (entry) =>
      entry.endsWith("*") ? TOOL_NAME_PATTERN.test(entry.slice(0, -1)) : v.is(InvocableToolNameSchema, entry),
    "a tool name (at most 64 characters) or a prefix pattern such as doc_*",
  ),
);

export interface RecipeLists {
  readonly engineDefault?: readonly string[];
  readonly allowedToolsAdd?: readonly string[];
  readonly allowedToolsRemove?: readonly string[];
}

/** The recipe lists a warning may be about. */
export type RecipeList =
  | "engineDefault"
  | "allowedToolsAdd"
  | "allowedToolsRemove"
  | "allowedToolsKeep"
  | "allowedToolsDefer"
  | "allowedToolsDropFirst"
  | "models";

/**
 * Something a spawn or a resolution accepted but that does nothing as written — a name no tool
 * has, a label no tool carries, a model instance the catalog does not know — or that it did
 * without being asked (`tool_search_added`): said in the answer instead of passing silently.
 */
export interface RecipeWarning {
  readonly code:
    | "unknown_tool"
    | "invalid_tool"
    | "unknown_label"
    | "not_allowed"
    | "matches_nothing"
    | "unknown_model_instance"
    | "tool_search_added";
  readonly list: RecipeList;
  readonly entry: string;
  readonly message: string;
}

/** A pack of the allow set whose source did not answer with a current list just now. */
export interface StalePack {
  readonly pack: string;
  readonly status: "stale" | "unavailable";
  readonly reason: string;
}

/** A resolved recipe: what a spawn freezes, and what it should tell its caller. */
export interface RecipeResolution {
  /** Names, sorted: plain tools, and the sub-tools packs offer right now. */
  readonly allowedTools: string[];
  /**
   * Packs by reference, sorted: every sub-tool the pack's source offers when a turn or call
   * reads it is allowed, so a pack whose source was down at spawn gets its tools once it answers.
   */
  readonly allowedPacks: string[];
  /** Sub-tools of `allowedPacks` removed by name (`allowedToolsRemove`), sorted. */
  readonly excludedTools: string[];
  readonly stalePacks: StalePack[];
  readonly warnings: RecipeWarning[];
}

/** One list's entries expanded: names, and packs by reference. */
interface Expanded {
  readonly names: Set<string>;
  readonly packs: Set<string>;
}

/**
 * `RecipeResolver` (spec §6): `(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove`, each
 * `@label` expanded through the cascade's label lookup (built-in tools' labels included) and
 * each pack — named, or carrying the label — kept as a reference to the pack, at the moment of
 * the call. A spawn freezes the result, so later tools do not join; a referenced pack's members
 * are what its source offers at the time. Entries that name nothing come back as warnings.
 */
export class RecipeResolver {
  /**
   * The resolved allow set. One listing serves every label and pack of the recipe. `clientTools`
   * are names the engine declares itself: known, though no document has them.
   */
  async resolve(
    snapshot: ToolSnapshot,
    lists: RecipeLists,
    options: { readonly clientTools?: readonly string[] } = {},
  ): Promise<RecipeResolution> {
    const entries = [
      ...(lists.engineDefault ?? []),
      ...(lists.allowedToolsAdd ?? []),
      ...(lists.allowedToolsRemove ?? []),
    ];
    for (const entry of entries) {
      if (!v.is(RecipeEntrySchema, entry)) {
        throw Errors.validationFailed("a recipe entry is neither a tool name nor an @label selector", [
          { path: "allowedTools", message: `'${entry}' is not a tool name or an @label selector` },
        ]);
      }
    }
    const listing: ToolListing =
      entries.length > 0 ? await snapshot.listing() : { tools: [], invalid: [], packs: [], hidden: [] };
    const scope = new RecipeScope(listing, options.clientTools ?? []);
    const warnings: RecipeWarning[] = [];
    const expand = (list: RecipeList, names: readonly string[] | undefined): Expanded => {
      const out: Expanded = { names: new Set(), packs: new Set() };
      for (const entry of names ?? []) scope.expand(list, entry, out, warnings);
      return out;
    };
    const defaults = expand("engineDefault", lists.engineDefault);
    const added = expand("allowedToolsAdd", lists.allowedToolsAdd);
    const removed = expand("allowedToolsRemove", lists.allowedToolsRemove);
    const allowedPacks = [...defaults.packs, ...added.packs].filter((pack) => !removed.packs.has(pack));
    const packs = new Set(allowedPacks);
    const allowedTools = [...new Set([...defaults.names, ...added.names])].filter(
      (name) => !removed.names.has(name) && !removed.packs.has(packOf(name) ?? ""),
    );
    const excludedTools = [...removed.names].filter((name) => packs.has(packOf(name) ?? ""));
    if (
      !allowedTools.includes(TOOL_SEARCH) &&
      !removed.names.has(TOOL_SEARCH) &&
      surfaceSize(allowedTools, packs, listing) > TOOL_SEARCH_AUTO_SIZE &&
      listing.tools.some((tool) => tool.name === TOOL_SEARCH)
    ) {
      allowedTools.push(TOOL_SEARCH);
      warnings.push({
        code: "tool_search_added",
        list: "allowedToolsAdd",
        entry: TOOL_SEARCH,
        message: `the allow set holds more than ${TOOL_SEARCH_AUTO_SIZE} tools, so ${TOOL_SEARCH} was added for the model to find them by words; name it in allowedToolsRemove to leave it out`,
      });
    }
    return {
      allowedTools: allowedTools.sort(),
      allowedPacks: [...packs].sort(),
      excludedTools: excludedTools.sort(),
      stalePacks: [...packs].sort().flatMap((name) => scope.staleness(name)),
      warnings,
    };
  }
}

/** The search meta-tool a large allow set gets without asking (`allowedToolsRemove` keeps it out). */
const TOOL_SEARCH = META_TOOL.search;

/**
 * Above this many allowed tools (packs counted by their sub-tools now) a spawn adds `tool_search`
 * by itself: past a few hundred names a model finds its tool faster by words than by name lists.
 */
export const TOOL_SEARCH_AUTO_SIZE = 200;

/** How many tools the allow set holds now: its names and the referenced packs' sub-tools. */
function surfaceSize(names: readonly string[], packs: ReadonlySet<string>, listing: ToolListing): number {
  let size = names.length;
  for (const pack of listing.packs) if (packs.has(pack.name)) size += pack.subTools;
  return size;
}

/** What one listing knows, indexed for expanding recipe entries. */
class RecipeScope {
  private readonly names: Set<string>;
  private readonly packs: Map<string, PackSource>;
  private readonly invalid: Map<string, string>;

  constructor(
    private readonly listing: ToolListing,
    clientTools: readonly string[],
  ) {
    this.names = new Set([...listing.tools.map((tool) => tool.name), ...clientTools]);
    this.packs = new Map(listing.packs.map((pack) => [pack.name, pack]));
    this.invalid = new Map(listing.invalid.map((document) => [document.path, document.error.message]));
  }

  /** Adds `entry`'s tools to `out`, or a warning when it names nothing usable. */
  expand(list: RecipeList, entry: string, out: Expanded, warnings: RecipeWarning[]): void {
    if (entry.startsWith("@")) {
      const label = entry.slice(1);
      let matched = false;
      for (const tool of this.listing.tools) {
        if (!tool.config.labels.includes(label)) continue;
        out.names.add(tool.name);
        matched = true;
      }
      for (const pack of this.listing.packs) {
        if (!pack.labels.includes(label)) continue;
        out.packs.add(pack.name);
        matched = true;
      }
      if (!matched) {
        warnings.push({
          code: "unknown_label",
          list,
          entry,
          message: `no tool carries the label '${label}'`,
        });
      }
      return;
    }
    const pack = this.packs.get(entry);
    if (pack) {
      out.packs.add(entry);
      for (const tool of this.listing.tools)
        if (tool.kind === "pack-sub-tool" && tool.pack.name === entry) out.names.add(tool.name);
      return;
    }
    // A name is kept as written (the spawn freezes it), known or not; only the warning differs.
    out.names.add(entry);
    if (this.names.has(entry)) return;
    const owner = packOf(entry);
    if (owner !== null && this.packs.get(owner)?.status === "unavailable") return;
    const invalid = this.invalid.get(toolDocumentPath(owner ?? entry));
    warnings.push(
      invalid === undefined
        ? { code: "unknown_tool", list, entry, message: `no enabled tool named '${entry}' in this project` }
        : { code: "invalid_tool", list, entry, message: invalid },
    );
  }

  /** The pack's entry in `stalePacks`, when its source is not current. */
  staleness(name: string): StalePack[] {
    const pack = this.packs.get(name);
    if (!pack || pack.status === "current") return [];
    return [{ pack: name, status: pack.status, reason: pack.reason ?? "" }];
  }
}
