import { jsonLogger } from "@vance/adapters";
import { DynamoStateStore, S3ObjectStore } from "@vance/adapters/aws";
import { dynamoClientFor, s3ClientFor } from "../clients";
import { loadFunctionConfig } from "../settings";
import { failEveryEvent, startFunction } from "../start";
import { compiledIndexes, documentEventsHandler } from "./handler";

/**
 * The Lambda entry (built to dist/functions/document-events/lambda.mjs), subscribed to both
 * buckets' object events (infra/document-events.ts). It reads and writes the documents bucket
 * to rebuild the compiled tool index of each layer it bumps.
 */
export const handler = await startFunction(
  "document-events",
  () => {
    const config = loadFunctionConfig({
      defaults: { VANCE_STATE: "dynamodb" },
      // The documents bucket is linked (its indexes are rebuilt here); the catalog's name only tells its events apart.
      require: ["VANCE_DOCUMENTS_BUCKET", "VANCE_CATALOG_BUCKET"],
    });
    const state = new DynamoStateStore({
      client: dynamoClientFor(config),
      tableName: config.VANCE_STATE_TABLE!,
    });
    const documents = new S3ObjectStore({
      client: s3ClientFor(config),
      bucket: config.VANCE_DOCUMENTS_BUCKET!,
    });
    return documentEventsHandler({
      state,
      indexes: compiledIndexes({
        documents,
        state,
        networkAllowlist: config.VANCE_NETWORK_ALLOWLIST,
        logger: jsonLogger,
      }),
      documentsBucket: config.VANCE_DOCUMENTS_BUCKET!,
      catalogBucket: config.VANCE_CATALOG_BUCKET!,
      logger: jsonLogger,
    });
  },
  failEveryEvent,
);
