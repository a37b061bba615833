import {
  CATALOG_MARKER,
  isCompiledKey,
  type Logger,
  markerOfDocumentKey,
  type StateStore,
} from "@vance/core";
import * as v from "valibot";

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

export interface DocumentEventsOptions {
  readonly state: Pick<StateStore, "bumpGeneration">;
  readonly documentsBucket: string;
  readonly catalogBucket: string;
  readonly logger: Logger;
}

/**
 * Writes straight into the buckets (the console, `aws s3 cp`, a replication) bypass the API, so
 * nothing bumps their generation: this function, subscribed to the buckets' object-created and
 * -removed events, does. A document key bumps its layer's marker, any catalog key the catalog's;
 * each marker once per event. A failed bump throws, so Lambda retries the event.
 */
export function documentEventsHandler(options: DocumentEventsOptions) {
  return async (event: unknown): Promise<{ readonly bumped: string[] }> => {
    const parsed = v.safeParse(S3EventSchema, event);
    if (!parsed.success) throw new Error("not an S3 event notification (no Records[].s3.object.key)");
    const markers = new Set<string>();
    for (const { s3 } of parsed.output.Records) {
      if (s3.bucket.name === options.catalogBucket) {
        markers.add(CATALOG_MARKER);
        continue;
      }
      if (s3.bucket.name !== options.documentsBucket) continue;
      // The service's own compiled objects (layer indexes, operation lists): no layer's document.
      if (isCompiledKey(s3.object.key)) continue;
      const marker = markerOf(s3.object.key);
      if (marker) markers.add(marker);
      else options.logger.warn("document_events.foreign_key", { key: s3.object.key });
    }
    for (const marker of markers) await options.state.bumpGeneration(marker);
    if (markers.size > 0) options.logger.info("document_events.bumped", { markers: [...markers] });
    return { bumped: [...markers] };
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
