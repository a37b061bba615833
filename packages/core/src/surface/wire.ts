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

/** A manifest with the engine's name lists, whose version (`namesVersion`) an answer carries. */
export interface NamedManifest extends SerialisableManifest {
  readonly deferred: readonly string[];
  readonly demoted: readonly string[];
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

/**
 * The version of a manifest's `deferred` and `demoted` lists — equal lists, equal versions: two
 * 32-bit FNV-1a hashes (different offsets) over the lists' lengths and names, as 16 hex digits
 * (names cannot contain the separators, so different lists differ in what is hashed). A caller
 * sending it back (`?names=`) gets an answer without the two lists while they are still those.
 */
export function namesVersionOf(deferred: readonly string[], demoted: readonly string[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  const add = (text: string) => {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 15);
    }
  };
  add(`${deferred.length}:${demoted.length}:`);
  for (const name of deferred) add(`${name},`);
  add(";");
  for (const name of demoted) add(`${name},`);
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, "0");
  return `${hex(a)}${hex(b)}`;
}
