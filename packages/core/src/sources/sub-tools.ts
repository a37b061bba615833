import { Errors, type VanceError } from "../errors";
import { operationOf, PACK_SEPARATOR, toolDocumentPath } from "../ids";
import type { SourceList, SourceTool } from "../tool-types/tool-type";

/** The longest tool name a model API accepts, and so the longest sub-tool name (`pack__op`). */
const MAX_NAME_LENGTH = 64;

/**
 * A source tool's name made a valid operation for `pack` (API.md): lower case, every character
 * outside `[a-z0-9_]` becomes `_`, cut so that `pack__op` has at most 64 characters.
 *
 * @example subToolOp("github", "Create-Issue") // "create_issue"
 */
export function subToolOp(pack: string, sourceName: string): string {
  const room = MAX_NAME_LENGTH - pack.length - PACK_SEPARATOR.length;
  const op = sourceName.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return (op.length > 0 ? op : "_").slice(0, Math.max(1, room));
}

/** A pack's sub-tools as names with their source tools, disabled ones removed, sorted by name. */
export type PackMembers = readonly { readonly name: string; readonly tool: SourceTool }[];

/**
 * The sub-tools `{pack}__{op}` of a pack document from its source list, minus `disabled` (the
 * source's own names — an MCP tool's name, an operation's `operationId` or `METHOD /path` —,
 * made-valid operations or full sub-tool names). Two source tools whose operations collide make
 * the document invalid, naming both.
 */
export function packMembers(
  pack: string,
  list: SourceList,
  disabled: readonly string[],
  layer: string,
): PackMembers | VanceError {
  const off = new Set(disabled);
  const byName = new Map<string, SourceTool>();
  for (const tool of list.tools) {
    const op = subToolOp(pack, tool.sourceName);
    const name = `${pack}${PACK_SEPARATOR}${op}`;
    const other = byName.get(name);
    if (other) {
      const cause = Errors.validationFailed(
        `its source offers '${other.sourceName}' and '${tool.sourceName}', which both become '${name}'`,
        [
          {
            path: "parameters",
            message: `'${other.sourceName}' and '${tool.sourceName}' collide as '${name}'`,
          },
        ],
      );
      return Errors.invalidDocument(toolDocumentPath(pack), layer, cause);
    }
    byName.set(name, tool);
  }
  return [...byName]
    .filter(
      ([name, tool]) =>
        !off.has(tool.sourceName) &&
        !off.has(name) &&
        !off.has(operationOf(name, pack)) &&
        !(tool.aliases ?? []).some((alias) => off.has(alias)),
    )
    .map(([name, tool]) => ({ name, tool }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
