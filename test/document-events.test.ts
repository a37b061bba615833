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
} from "@vance/adapters/aws";
import { CountingObjectStore } from "@vance/adapters/testing";
import { compiledLayerKey, silentLogger } from "@vance/core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { compiledIndexes, decodeEventKey, documentEventsHandler } from "../functions/document-events/handler";
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

  it("rebuilds the compiled index of each layer it bumped: a fresh instance's cold listing then reads one object per layer and no document", async () => {
    const instance = async () => {
      const documents = new CountingObjectStore(new S3ObjectStore({ client: s3, bucket }));
      const { app, services } = await testApp({
        documents,
        state: new DynamoStateStore({ client: dynamo, tableName }),
      });
      return { documents, services, client: await projectClient(app, "evt", "shop") };
    };
    const a = await instance();
    await a.client.putTool("listed", docTool("through the API"));
    await a.client.putTool("shared", docTool("a tenant tool"), "_tenant");
    await a.services.compiledLayers.settled();

    // The function as its Lambda entry builds it: its own clients over the bucket and the table.
    const state = new DynamoStateStore({ client: dynamo, tableName });
    const documents = new CountingObjectStore(new S3ObjectStore({ client: s3, bucket }));
    const handler = documentEventsHandler({
      state,
      indexes: compiledIndexes({ documents, state, networkAllowlist: [], logger: silentLogger }),
      documentsBucket: bucket,
      catalogBucket: CATALOG_BUCKET,
      logger: silentLogger,
    });
    const key = "evt/shop/server-tools/straight.yaml";
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: docTool("straight into the bucket") }),
    );
    const created = await handler({
      Records: [
        record("ObjectCreated:Put", bucket, key),
        record("ObjectCreated:Put", bucket, "evt/shop/documents/a.md"),
      ],
    });
    expect(created.rebuilt).toEqual({ "documents/evt/shop": "written" });
    // The index GET, one LIST, the one document the index lacked, the index PUT.
    expect(documents.counts).toMatchObject({ get: 2, list: 1, put: 1, delete: 0 });

    const b = await instance();
    b.documents.reset();
    const tools = await (await b.services.tools.snapshot("evt", "shop")).tools();
    expect(tools.find((tool) => tool.name === "straight")?.config.description).toBe(
      "straight into the bucket",
    );
    expect(tools.find((tool) => tool.name === "listed")?.layer).toBe("project");
    expect(tools.find((tool) => tool.name === "shared")?.layer).toBe("tenant");
    expect(b.documents.counts).toEqual({ get: 2, list: 0, put: 0, delete: 0 });

    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    documents.reset();
    const removed = await handler({ Records: [record("ObjectRemoved:Delete", bucket, key)] });
    expect(removed.rebuilt).toEqual({ "documents/evt/shop": "written" });
    // Every remaining document's result comes from the index it replaces: no document read.
    expect(documents.counts).toMatchObject({ get: 1, list: 1, put: 1 });
    const c = await instance();
    c.documents.reset();
    expect(
      (await (await c.services.tools.snapshot("evt", "shop")).tools()).map((tool) => tool.name),
    ).not.toContain("straight");
    expect(c.documents.counts).toEqual({ get: 2, list: 0, put: 0, delete: 0 });
  });

  it("leaves the rebuild to a later event when the layer's generation moved past its own bump", async () => {
    const real = new DynamoStateStore({ client: dynamo, tableName });
    const documents = new CountingObjectStore(new S3ObjectStore({ client: s3, bucket }));
    // Another write's bump lands right after this event's.
    const state = {
      bumpGeneration: async (marker: string) => {
        const generation = await real.bumpGeneration(marker);
        await real.bumpGeneration(marker);
        return generation;
      },
      getGenerations: (markers: readonly string[]) => real.getGenerations(markers),
    };
    const handler = documentEventsHandler({
      state,
      indexes: compiledIndexes({ documents, state, networkAllowlist: [], logger: silentLogger }),
      documentsBucket: bucket,
      catalogBucket: CATALOG_BUCKET,
      logger: silentLogger,
    });
    const result = await handler({
      Records: [record("ObjectCreated:Put", bucket, "evt/other/server-tools/x.yaml")],
    });
    expect(result.rebuilt).toEqual({ "documents/evt/other": "superseded" });
    expect(documents.total).toBe(0);
  });
});
