import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import { createDynamoClient, createS3Client } from "@vance/adapters/aws";
import { freePort, startDynamoLocal, waitUntilReady } from "../../test/setup/dynamodb";
import { S3RVER_CREDENTIALS, startS3rver } from "../../test/support/s3rver";

/** s3rver and DynamoDB Local as a bench starts them, with a client for each. */
export interface AwsLocal {
  readonly s3Endpoint: string;
  readonly s3Bucket: string;
  readonly s3rverPid: number | undefined;
  readonly dynamoEndpoint: string;
  readonly dynamoPid: number | undefined;
  readonly s3: S3Client;
  readonly dynamo: DynamoDBClient;
  /** Destroys the clients and stops both servers by PID. */
  stop(): Promise<void>;
}

/** Starts s3rver and DynamoDB Local side by side; a failure to start stops what did start. */
export async function startAwsLocal(): Promise<AwsLocal> {
  const port = await freePort();
  const dynamoEndpoint = `http://127.0.0.1:${port}`;
  const dynamoLocal = startDynamoLocal(port);
  const [s3rver] = await Promise.all([startS3rver(), waitUntilReady(dynamoEndpoint, dynamoLocal)]).catch(
    async (error: unknown) => {
      await dynamoLocal.stop();
      throw error;
    },
  );
  const s3 = createS3Client({
    endpoint: s3rver.endpoint,
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
    forcePathStyle: true,
  });
  const dynamo = createDynamoClient({ endpoint: dynamoEndpoint });
  return {
    s3Endpoint: s3rver.endpoint,
    s3Bucket: s3rver.bucket,
    s3rverPid: s3rver.pid,
    dynamoEndpoint,
    dynamoPid: dynamoLocal.child.pid,
    s3,
    dynamo,
    async stop() {
      s3.destroy();
      dynamo.destroy();
      await Promise.all([s3rver.stop(), dynamoLocal.stop()]);
    },
  };
}
