import { DynamoSecretStore, DynamoStateStore, S3ObjectStore } from "@vance/adapters/aws";
import type { MemoStats, ObjectStore, SecretStore, StateStore } from "@vance/core";
import type { Config } from "./api/config";
import { dynamoClientFor, s3ClientFor } from "./clients";

/**
 * The adapters over AWS, with the SDK they load: imported by `deferred-stores.ts` at the first
 * store call, so that the Lambda entry's start bundle holds none of them.
 */

/** One bucket of the configured S3. */
export function s3ObjectStore(config: Config, bucket: string): ObjectStore {
  return new S3ObjectStore({ client: s3ClientFor(config), bucket });
}

/** The configured DynamoDB table's state store. */
export function dynamoStateStore(config: Config, parsedRecords?: MemoStats): StateStore {
  return new DynamoStateStore({
    client: dynamoClientFor(config),
    tableName: config.VANCE_STATE_TABLE!,
    ...(parsedRecords ? { parsedRecords } : {}),
  });
}

/** Tenant secrets in the configured DynamoDB table, sealed with `key`. */
export function dynamoSecretStore(config: Config, key: Uint8Array): SecretStore {
  return new DynamoSecretStore({
    client: dynamoClientFor(config),
    tableName: config.VANCE_STATE_TABLE!,
    key,
  });
}
