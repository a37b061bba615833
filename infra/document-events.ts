import { builtFunction } from "./bundles";
import { catalog, documents, state } from "./storage";

/**
 * Bumps the generation of what a write straight into a bucket changed (console, `aws s3 cp`),
 * so warm API instances read it again; writes through the API bump it themselves. It reads the
 * bucket names only, to tell events apart: they come as plain settings, because a link would
 * grant it the buckets' contents.
 */
const subscriber = {
  ...builtFunction("document-events"),
  memory: "256 MB",
  link: [state],
  environment: { VANCE_DOCUMENTS_BUCKET: documents.name, VANCE_CATALOG_BUCKET: catalog.name },
} satisfies sst.aws.FunctionArgs;

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
