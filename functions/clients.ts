import { createDynamoClient, createS3Client } from "@vance/adapters";
import type { Config } from "./api/config";

type S3Client = ReturnType<typeof createS3Client>;
type DynamoClient = ReturnType<typeof createDynamoClient>;

/** One client of each kind per configuration: the stores of one function share its connections. */
const s3Clients = new WeakMap<Config, S3Client>();
const dynamoClients = new WeakMap<Config, DynamoClient>();

/** The S3 client the settings describe (region, endpoint, path style, deadline): every function's one way to make it. */
export function s3ClientFor(config: Config): S3Client {
  let client = s3Clients.get(config);
  if (!client) {
    client = createS3Client({
      region: config.AWS_REGION,
      ...(config.VANCE_S3_ENDPOINT ? { endpoint: config.VANCE_S3_ENDPOINT } : {}),
      forcePathStyle: config.VANCE_S3_FORCE_PATH_STYLE,
      deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
    });
    s3Clients.set(config, client);
  }
  return client;
}

/** The DynamoDB client the settings describe (region, endpoint, deadline). */
export function dynamoClientFor(config: Config): DynamoClient {
  let client = dynamoClients.get(config);
  if (!client) {
    client = createDynamoClient({
      region: config.AWS_REGION,
      ...(config.VANCE_DYNAMODB_ENDPOINT ? { endpoint: config.VANCE_DYNAMODB_ENDPOINT } : {}),
      deadlineMs: config.VANCE_STORE_TIMEOUT_MS,
    });
    dynamoClients.set(config, client);
  }
  return client;
}
