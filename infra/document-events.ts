import { builtFunction } from "./bundles";
import { catalog, documents, state } from "./storage";

/**
 * Bumps the generation of what a write straight into a bucket changed (console, `aws s3 cp`),
 * so warm API instances read it again; writes through the API bump it themselves. Then it
 * rebuilds the compiled tool index of each document layer it bumped, so it links the documents
 * bucket (read its tool documents and index, write the index). The catalog bucket's name only,
 * to tell its events apart: a plain setting, since a link would grant it the catalog's contents.
 */
const subscriber = {
  ...builtFunction("document-events"),
  memory: "256 MB",
  link: [state, documents],
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
