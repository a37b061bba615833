import * as v from "valibot";
import { Errors } from "../errors";
import { InvocableToolNameSchema, LabelSchema, TOOL_NAME_PATTERN } from "../ids";
import type { ServerToolService } from "../tools/server-tool-service";

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

/**
 * `RecipeResolver` (spec §6): `(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove`, each
 * `@label` expanded through the cascade's label lookup (built-in tools' labels included) and
 * each pack name into the pack's sub-tools, at the moment of the call — a spawn freezes the
 * result, so later tools do not join.
 */
export class RecipeResolver {
  constructor(private readonly tools: ServerToolService) {}

  /** The resolved allow set, sorted. One `listAll` serves every label and pack of the recipe. */
  async resolve(tenant: string, project: string, lists: RecipeLists): Promise<string[]> {
    const entries = [
      ...(lists.engineDefault ?? []),
      ...(lists.allowedToolsAdd ?? []),
      ...(lists.allowedToolsRemove ?? []),
    ];
    for (const entry of entries) {
      if (!v.is(RecipeEntrySchema, entry)) {
        throw Errors.validationFailed("a recipe entry is neither a tool name nor an @label", [
          { path: "allowedTools", message: `'${entry}' is not a tool name or an @label selector` },
        ]);
      }
    }
    // Labels and pack names expand through the listing: a pack's sub-tools carry its labels.
    const listed = entries.length > 0 ? await this.tools.listAll(tenant, project) : [];
    const packs = new Map<string, string[]>();
    for (const tool of listed) {
      if (!tool.pack) continue;
      const members = packs.get(tool.pack.name);
      if (members) members.push(tool.name);
      else packs.set(tool.pack.name, [tool.name]);
    }
    const expand = (list: readonly string[] | undefined): string[] =>
      (list ?? []).flatMap((entry) =>
        entry.startsWith("@")
          ? listed.filter((tool) => tool.config.labels.includes(entry.slice(1))).map((tool) => tool.name)
          : (packs.get(entry) ?? [entry]),
      );
    const removed = new Set(expand(lists.allowedToolsRemove));
    const allowed = new Set([...expand(lists.engineDefault), ...expand(lists.allowedToolsAdd)]);
    return [...allowed].filter((name) => !removed.has(name)).sort();
  }
}
