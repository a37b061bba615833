import type { JsonSchema } from "../json-schema";

/** Wire formats of the tools array. */
export type WireFormat = "openai" | "anthropic";

/** A tool as sent to a model. */
export interface WireToolSource {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/**
 * Wire tools per source and format, and their JSON: a source (a parsed, immutable tool) is
 * built and serialised once, not on every manifest. Weak: a replaced tool takes its entries along.
 */
const wireTools = new WeakMap<WireToolSource, Partial<Record<WireFormat, Record<string, unknown>>>>();
const wireJson = new WeakMap<object, string>();

/**
 * OpenAI: `{ type: "function", function: { name, description, parameters } }`; Anthropic: `{ name, description, input_schema }`.
 * The same source gives the same frozen object every time: treat it as read-only.
 */
export function toWireTool(tool: WireToolSource, format: WireFormat): Record<string, unknown> {
  let byFormat = wireTools.get(tool);
  if (!byFormat) {
    byFormat = {};
    wireTools.set(tool, byFormat);
  }
  let wire = byFormat[format];
  if (!wire) {
    wire = Object.freeze(
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
    byFormat[format] = wire;
  }
  return wire;
}

/** `JSON.stringify(wire)` for a wire tool, serialised once per tool built by {@link toWireTool}. */
function wireToolJson(wire: Record<string, unknown>): string {
  let json = wireJson.get(wire);
  if (json === undefined) {
    json = JSON.stringify(wire);
    if (Object.isFrozen(wire)) wireJson.set(wire, json);
  }
  return json;
}

/** The manifest's fields as {@link manifestJson} writes them. */
export interface SerialisableManifest {
  readonly tools: readonly Record<string, unknown>[];
}

/**
 * `JSON.stringify(manifest)`, byte for byte, with each wire tool's JSON taken from its cache:
 * serialising the tools array is most of a manifest's serialisation, and it rarely changes.
 */
export function manifestJson(manifest: SerialisableManifest): string {
  const { tools, ...rest } = manifest;
  const others = JSON.stringify(rest);
  const array = `[${tools.map(wireToolJson).join(",")}]`;
  return others === "{}" ? `{"tools":${array}}` : `{"tools":${array},${others.slice(1)}`;
}

/** Encoded manifests by the (shared, frozen) manifest object they encode. */
const manifestBodies = new WeakMap<object, Uint8Array<ArrayBuffer>>();
const utf8 = new TextEncoder();

/**
 * {@link manifestJson} as UTF-8 bytes. A frozen manifest (the tool surface hands out the same
 * frozen object while a process's turn changed nothing) is encoded once: on a large project the
 * encoding of the names and discovery blocks costs more than everything else of a warm manifest.
 */
export function manifestBody(manifest: SerialisableManifest): Uint8Array<ArrayBuffer> {
  const cached = manifestBodies.get(manifest);
  if (cached) return cached;
  const body = utf8.encode(manifestJson(manifest));
  if (Object.isFrozen(manifest)) manifestBodies.set(manifest, body);
  return body;
}
