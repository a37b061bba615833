import { createDynamoClient, createS3Client } from "@vance/adapters/aws";
import type { Config } from "./api/config";

/** One value per configuration: the stores of one function share a client and its connections. */
function perConfig<T>(make: (config: Config) => T): (config: Config) => T {
  const made = new WeakMap<Config, T>();
  return (config) => {
    let value = made.get(config);
    if (value === undefined) {
      value = make(config);
      made.set(config, value);
    }
    return value;
  };
}

/** The S3 client the settings describe (region, endpoint, path style, deadline): every function's one way to make it. */
export const s3ClientFor = perConfig((config) =>
  createS3Client({
    region: config.AWS_REGION,
    ...(config.VANCE_S3_ENDPOINT ? { endpoint: config.VANCE_S3_ENDPOINT } : {}),
    forcePathStyle: config.VANCE_S3_FORCE_PATH_STYLE,
    deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
  }),
);

/** The DynamoDB client the settings describe (region, endpoint, deadline). */
export const dynamoClientFor = perConfig((config) =>
  createDynamoClient({
    region: config.AWS_REGION,
    ...(config.VANCE_DYNAMODB_ENDPOINT ? { endpoint: config.VANCE_DYNAMODB_ENDPOINT } : {}),
    deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
  }),
);
