import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { FsObjectStore } from "@vance/adapters";
import { DynamoStateStore, ensureStateTable, S3ObjectStore } from "@vance/adapters/aws";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { ObjectStore, StateStore } from "@vance/core";
import { startAwsLocal } from "./aws-local";
import { formatMs } from "./report";

/** The stores a manifest bench runs on: the embedded default, or s3rver with DynamoDB Local. */
export interface BenchStores {
  readonly label: string;
  readonly dataDir: string;
  readonly documents: ObjectStore;
  readonly catalog: ObjectStore;
  readonly state: StateStore;
  /** HTTP requests sent so far, where the stores speak HTTP. */
  readonly s3Requests?: () => number;
  readonly dynamoRequests?: () => number;
  readonly notes: readonly string[];
  close(): Promise<void>;
}

/** FsObjectStore and SqliteStateStore in a temp data dir, as `npm start` runs. */
export async function embeddedStores(bench: string): Promise<BenchStores> {
  const dataDir = await mkdtemp(join(tmpdir(), `vance-bench-${bench}-`));
  const sqlite = new SqliteStateStore(join(dataDir, "state.sqlite"));
  return {
    label: "embedded",
    dataDir,
    documents: new FsObjectStore(join(dataDir, "documents")),
    catalog: new FsObjectStore(join(dataDir, "catalog")),
    state: sqlite,
    notes: ["embedded: FsObjectStore (documents, catalog) and SqliteStateStore in a temp data dir"],
    async close() {
      sqlite.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** S3ObjectStore and DynamoStateStore on s3rver and DynamoDB Local, started here and stopped by `close`. */
export async function awsLocalStores(bench: string): Promise<BenchStores> {
  const dataDir = await mkdtemp(join(tmpdir(), `vance-bench-${bench}-`));
  const started = performance.now();
  const aws = await startAwsLocal();
  const ready = performance.now() - started;
  const close = async () => {
    await aws.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await ensureStateTable(aws.dynamo, "bench");
  } catch (error) {
    await close();
    throw error;
  }
  const documents = new S3ObjectStore({ client: aws.s3, bucket: aws.s3Bucket, prefix: "documents" });
  const catalog = new S3ObjectStore({ client: aws.s3, bucket: aws.s3Bucket, prefix: "catalog" });
  const state = new DynamoStateStore({ client: aws.dynamo, tableName: "bench" });
  return {
    label: "s3 + dynamodb",
    dataDir,
    documents,
    catalog,
    state,
    s3Requests: () => documents.requestCount + catalog.requestCount,
    dynamoRequests: () => state.requestCount,
    notes: [
      `s3 + dynamodb: s3rver (pid ${aws.s3rverPid}) and DynamoDB Local (pid ${aws.dynamoPid}) ready in ${formatMs(ready)}; ` +
        "S3ObjectStore for documents and catalog, DynamoStateStore",
    ],
    close,
  };
}
