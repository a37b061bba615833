import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { createS3Client, S3ObjectStore } from "@vance/adapters/aws";
import type { ObjectStore } from "@vance/core";
import { inject } from "vitest";

/** An S3 store over a fresh bucket (named `{prefix}-…`) of the shared s3rver. */
export async function freshS3Store(
  prefix: string,
  options: { now?: () => number } = {},
): Promise<ObjectStore> {
  const client = createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    forcePathStyle: true,
  });
  const bucket = `${prefix}-${randomUUID().slice(0, 8)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return new S3ObjectStore({ client, bucket, ...options });
}

/** Writes a document straight into a test app's filesystem store (`{dataDir}/documents/{key}`), behind the service's back. */
export function writeBehind(dataDir: string, key: string, body: string): void {
  const path = join(dataDir, "documents", key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
}
