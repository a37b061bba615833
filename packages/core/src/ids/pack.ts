/** Separates a pack from its operation in a sub-tool name: `pack__op`. */
export const PACK_SEPARATOR = "__";

/** The pack of a sub-tool name (`jira` of `jira__search`), or `null` when the name is no sub-tool's. */
export function packOf(name: string): string | null {
  const split = name.indexOf(PACK_SEPARATOR);
  return split > 0 ? name.slice(0, split) : null;
}

/** The operation part of a sub-tool name of `pack` (`search` of `jira__search`). */
export function operationOf(name: string, pack: string): string {
  return name.slice(pack.length + PACK_SEPARATOR.length);
}
