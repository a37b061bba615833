import type { JsonSchema } from "../json-schema";

/** Wire formats of the tools array. */
export type WireFormat = "openai" | "anthropic";

/** A tool as sent to a model. */
export interface WireToolSource {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** OpenAI: `{ type: "function", function: { name, description, parameters } }`; Anthropic: `{ name, description, input_schema }`. */
export function toWireTool(tool: WireToolSource, format: WireFormat): Record<string, unknown> {
  return format === "openai"
    ? {
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }
    : { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
}
