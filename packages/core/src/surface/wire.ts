import { CacheCounters, type CacheReport, type HasCaches } from "../cache/cache-registry";
import type { JsonSchema } from "../json-schema";

/** Wire formats of the tools array. */
export type WireFormat = "openai" | "anthropic";

/** A tool as sent to a model. */
export interface WireToolSource {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** The manifest's fields as {@link WireCache.json} writes them. */
export interface SerialisableManifest {
  readonly tools: readonly Record<string, unknown>[];
}

const utf8 = new TextEncoder();

/**
 * Wire tools per source and format, their JSON, and encoded manifests: a source (a parsed,
 * immutable tool) is built and serialised once, not on every manifest. Weak: a replaced tool
 * takes its entries along (so the entries are not counted, only the reads).
 */
export class WireCache implements HasCaches {
  readonly #tools = new WeakMap<WireToolSource, Partial<Record<WireFormat, Record<string, unknown>>>>();
  readonly #json = new WeakMap<object, string>();
  readonly #bodies = new WeakMap<object, Uint8Array<ArrayBuffer>>();
  readonly #toolReads = new CacheCounters();
  readonly #jsonReads = new CacheCounters();
  readonly #bodyReads = new CacheCounters();

  /**
   * OpenAI: `{ type: "function", function: { name, description, parameters } }`; Anthropic: `{ name, description, input_schema }`.
   * The same source gives the same frozen object every time: treat it as read-only.
   */
  tool(tool: WireToolSource, format: WireFormat): Record<string, unknown> {
    let byFormat = this.#tools.get(tool);
    if (!byFormat) {
      byFormat = {};
      this.#tools.set(tool, byFormat);
    }
    let wire = this.#toolReads.read(byFormat[format]);
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

  /**
   * `JSON.stringify(manifest)`, byte for byte, with each wire tool's JSON taken from its cache:
   * serialising the tools array is most of a manifest's serialisation, and it rarely changes.
   */
  json(manifest: SerialisableManifest): string {
    const { tools, ...rest } = manifest;
    const others = JSON.stringify(rest);
    const array = `[${tools.map((wire) => this.#toolJson(wire)).join(",")}]`;
    return others === "{}" ? `{"tools":${array}}` : `{"tools":${array},${others.slice(1)}`;
  }

  /**
   * {@link json} as UTF-8 bytes. A frozen manifest (the tool surface hands out the same frozen
   * object while a process's turn changed nothing) is encoded once: on a large project the
   * encoding of the names and discovery blocks costs more than everything else of a warm manifest.
   */
  body(manifest: SerialisableManifest): Uint8Array<ArrayBuffer> {
    const cached = this.#bodyReads.read(this.#bodies.get(manifest));
    if (cached) return cached;
    const body = utf8.encode(this.json(manifest));
    if (Object.isFrozen(manifest)) this.#bodies.set(manifest, body);
    return body;
  }

  cacheReports(): Record<string, CacheReport> {
    return {
      tools: this.#toolReads.report(),
      toolJson: this.#jsonReads.report(),
      manifestBodies: this.#bodyReads.report(),
    };
  }

  /** `JSON.stringify(wire)` for a wire tool, serialised once per tool built by {@link tool}. */
  #toolJson(wire: Record<string, unknown>): string {
    let json = this.#jsonReads.read(this.#json.get(wire));
    if (json === undefined) {
      json = JSON.stringify(wire);
      if (Object.isFrozen(wire)) this.#json.set(wire, json);
    }
    return json;
  }
}
