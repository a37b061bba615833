import { inCapabilityFloor } from "../calls/capability-floor";
import { META_TOOL } from "../ids";
import { operationTarget } from "../tool-types/openapi/operations";
import type { ResolvedTool } from "../tools/resolved-tool";
import type { SearchDocument } from "./search-index";

/** A tool's text as it comes, before search splits it into fields. */
export interface SearchSource {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly family?: string;
  readonly pack?: string;
  readonly packText?: string;
  readonly method?: string;
  readonly path?: string;
}

/**
 * The fields search reads from a tool: the description's first paragraph as its summary (an
 * OpenAPI sub-tool's description starts with the operation's `summary`), the rest as details,
 * the top-level parameter names and those of its `body`.
 */
export function searchDocument(source: SearchSource): SearchDocument {
  const description = source.description.trim();
  const cut = description.search(/\n\s*\n/);
  const summary = cut < 0 ? description : description.slice(0, cut);
  const details = cut < 0 ? "" : description.slice(cut).trim();
  return {
    name: source.name,
    summary,
    details,
    parameters: parameterNames(source.inputSchema),
    ...(source.family ? { family: source.family } : {}),
    ...(source.pack ? { pack: source.pack } : {}),
    ...(source.packText ? { packText: source.packText } : {}),
    ...(source.method ? { method: source.method } : {}),
    ...(source.path ? { path: source.path } : {}),
  };
}

/**
 * The documents of a project's listed tools that `tool_search` may answer: every tool but the
 * capability floor's and `tool_search` itself. A pack's sub-tool carries its pack, its pack's
 * hint, and an OpenAPI operation's method and path.
 */
export function searchDocumentsOf(tools: readonly ResolvedTool[]): SearchDocument[] {
  const documents: SearchDocument[] = [];
  for (const tool of tools) {
    if (inCapabilityFloor(tool.name) || tool.name === META_TOOL.search) continue;
    if (tool.kind === "document" && tool.type.sourcing?.kind === "pack") continue;
    const target = tool.kind === "pack-sub-tool" ? operationTarget(tool.pack.tool) : null;
    documents.push(
      searchDocument({
        name: tool.name,
        description: tool.config.description,
        inputSchema: tool.inputSchema,
        ...(tool.kind === "pack-sub-tool"
          ? {
              pack: tool.pack.name,
              ...(tool.pack.tool.family ? { family: tool.pack.tool.family } : {}),
              ...(tool.pack.hint ? { packText: tool.pack.hint } : {}),
            }
          : {}),
        ...(target ? { method: target.method, path: target.path } : {}),
      }),
    );
  }
  return documents;
}

/** The top-level property names of an input schema, and those of its `body`. */
function parameterNames(schema: unknown): string[] {
  const properties = propertiesOf(schema);
  const names = Object.keys(properties);
  const body = properties.body;
  if (body !== undefined) names.push(...Object.keys(propertiesOf(body)));
  return names;
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  if (typeof schema !== "object" || schema === null) return {};
  const properties = (schema as { properties?: unknown }).properties;
  return typeof properties === "object" && properties !== null && !Array.isArray(properties)
    ? (properties as Record<string, unknown>)
    : {};
}
