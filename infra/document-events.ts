import { catalog, documents, state } from "./storage";

/**
 * Bumps the generation of what a write straight into a bucket changed (console, `aws s3 cp`),
 * so warm API instances read it again; writes through the API bump it themselves.
 */
const subscriber = {
  handler: "functions/document-events/handler.handler",
  runtime: "nodejs22.x",
  link: [state],
  environment: {
    VANCE_STATE_TABLE: state.name,
    VANCE_DOCUMENTS_BUCKET: documents.name,
    VANCE_CATALOG_BUCKET: catalog.name,
  },
};

/** A bucket takes one `notify` call; both buckets' events reach the same function. */
export const documentEvents = documents.notify({
  notifications: [
    { name: "DocumentEvents", function: subscriber, events: ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"] },
  ],
});

export const catalogEvents = catalog.notify({
  notifications: [
    { name: "CatalogEvents", function: subscriber, events: ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"] },
  ],
});
