import { randomUUID } from "node:crypto";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import {
  createDynamoClient,
  createS3Client,
  DynamoStateStore,
  ensureStateTable,
  S3ObjectStore,
} from "@vance/adapters";
import { CountingObjectStore } from "@vance/adapters/testing";
import { compiledLayerKey, silentLogger } from "@vance/core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { decodeEventKey, documentEventsHandler } from "../functions/document-events/handler";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";

const CATALOG_BUCKET = "vance-catalog-events";
const dynamo = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
let s3: S3Client;
let bucket: string;
let tableName: string;

beforeAll(async () => {
  s3 = createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  bucket = `events-${Date.now().toString(36)}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  tableName = `events-${randomUUID()}`;
  await ensureStateTable(dynamo, tableName);
});
afterAll(() => {
  s3.destroy();
  dynamo.destroy();
});

/**
 * One record as S3 delivers it to Lambda (event version 2.1): the key form-encoded, a `+` for
 * each space; removals carry no size or ETag.
 */
function record(eventName: string, bucketName: string, encodedKey: string) {
  const created = eventName.startsWith("ObjectCreated");
  return {
    eventVersion: "2.1",
    eventSource: "aws:s3",
    awsRegion: "us-east-1",
    eventTime: "2025-01-01T12:00:00.000Z",
    eventName,
    userIdentity: { principalId: "AWS:AIDAEXAMPLE" },
    requestParameters: { sourceIPAddress: "203.0.113.7" },
    responseElements: {
      "x-amz-request-id": "C3D13FE58DE4C810",
      "x-amz-id-2": "FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD",
    },
    s3: {
      s3SchemaVersion: "1.0",
      configurationId: "DocumentEvents",
      bucket: {
        name: bucketName,
        ownerIdentity: { principalId: "A3NL1KOZZKExample" },
        arn: `arn:aws:s3:::${bucketName}`,
      },
      object: {
        key: encodedKey,
        ...(created ? { size: 120, eTag: "d41d8cd98f00b204e9800998ecf8427e" } : {}),
        sequencer: "0055AED6DCD90281E5",
      },
    },
  };
}

describe("document events (S3 notifications → generation bumps)", () => {
  it("decodes keys as S3 sends them: %-escapes, and '+' for a space", () => {
    expect(decodeEventKey("acme/_tenant/server-tools/x.yaml")).toBe("acme/_tenant/server-tools/x.yaml");
    expect(decodeEventKey("acme/shop/documents/read+me%21.md")).toBe("acme/shop/documents/read me!.md");
    expect(decodeEventKey("acme/shop/documents/a%2Bb.md")).toBe("acme/shop/documents/a+b.md");
  });

  it("a write straight into the bucket (s3rver) is trusted away until the event's bump, then the next manifest sees it; a removal too", async () => {
    const documents = new CountingObjectStore(new S3ObjectStore({ client: s3, bucket }));
    const { app } = await testApp({ documents, state: new DynamoStateStore({ client: dynamo, tableName }) });
    const client = await projectClient(app);
    await client.putTool("listed", docTool("through the API"));
    const { processId } = await client.spawn({ allowedToolsAdd: ["listed", "straight"] });
    const names = async () => (await client.manifest(processId)).primary;
    expect(await names()).toContain("listed");
    documents.reset();
    expect(await names()).not.toContain("straight");
    expect(documents.total).toBe(0);

    // The subscribed function: its own state store client, as a separate Lambda has.
    const handler = documentEventsHandler({
      state: new DynamoStateStore({ client: dynamo, tableName }),
      documentsBucket: bucket,
      catalogBucket: CATALOG_BUCKET,
      logger: silentLogger,
    });

    const key = "acme/_tenant/server-tools/straight.yaml";
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: docTool("straight into the bucket") }),
    );
    expect(await names()).not.toContain("straight");
    const created = await handler({
      Records: [
        record("ObjectCreated:Put", bucket, key),
        record("ObjectCreated:Put", bucket, "acme/shop/documents/read+me%21.md"),
        record("ObjectCreated:Copy", bucket, key),
        record("ObjectCreated:Put", "someone-elses-bucket", "acme/other/x.md"),
        record("ObjectCreated:Put", CATALOG_BUCKET, "model/openai/_provider.yaml"),
      ],
    });
    expect(created.bumped.sort()).toEqual(["catalog", "documents/acme/_tenant", "documents/acme/shop"]);
    expect(await names()).toContain("straight");

    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    expect(await names()).toContain("straight");
    const removed = await handler({ Records: [record("ObjectRemoved:Delete", bucket, key)] });
    expect(removed.bumped).toEqual(["documents/acme/_tenant"]);
    expect(await names()).not.toContain("straight");
  });

  it("ignores keys of no layer and refuses a payload that is no S3 event", async () => {
    const bumps: string[] = [];
    const handler = documentEventsHandler({
      state: { bumpGeneration: async (marker) => bumps.push(marker) },
      documentsBucket: bucket,
      catalogBucket: CATALOG_BUCKET,
      logger: silentLogger,
    });
    const result = await handler({
      Records: [
        record("ObjectCreated:Put", bucket, "README.md"),
        record("ObjectCreated:Put", bucket, "Not%20An%20Id/shop/x.md"),
        record("ObjectCreated:Put", bucket, "acme/shop/%E0%A4%A.md"),
      ],
    });
    expect(result.bumped).toEqual([]);
    expect(bumps).toEqual([]);
    await expect(handler({ detail: {} })).rejects.toThrow(/not an S3 event/);
  });

  it("the service's compiled objects (a layer index, an operation list) bump nothing and are no foreign keys", async () => {
    const bumps: string[] = [];
    const warnings: string[] = [];
    const handler = documentEventsHandler({
      state: { bumpGeneration: async (marker) => bumps.push(marker) },
      documentsBucket: bucket,
      catalogBucket: CATALOG_BUCKET,
      logger: { info() {}, warn: (event) => warnings.push(event) },
    });
    const result = await handler({
      Records: [
        record("ObjectCreated:Put", bucket, compiledLayerKey("acme", "shop")),
        record("ObjectCreated:Put", bucket, "_compiled/acme/shop/openapi/0123abcd.json"),
        record("ObjectCreated:Put", bucket, "README.md"),
      ],
    });
    expect(result.bumped).toEqual([]);
    expect(bumps).toEqual([]);
    // Only the README: a key of no layer, so worth a WARN.
    expect(warnings).toEqual(["document_events.foreign_key"]);
  });
});
