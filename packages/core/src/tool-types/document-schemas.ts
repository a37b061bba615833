import { toJsonSchema } from "@valibot/to-json-schema";
import { ServerToolConfigSchema } from "../config/schema";
import { ID_PATTERN, TOOL_NAME_PATTERN } from "../ids";
import type { JsonSchema } from "../json-schema";
import { McpServerDocumentSchema } from "./mcp-server";
import type { ToolTypeRegistry } from "./registry";

/** The dialect YAML editors (yaml-language-server) understand best, and the one valibot emits. */
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

type Properties = Record<string, JsonSchema>;

/**
 * The JSON Schema of a tool document (`server-tools/{name}.yaml`) for YAML editors
 * (`# yaml-language-server: $schema=…`), made from the schemas the service validates with: the
 * common fields of `ServerToolConfigSchema`, and each registered type's `parameters` schema under
 * an `if`/`then` on `type`. What JSON Schema cannot say (a type's own checks, the file name) stays
 * with `parseToolDocument`, which `vance-tools lint` and every write run.
 *
 * @example toolDocumentJsonSchema(new ToolTypeRegistry(builtInToolTypes())).allOf.length // one per type
 */
export function toolDocumentJsonSchema(registry: ToolTypeRegistry): JsonSchema & { allOf: JsonSchema[] } {
  const base = valibotSchema(ServerToolConfigSchema);
  const properties = base.properties as Properties;
  const types = registry.describe();
  return {
    $schema: DRAFT_07,
    title: "Vance server tool document (server-tools/{name}.yaml)",
    ...base,
    properties: {
      ...properties,
      name: {
        ...properties.name,
        description: "Optional; must equal the file name. '__' is reserved for pack sub-tools.",
        pattern: TOOL_NAME_PATTERN.source,
        not: { pattern: "__" },
      },
      type: {
        description: "The tool type",
        type: "string",
        oneOf: types.map((type) => ({ const: type.typeId, description: type.description })),
      },
      labels: { ...properties.labels, items: { type: "string", pattern: ID_PATTERN.source } },
    },
    allOf: types.map((type) => ({
      if: { properties: { type: { const: type.typeId } }, required: ["type"] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, never awaited
      then: {
        properties: {
          parameters: {
            description: `Parameters of the '${type.typeId}' type`,
            ...withoutDialect(type.parametersSchema),
          },
        },
      },
    })),
  };
}

/** The JSON Schema of an MCP server document (`mcp-servers/{name}.yaml`), from `McpServerDocumentSchema`. */
export function mcpServerDocumentJsonSchema(): JsonSchema {
  const base = valibotSchema(McpServerDocumentSchema);
  const properties = base.properties as Properties;
  return {
    $schema: DRAFT_07,
    title: "Vance MCP server connection (mcp-servers/{name}.yaml)",
    ...base,
    properties: {
      ...properties,
      url: {
        ...properties.url,
        description: "The server's Streamable HTTP endpoint, an absolute http(s) URL without credentials",
        pattern: "^[Hh][Tt][Tt][Pp][Ss]?://\\S+$",
      },
      headers: {
        ...properties.headers,
        description: "Sent with every request; values may hold ${secret:NAME}",
      },
    },
  };
}

/** A valibot schema as JSON Schema, checks it cannot express left out (they run on every write). */
function valibotSchema(schema: Parameters<typeof toJsonSchema>[0]): JsonSchema {
  return withoutDialect(toJsonSchema(schema, { errorMode: "ignore" }) as JsonSchema);
}

function withoutDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
