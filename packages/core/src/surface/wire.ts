import type { JsonSchema } from "../json-schema";

/** Wire formats of the tools array. */
export type WireFormat = "openai" | "anthropic";

/** A tool as sent to a model. */
export interface WireToolSource {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** The manifest's fields as {@link manifestJson} writes them. */
export interface SerialisableManifest {
  readonly tools: readonly Record<string, unknown>[];
}

const utf8 = new TextEncoder();

/**
 * OpenAI: `{ type: "function", function: { name, description, parameters } }`; Anthropic:
 * `{ name, description, input_schema }`. Frozen: the tool surface keeps it on the project's tool
 * snapshot and hands the same object to every manifest of the snapshot's version.
 */
export function wireTool(tool: WireToolSource, format: WireFormat): Readonly<Record<string, unknown>> {
  return Object.freeze(
    format === "openai"
      ? {
          type: "function",
          function: Object.freeze({
            name: tool.name,
            description: tool.description,
            parameters: tool.inputSchema,
          }),
        }
      : { name: tool.name, description: tool.description, input_schema: tool.inputSchema },
  );
}

/**
 * `JSON.stringify(manifest)`, byte for byte, with each wire tool's JSON taken from `toolJson`
 * (kept beside the wire tool): serialising the tools array is most of a manifest's
 * serialisation, and it rarely changes.
 */
export function manifestJson(
  manifest: SerialisableManifest,
  toolJson: (wire: Record<string, unknown>, index: number) => string = (wire) => JSON.stringify(wire),
): string {
  const { tools, ...rest } = manifest;
  const others = JSON.stringify(rest);
  const array = `[${tools.map(toolJson).join(",")}]`;
  return others === "{}" ? `{"tools":${array}}` : `{"tools":${array},${others.slice(1)}`;
}

/** {@link manifestJson} as UTF-8 bytes: what the manifest route sends. */
export function manifestBytes(
  manifest: SerialisableManifest,
  toolJson?: (wire: Record<string, unknown>, index: number) => string,
): Uint8Array<ArrayBuffer> {
  return utf8.encode(manifestJson(manifest, toolJson));
}
