import { randomUUID } from "node:crypto";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createDynamoClient, createS3Client, DynamoStateStore, ensureStateTable } from "@vance/adapters/aws";
import { CATALOG_KEY, CATALOG_MARKER, layerMarker } from "@vance/core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildFunctions } from "../scripts/build";
import {
  deployedCopy,
  lambdaEnvironment,
  linkedResources,
  scheduledEvent,
  startLambda,
} from "./support/lambda";
import { S3RVER_CREDENTIALS } from "./support/s3rver";

/**
 * Issue 15: the other built bundles — dist/functions/catalog-sync and document-events, the
 * folders infra deploys — each in a Node process of its own, as a Lambda instance, with the
 * events their triggers send: a schedule, and the buckets' object events.
 */

const s3Endpoint = inject("s3Endpoint");
const dynamoEndpoint = inject("dynamoEndpoint");
const suffix = Date.now().toString(36);
const catalogBucket = `bundle-sync-${suffix}`;
const documentsBucket = `bundle-events-${suffix}`;
const tableName = `bundle-events-${randomUUID()}`;

const localAws = {
  VANCE_S3_ENDPOINT: s3Endpoint,
  VANCE_S3_FORCE_PATH_STYLE: "true",
  VANCE_DYNAMODB_ENDPOINT: dynamoEndpoint,
  AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
};

/** The built folders, copied out of the repository as a deploy uploads them. */
let catalogSync: ReturnType<typeof deployedCopy>;
let documentEvents: ReturnType<typeof deployedCopy>;
let s3: S3Client;
const dynamo = createDynamoClient({ endpoint: dynamoEndpoint });

beforeAll(async () => {
  const built = await buildFunctions({ only: ["catalog-sync", "document-events"] });
  [catalogSync, documentEvents] = built.map((fn) => deployedCopy(fn.dir)) as [
    ReturnType<typeof deployedCopy>,
    ReturnType<typeof deployedCopy>,
  ];
  s3 = createS3Client({
    endpoint: s3Endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
  await s3.send(new CreateBucketCommand({ Bucket: catalogBucket }));
  await ensureStateTable(dynamo, tableName);
}, 60_000);

afterAll(() => {
  s3?.destroy();
  dynamo.destroy();
  catalogSync?.remove();
  documentEvents?.remove();
});

describe("the catalog-sync bundle on its schedule", () => {
  it("compiles the linked bucket's documents and the bundled catalog into catalog.json, once per change", async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: catalogBucket,
        Key: "model/acme-gw/_provider.yaml",
        Body: "maxTools: 64\nwireType: openai\n",
      }),
    );
    const lambda = startLambda(catalogSync.entry, {
      ...lambdaEnvironment("vance-catalog-sync"),
      ...linkedResources({ Catalog: { name: catalogBucket, type: "sst.aws.Bucket" } }),
      ...localAws,
    });
    try {
      const first = await lambda.invoke<{ changed: boolean; providers: number; errors: unknown[] }>(
        scheduledEvent(),
      );
      expect(first).toMatchObject({ changed: true, errors: [] });
      // The bundled catalog (copied beside the entry) and the bucket's provider.
      expect(first.providers).toBeGreaterThanOrEqual(2);
      const compiled = await s3.send(new GetObjectCommand({ Bucket: catalogBucket, Key: CATALOG_KEY }));
      const catalog = await compiled.Body!.transformToString();
      expect(catalog).toContain("acme-gw");
      expect(catalog).toContain("openai");

      const second = await lambda.invoke<{ changed: boolean }>(scheduledEvent());
      expect(second.changed).toBe(false);
    } finally {
      await lambda.stop();
    }
  });

  it("without its link, fails each event naming the bucket setting and its resource, and logs it", async () => {
    const lambda = startLambda(catalogSync.entry, {
      ...lambdaEnvironment("vance-catalog-sync"),
      ...localAws,
    });
    try {
      await expect(lambda.invoke(scheduledEvent())).rejects.toThrow(
        /VANCE_CATALOG_BUCKET \(linked resource Catalog\): required here/,
      );
      expect(lambda.logs()).toContain('"event":"function.start_failed","function":"catalog-sync"');
    } finally {
      await lambda.stop();
    }
  });
});

describe("the document-events bundle on the buckets' object events", () => {
  /** One S3 event record (event version 2.1); keys arrive form-encoded. */
  const record = (bucket: string, key: string) => ({
    eventVersion: "2.1",
    eventSource: "aws:s3",
    awsRegion: "us-east-1",
    eventTime: new Date().toISOString(),
    eventName: "ObjectCreated:Put",
    s3: {
      s3SchemaVersion: "1.0",
      configurationId: "DocumentEvents",
      bucket: { name: bucket, arn: `arn:aws:s3:::${bucket}` },
      object: { key, size: 12, eTag: "d41d8cd98f00b204e9800998ecf8427e", sequencer: "0055AED6DCD90281E5" },
    },
  });

  it("bumps the changed layer's and the catalog's generations in the linked table", async () => {
    const lambda = startLambda(documentEvents.entry, {
      ...lambdaEnvironment("vance-document-events"),
      ...linkedResources({ State: { name: tableName, type: "sst.aws.Dynamo" } }),
      VANCE_DOCUMENTS_BUCKET: documentsBucket,
      VANCE_CATALOG_BUCKET: catalogBucket,
      ...localAws,
    });
    const state = new DynamoStateStore({ client: dynamo, tableName });
    const layer = layerMarker("acme", "shop");
    try {
      const before = await state.getGenerations([layer, CATALOG_MARKER]);
      const result = await lambda.invoke<{ bumped: string[] }>({
        Records: [
          record(documentsBucket, "acme/shop/server-tools/straight.yaml"),
          record(catalogBucket, "model/acme-gw/_provider.yaml"),
        ],
      });
      expect(result.bumped.sort()).toEqual([CATALOG_MARKER, layer].sort());
      expect(await state.getGenerations([layer, CATALOG_MARKER])).toEqual(
        before.map((generation) => generation + 1),
      );
    } finally {
      await lambda.stop();
    }
  });
});
