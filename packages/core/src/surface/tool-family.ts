import { PACK_SEPARATOR, packOf } from "../ids";

/**
 * `ToolFamily` (spec §14.2): the unit of demotion. A pack's sub-tools (`pack__op`) form the
 * family `pack`; any other tool belongs to the family of its first `_` segment
 * (`doc_note_add` → `doc`). A half-visible pack is the worst state — the model starts and hits
 * a wall — so families move together.
 */
export function toolFamily(name: string): string {
  const pack = packOf(name);
  if (pack !== null) return pack;
  const underscore = name.indexOf("_");
  return underscore > 0 ? name.slice(0, underscore) : name;
}

/**
 * The family of a pack's sub-tool inside its pack (issue 23): `pack__{family}` with the family its
 * source gives (an OpenAPI operation's first tag), else the operation's first `_` segment
 * (`github__issues_create_comment` → `github__issues`). Triage keeps a pack larger than the
 * budget by these, each whole: never half of one visible.
 */
export function packSubFamily(name: string, family?: string): string {
  const pack = packOf(name);
  if (pack === null) return toolFamily(name);
  if (family) return `${pack}${PACK_SEPARATOR}${family}`;
  const op = name.slice(pack.length + PACK_SEPARATOR.length);
  const underscore = op.indexOf("_");
  return `${pack}${PACK_SEPARATOR}${underscore > 0 ? op.slice(0, underscore) : op}`;
}

/** Whether a tool is a pack sub-tool (`pack__op`). */
export function isPackTool(name: string): boolean {
  // `packOf(name) !== null`, without cutting the pack's name out.
  return name.indexOf(PACK_SEPARATOR) > 0;
}

/**
 * A recipe hint list (`allowedToolsKeep`, `allowedToolsDefer`, `allowedToolsDropFirst`): exact
 * names, or prefix patterns ending in `*` (`doc_*`) that rank a whole group without naming it.
 */
export class ToolHints {
  private readonly names: ReadonlySet<string>;
  private readonly prefixes: readonly string[];

  constructor(entries: readonly string[]) {
    this.names = new Set(entries.filter((entry) => !entry.endsWith("*")));
    this.prefixes = entries.filter((entry) => entry.endsWith("*")).map((entry) => entry.slice(0, -1));
  }

  /** `"name"` when the tool is named exactly, `"pattern"` when a prefix pattern matches, else null. */
  match(name: string): "name" | "pattern" | null {
    if (this.names.has(name)) return "name";
    for (let index = 0; index < this.prefixes.length; index++)
      if (name.startsWith(this.prefixes[index]!)) return "pattern";
    return null;
  }

  /** Whether the tool is named or matched. */
  has(name: string): boolean {
    return this.match(name) !== null;
  }
}
