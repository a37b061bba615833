import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { createS3Client, S3ObjectStore } from "@vance/adapters/aws";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { docTool, toolServices } from "./support/fixtures";

const T = "acme";
const P = "shop";
let store: S3ObjectStore;

beforeAll(async () => {
  const client = createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  const bucket = `cascade-${Date.now().toString(36)}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  store = new S3ObjectStore({ client, bucket });
});

describe("ServerToolService over S3 (s3rver): requests per operation", () => {
  it("a lookup costs 2 S3 requests; a cold listAll of 30 documents the LIST pages plus 30 GETs; a warm one only the LIST pages", async () => {
    const { tools } = toolServices({ store });
    for (let i = 0; i < 30; i++) await tools.put(T, P, `s3_tool_${i}`, docTool(`tool ${i}`));
    await tools.put(T, "_tenant", "s3_shared", docTool("tenant"));

    const fresh = toolServices({ store });
    store.resetRequestCount();
    const found = await (await fresh.tools.snapshot(T, P)).lookup("s3_tool_7");
    expect(found.status === "found" && found.tool.config.description).toBe("tool 7");
    expect(store.requestCount).toBe(2);

    store.resetRequestCount();
    const cold = await (await fresh.tools.snapshot(T, P)).tools();
    expect(cold.filter((tool) => tool.layer !== "builtin" && tool.layer !== "bundled")).toHaveLength(31);
    // One LIST page per layer, and a GET for each of the 31 documents but s3_tool_7: the lookup
    // parsed it already, and the listing's ETag shows it unchanged.
    expect(store.requestCount).toBe(2 + 30);

    store.resetRequestCount();
    expect(await (await fresh.tools.snapshot(T, P)).tools()).toEqual(cold);
    expect(store.requestCount).toBe(2);
  });

  it("a write through the service is visible to the very next read on S3", async () => {
    const { tools } = toolServices({ store });
    await tools.put(T, P, "s3_live", docTool("v1"));
    await (await tools.snapshot(T, P)).tools();
    await tools.put(T, P, "s3_live", docTool("v2"));
    const found = await (await tools.snapshot(T, P)).lookup("s3_live");
    expect(found.status === "found" && found.tool.config.description).toBe("v2");
    expect(
      (await (await tools.snapshot(T, P)).tools()).find((tool) => tool.name === "s3_live")?.config
        .description,
    ).toBe("v2");
  });
});
