import * as v from "valibot";
import { MIB } from "../../cache/byte-cache";
import { assertProjectId, assertTenantId, COMPILED_PREFIX, TOOL_NAME_PATTERN } from "../../ids";
import { type Logger, silentLogger } from "../../ports/logger";
import type { ObjectStore } from "../../ports/object-store";
import type {
  CompiledOperationStore,
  CompiledOperations,
  CompiledOperationsVersion,
} from "../../ports/tool-runtime";
import {
  MAX_DESCRIPTION_CHARS,
  MAX_OPERATIONS,
  OPERATION_LIST_FORMAT,
  OPERATION_METHODS,
} from "./operations";

/**
 * The documents store's folder of compiled operation lists. `_compiled` is no tenant id, so no
 * document, layer listing, store scan or bucket event of a layer ever sees these objects.
 */
/** A compiled list larger than this is not kept (GitHub's whole API compiles to 2.4 MB). */
export const MAX_COMPILED_BYTES = 8 * MIB;

const ParameterSchema = v.object({
  name: v.string(),
  in: v.picklist(["path", "query", "header"]),
  property: v.string(),
  style: v.string(),
  explode: v.boolean(),
  json: v.boolean(),
});

const TargetSchema = v.object({
  method: v.picklist(OPERATION_METHODS.map((method) => method.toUpperCase() as Uppercase<typeof method>)),
  path: v.string(),
  serverUrl: v.nullable(v.string()),
  parameters: v.array(ParameterSchema),
  body: v.nullable(v.object({ property: v.string(), mediaType: v.string(), required: v.boolean() })),
});

const ToolSchema = v.object({
  sourceName: v.pipe(v.string(), v.regex(TOOL_NAME_PATTERN)),
  aliases: v.optional(v.array(v.string())),
  description: v.pipe(v.string(), v.maxLength(MAX_DESCRIPTION_CHARS)),
  inputSchema: v.looseObject({ type: v.literal("object") }),
  target: TargetSchema,
  family: v.optional(v.string()),
});

/** A stored list: what it was compiled from, checked against the version asked for, then the list. */
const StoredSchema = v.object({
  format: v.literal(OPERATION_LIST_FORMAT),
  spec: v.object({ layer: v.string(), path: v.string(), etag: v.string() }),
  pack: v.string(),
  allow: v.nullable(v.array(v.string())),
  tags: v.nullable(v.array(v.string())),
  tools: v.pipe(v.array(ToolSchema), v.maxLength(MAX_OPERATIONS)),
  notes: v.array(v.string()),
});

/**
 * `CompiledOperationStore` over the documents store: one object per spec document and pack
 * selection (`_compiled/{tenant}/{project}/openapi/{digest}.json`, beside whatever else is
 * compiled of the layer), holding the spec's ETag it was compiled from, so a new version of the
 * document simply no longer matches and its compile replaces it — one object per spec and
 * pack, never one per version. A cold instance
 * reads it instead of parsing the spec again. What it reads is checked before it is used: an
 * object of another format, of another version or selection, too large, or of the wrong shape
 * counts as absent (the spec is compiled again and the object replaced).
 */
export class ObjectStoreCompiledOperations implements CompiledOperationStore {
  constructor(
    private readonly store: ObjectStore,
    private readonly logger: Logger = silentLogger,
  ) {}

  async read(version: CompiledOperationsVersion): Promise<CompiledOperations | null> {
    const key = await compiledKey(version);
    const problem = (reason: string) => {
      this.logger.warn("openapi.compiled_ignored", { key, reason });
      return null;
    };
    let object: Awaited<ReturnType<ObjectStore["get"]>>;
    try {
      object = await this.store.get(key);
    } catch (error) {
      return problem(`unreadable: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (object === null || "notModified" in object) return null;
    if (object.body.length > MAX_COMPILED_BYTES)
      return problem(`larger than ${MAX_COMPILED_BYTES} characters`);
    let json: unknown;
    try {
      json = JSON.parse(object.body);
    } catch {
      return problem("not JSON");
    }
    const parsed = v.safeParse(StoredSchema, json);
    if (!parsed.success) {
      // An older format is expected after an upgrade and is replaced; say nothing of it.
      const format = (json as { format?: unknown } | null)?.format;
      return format === OPERATION_LIST_FORMAT
        ? problem(`not a compiled list: ${parsed.issues[0].message}`)
        : null;
    }
    const stored = parsed.output;
    // Another version of the spec, or a digest shared by another selection: compiled again.
    if (!sameVersion(stored, version)) return null;
    return { tools: stored.tools, notes: stored.notes, bytes: 2 * object.body.length };
  }

  async write(version: CompiledOperationsVersion, compiled: CompiledOperations): Promise<void> {
    const key = await compiledKey(version);
    const body = JSON.stringify({
      format: OPERATION_LIST_FORMAT,
      spec: { layer: version.project, path: version.path, etag: version.etag },
      pack: version.pack,
      allow: version.allow ?? null,
      tags: version.tags ?? null,
      tools: compiled.tools,
      notes: compiled.notes,
    });
    if (body.length > MAX_COMPILED_BYTES) {
      this.logger.info("openapi.compiled_not_kept", { key, chars: body.length, max: MAX_COMPILED_BYTES });
      return;
    }
    try {
      const result = await this.store.put(key, body, { contentType: "application/json" });
      if (!result.ok) this.logger.warn("openapi.compiled_not_kept", { key, reason: result.reason });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn("openapi.compiled_not_kept", { key, reason });
    }
  }
}

function sameVersion(
  stored: v.InferOutput<typeof StoredSchema>,
  version: CompiledOperationsVersion,
): boolean {
  return (
    stored.spec.layer === version.project &&
    stored.spec.path === version.path &&
    stored.spec.etag === version.etag &&
    stored.pack === version.pack &&
    sameList(stored.allow, version.allow) &&
    sameList(stored.tags, version.tags)
  );
}

function sameList(stored: readonly string[] | null, wanted: readonly string[] | undefined): boolean {
  const list = wanted ?? null;
  if (stored === null || list === null) return stored === list;
  return stored.length === list.length && stored.every((entry, index) => entry === list[index]);
}

/** The object key of a compiled list: the spec's tenant and layer, a digest of its path and the pack's selection. */
export async function compiledKey(version: CompiledOperationsVersion): Promise<string> {
  assertTenantId(version.tenant);
  assertProjectId(version.project);
  const what = JSON.stringify([version.path, version.pack, version.allow ?? null, version.tags ?? null]);
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(what));
  const hex = [...new Uint8Array(digest).slice(0, 16)].map((byte) => byte.toString(16).padStart(2, "0"));
  return `${COMPILED_PREFIX}${version.tenant}/${version.project}/openapi/${hex.join("")}.json`;
}
