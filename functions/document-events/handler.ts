import {
  builtInToolTypes,
  CATALOG_MARKER,
  CompiledLayerBuilder,
  CompiledToolLayers,
  compiledToolsFingerprint,
  createNetworkPolicy,
  isCompiledKey,
  type Logger,
  markerOfDocumentKey,
  type ObjectStore,
  type RebuildOutcome,
  type StateStore,
  ToolTypeRegistry,
} from "@vance/core";
import * as v from "valibot";
import { VERSION } from "../version";

/** The part of an S3 event notification this function reads; the payload carries more. */
const S3EventSchema = v.object({
  Records: v.array(
    v.object({
      eventName: v.string(),
      s3: v.object({
        bucket: v.object({ name: v.string() }),
        object: v.object({ key: v.string() }),
      }),
    }),
  ),
});

export type S3Event = v.InferInput<typeof S3EventSchema>;

/** An event's object key as stored: S3 sends keys form-encoded (`%XX`, and `+` for a space). */
export function decodeEventKey(key: string): string {
  return decodeURIComponent(key.replaceAll("+", " "));
}

/**
 * The rebuilder of compiled tool indexes over the documents bucket, built as the API builds its
 * own (functions/api/services.ts): the same fingerprint and the same parse, so the API takes them.
 */
export function compiledIndexes(options: {
  readonly documents: ObjectStore;
  readonly state: Pick<StateStore, "getGenerations">;
  /** `VANCE_NETWORK_ALLOWLIST`: a tool type's check of its targets depends on it. */
  readonly networkAllowlist: readonly string[];
  readonly logger: Logger;
}): CompiledLayerBuilder {
  const types = new ToolTypeRegistry(builtInToolTypes(), {
    networkPolicy: createNetworkPolicy(options.networkAllowlist),
  });
  return new CompiledLayerBuilder({
    store: options.documents,
    layers: new CompiledToolLayers(options.documents, compiledToolsFingerprint(VERSION, types)),
    types,
    generation: async (marker) => (await options.state.getGenerations([marker]))[0] ?? 0,
    logger: options.logger,
  });
}

export interface DocumentEventsOptions {
  readonly state: Pick<StateStore, "bumpGeneration">;
  /**
   * Rebuilds the compiled tool index of each layer bumped (the Lambda's, over the documents
   * bucket); without it only generations move.
   */
  readonly indexes?: Pick<CompiledLayerBuilder, "rebuild">;
  readonly documentsBucket: string;
  readonly catalogBucket: string;
  readonly logger: Logger;
}

/**
 * Writes straight into the buckets (the console, `aws s3 cp`, a replication) bypass the API, so
 * nothing bumps their generation: this function, subscribed to the buckets' object-created and
 * -removed events, does. A document key bumps its layer's marker, any catalog key the catalog's;
 * each marker once per event. A failed bump throws, so Lambda retries the event. Then each
 * document layer bumped has its compiled tool index rebuilt under the new generation — unless
 * its generation moved on meanwhile (a bulk copy sends one event per object: the last one's
 * rebuild covers the layer). A failed rebuild is logged, not retried: the index is a cache, and
 * the next cold reader rebuilds a stale one.
 */
export function documentEventsHandler(options: DocumentEventsOptions) {
  return async (
    event: unknown,
  ): Promise<{ readonly bumped: string[]; readonly rebuilt: Record<string, RebuildOutcome | "failed"> }> => {
    const parsed = v.safeParse(S3EventSchema, event);
    if (!parsed.success) throw new Error("not an S3 event notification (no Records[].s3.object.key)");
    const markers = new Set<string>();
    /** The document layers among the markers, by marker. */
    const layers = new Map<string, { readonly tenant: string; readonly project: string }>();
    for (const { s3 } of parsed.output.Records) {
      if (s3.bucket.name === options.catalogBucket) {
        markers.add(CATALOG_MARKER);
        continue;
      }
      if (s3.bucket.name !== options.documentsBucket) continue;
      // The service's own compiled objects (layer indexes, operation lists): no layer's document.
      if (isCompiledKey(s3.object.key)) continue;
      const marker = markerOf(s3.object.key);
      if (marker) {
        markers.add(marker);
        const [, tenant, project] = marker.split("/");
        layers.set(marker, { tenant: tenant!, project: project! });
      } else options.logger.warn("document_events.foreign_key", { key: s3.object.key });
    }
    const generations = new Map<string, number>();
    for (const marker of markers) generations.set(marker, await options.state.bumpGeneration(marker));
    if (markers.size > 0) options.logger.info("document_events.bumped", { markers: [...markers] });
    const rebuilt: Record<string, RebuildOutcome | "failed"> = {};
    if (options.indexes) {
      for (const [marker, { tenant, project }] of layers) {
        rebuilt[marker] = await options.indexes
          .rebuild(tenant, project, { unlessPast: generations.get(marker)! })
          .catch(() => "failed" as const);
      }
    }
    return { bumped: [...markers], rebuilt };
  };
}

function markerOf(eventKey: string): string | null {
  try {
    return markerOfDocumentKey(decodeEventKey(eventKey));
  } catch {
    // A malformed %-escape: no key of ours.
    return null;
  }
}
