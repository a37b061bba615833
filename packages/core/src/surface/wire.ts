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

/** A manifest as {@link WireCache.body} answers it: with the engine's name lists. */
export interface NamedManifest extends SerialisableManifest {
  readonly deferred: readonly string[];
  readonly demoted: readonly string[];
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
  /** Bodies without the name lists, for a caller that has them (`?names=` their version). */
  readonly #unnamedBodies = new WeakMap<object, Uint8Array<ArrayBuffer>>();
  readonly #namesVersions = new WeakMap<object, string>();
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
   * The manifest as UTF-8 JSON, `namesVersion` added (the version of its `deferred` and `demoted`
   * lists); without the two lists when `names` is that version: the caller has them from an earlier
   * answer, and from a few thousand tools up they are most of the bytes. A frozen manifest (the
   * tool surface hands out the same frozen object while a process's turn changed nothing) is
   * encoded once: on a large project the encoding of the names and discovery blocks costs more
   * than everything else of a warm manifest.
   */
  body(manifest: NamedManifest, names?: string): Uint8Array<ArrayBuffer> {
    const version = this.namesVersion(manifest);
    const unnamed = names === version;
    const bodies = unnamed ? this.#unnamedBodies : this.#bodies;
    const cached = this.#bodyReads.read(bodies.get(manifest));
    if (cached) return cached;
    const { deferred: _deferred, demoted: _demoted, ...rest } = manifest;
    const shown = unnamed ? { ...rest, namesVersion: version } : { ...manifest, namesVersion: version };
    const body = utf8.encode(this.json(shown));
    if (Object.isFrozen(manifest)) bodies.set(manifest, body);
    return body;
  }

  /** The version of a manifest's `deferred` and `demoted` lists: equal lists, equal versions. */
  namesVersion(manifest: NamedManifest): string {
    let version = this.#namesVersions.get(manifest);
    if (version === undefined) {
      version = namesVersionOf(manifest.deferred, manifest.demoted);
      if (Object.isFrozen(manifest)) this.#namesVersions.set(manifest, version);
    }
    return version;
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

/**
 * Two 32-bit FNV-1a hashes (different offsets) over the lists' lengths and names, as 16 hex
 * digits: names cannot contain the separators, so different lists differ in what is hashed.
 */
function namesVersionOf(deferred: readonly string[], demoted: readonly string[]): string {
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
