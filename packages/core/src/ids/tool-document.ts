/** The folder of tool configurations in every layer (spec §4); documents in it are validated as tools. */
export const TOOL_DOCUMENTS_DIR = "server-tools/";

/** The folder of OpenAPI documents that packs name: writes into it take the spec body limit (API.md). */
export const SPEC_DOCUMENTS_DIR = "specs/";

/** The document path of a tool configuration. */
export function toolDocumentPath(name: string): string {
  return `${TOOL_DOCUMENTS_DIR}${name}.yaml`;
}

/** Whether a document path lies in the tool folder, so a write of it is a tool document's. */
export function isToolDocumentPath(path: string): boolean {
  return path.startsWith(TOOL_DOCUMENTS_DIR);
}

/** The tool name a document path stands for, or `null` when the path is not a tool document. */
export function toolNameFromPath(path: string): string | null {
  if (!isToolDocumentPath(path) || !path.endsWith(".yaml")) return null;
  const name = path.slice(TOOL_DOCUMENTS_DIR.length, -".yaml".length);
  return name.length > 0 && !name.includes("/") ? name : null;
}
