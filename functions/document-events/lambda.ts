import { DynamoStateStore, jsonLogger } from "@vance/adapters";
import { dynamoClientFor } from "../clients";
import { loadFunctionConfig } from "../settings";
import { failEveryEvent, startFunction } from "../start";
import { documentEventsHandler } from "./handler";

/**
 * The Lambda entry (built to dist/functions/document-events/lambda.mjs), subscribed to both
 * buckets' object events (infra/document-events.ts).
 */
export const handler = await startFunction(
  "document-events",
  () => {
    const config = loadFunctionConfig({
      defaults: { VANCE_STATE: "dynamodb" },
      // Bucket names only, to tell the events apart (infra passes them without linking the buckets).
      require: ["VANCE_DOCUMENTS_BUCKET", "VANCE_CATALOG_BUCKET"],
    });
    return documentEventsHandler({
      state: new DynamoStateStore({ client: dynamoClientFor(config), tableName: config.VANCE_STATE_TABLE! }),
      documentsBucket: config.VANCE_DOCUMENTS_BUCKET!,
      catalogBucket: config.VANCE_CATALOG_BUCKET!,
      logger: jsonLogger,
    });
  },
  failEveryEvent,
);
