import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { ADD_NUMBERS } from "../../../../test/support/spec-examples";
import { parseYaml } from "../config/yaml";
import { builtInToolTypes } from "./builtin-types";
import { mcpServerDocumentJsonSchema, toolDocumentJsonSchema } from "./document-schemas";
import { ToolTypeRegistry } from "./registry";

const registry = new ToolTypeRegistry(builtInToolTypes());
const ajv = new Ajv({ strict: false, logger: false });
const tool = ajv.compile(toolDocumentJsonSchema(registry));
const server = ajv.compile(mcpServerDocumentJsonSchema());

function data(text: string): unknown {
  const parsed = parseYaml(text);
  if (!parsed.ok) throw new Error("not YAML");
  return parsed.yaml.data;
}

describe("the JSON Schemas YAML editors get (vance-tools schema)", () => {
  it("accept what the parsers accept: the spec's add_numbers example, an MCP server connection", () => {
    expect(tool(data(ADD_NUMBERS)), JSON.stringify(tool.errors)).toBe(true);
    expect(
      server(data("url: https://mcp.example.com/mcp\nheaders: { Authorization: 'Bearer ${secret:T}' }\n")),
    ).toBe(true);
  });

  it("refuse unknown types and fields, names with '__', and a type's parameters that do not fit it", () => {
    expect(tool({ type: "teleport", description: "d" })).toBe(false);
    expect(tool({ type: "doc_lookup", description: "d", primay: true })).toBe(false);
    expect(tool({ type: "doc_lookup", description: "d", name: "pack__op" })).toBe(false);
    expect(
      tool({
        type: "scripted",
        description: "d",
        parameters: { inputs: [], source: "1", timeoutMs: "slow" },
      }),
    ).toBe(false);
    expect(tool({ type: "doc_lookup", description: "d", parameters: { inputs: [], source: "1" } })).toBe(
      false,
    );
    expect(server({ url: "https://x.example/mcp", timeoutMs: 5 })).toBe(false);
  });

  it("describe every registered type, one if/then each", () => {
    const schema = toolDocumentJsonSchema(registry);
    expect(schema.allOf).toHaveLength(registry.ids().length);
  });
});
