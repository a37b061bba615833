import { randomBytes, randomUUID } from "node:crypto";
import { CreateBucketCommand, GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createDynamoClient, createS3Client, ensureStateTable } from "@vance/adapters/aws";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { mintToken } from "../functions/api/auth";
import { type BuiltFunction, buildFunctions } from "../scripts/build";
import {
  deployedCopy,
  type FunctionUrlResult,
  functionUrlEvent,
  type LambdaProcess,
  lambdaEnvironment,
  linkedResources,
  startLambda,
} from "./support/lambda";
import { ensureNode22, NODE_22, NODE_22_SUPPORTED } from "./support/mcp-conformance";
import { S3RVER_CREDENTIALS } from "./support/s3rver";

/**
 * Issue 15: the built API bundle — dist/functions/api, the folder infra deploys — in a Node
 * process of its own, as one Lambda instance: no TypeScript loader, no node_modules beside it,
 * its buckets, table and secrets handed over as SST links, function URL events in, against
 * s3rver and DynamoDB Local.
 */

const JWT_SECRET = randomBytes(32).toString("base64url");
const ADD =
  "type: scripted\ndescription: Add two numbers.\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n";

const s3Endpoint = inject("s3Endpoint");
const dynamoEndpoint = inject("dynamoEndpoint");
const suffix = Date.now().toString(36);
const documentsBucket = `bundle-docs-${suffix}`;
const catalogBucket = `bundle-catalog-${suffix}`;
const tableName = `bundle-${randomUUID()}`;

let built: BuiltFunction;
/** The built folder, copied out of the repository as a deploy uploads it. */
let deployed: ReturnType<typeof deployedCopy>;
let s3: S3Client;
let token: string;

/** What Lambda hands the function besides its links: the endpoints stand in for AWS's. */
const localAws = {
  VANCE_S3_ENDPOINT: s3Endpoint,
  VANCE_S3_FORCE_PATH_STYLE: "true",
  VANCE_DYNAMODB_ENDPOINT: dynamoEndpoint,
  AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
};

beforeAll(async () => {
  [built] = (await buildFunctions({ only: ["api"] })) as [BuiltFunction];
  deployed = deployedCopy(built.dir);
  s3 = createS3Client({
    endpoint: s3Endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  });
  for (const bucket of [documentsBucket, catalogBucket])
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const dynamo = createDynamoClient({ endpoint: dynamoEndpoint });
  await ensureStateTable(dynamo, tableName);
  dynamo.destroy();
  token = await mintToken(JWT_SECRET, { tenant: "acme", roles: ["read", "write"] }, 3600);
}, 60_000);

afterAll(() => {
  s3?.destroy();
  deployed?.remove();
});

/** Sends a function URL event and answers the result with its body parsed. */
async function request(
  lambda: LambdaProcess,
  method: string,
  path: string,
  options: { body?: unknown; contentType?: string; headers?: Record<string, string> } = {},
) {
  const body =
    options.body === undefined || typeof options.body === "string"
      ? options.body
      : JSON.stringify(options.body);
  const result = await lambda.invoke<FunctionUrlResult>(
    functionUrlEvent(method, path, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": options.contentType ?? "application/json" }),
        ...options.headers,
      },
      ...(body === undefined ? {} : { body }),
    }),
  );
  const type = result.headers["content-type"] ?? "";
  return {
    ...result,
    json: type.includes("json") ? (JSON.parse(result.body) as Record<string, unknown>) : undefined,
  };
}

/** Node 20, which the service supports, and Node 22, the runtime infra deploys the functions on. */
const RUNTIMES = [
  { runtime: "Node 20", execPath: process.execPath, project: "shop" },
  ...(NODE_22_SUPPORTED
    ? [{ runtime: "Node 22, the Lambda runtime", execPath: NODE_22, project: "shop22" }]
    : []),
];

describe.each(RUNTIMES)(
  "the API bundle on $runtime, linked as infra links it, serves function URL events",
  ({ execPath, project }) => {
    const T = `/v1/tenants/acme/projects/${project}`;
    let lambda: LambdaProcess;
    beforeAll(() => {
      if (execPath === NODE_22) ensureNode22();
      lambda = startLambda(
        deployed.entry,
        {
          ...lambdaEnvironment("vance-api"),
          ...linkedResources({
            Documents: { name: documentsBucket, type: "sst.aws.Bucket" },
            Catalog: { name: catalogBucket, type: "sst.aws.Bucket" },
            State: { name: tableName, type: "sst.aws.Dynamo" },
            JwtSecret: { value: JWT_SECRET, type: "sst.sst.Secret" },
            SecretsKey: { value: randomBytes(32).toString("base64"), type: "sst.sst.Secret" },
          }),
          ...localAws,
          // Production refuses the service's own tokens unless a deploy turns them on, as this one does.
          VANCE_LOCAL_TOKENS: "true",
          // As infra/api.ts sets it in every deploy.
          OTEL_METRICS_EXPORTER: "emf",
        },
        { execPath },
      );
    }, 200_000);
    afterAll(() => lambda.stop());

    it("answers health", async () => {
      const health = await request(lambda, "GET", "/v1/health");
      // On a failed start, the function's own log says why.
      expect(health.statusCode, lambda.logs()).toBe(200);
      expect(health.json).toEqual({ status: "ok", version: expect.any(String) });
    });

    it("stores a tool PUT in the linked documents bucket", async () => {
      const put = await request(lambda, "PUT", `${T}/tools/add_numbers`, {
        body: ADD,
        contentType: "application/yaml",
      });
      expect(put.statusCode).toBe(201);
      expect(put.headers.etag).toBeTruthy();
      const stored = await s3.send(
        new GetObjectCommand({
          Bucket: documentsBucket,
          Key: `acme/${project}/server-tools/add_numbers.yaml`,
        }),
      );
      expect(await stored.Body?.transformToString()).toBe(ADD);
    });

    it("runs a scripted tool: the script worker and the QuickJS wasm ship beside the entry", async () => {
      const invoked = await request(lambda, "POST", `${T}/tools/add_numbers/invoke`, {
        body: { params: { a: 2, b: 3 } },
      });
      expect(invoked.statusCode).toBe(200);
      expect(invoked.json).toMatchObject({ value: 5 });
    });

    it("writes the call's metrics as CloudWatch EMF lines before the invocation answers (the deployed default)", () => {
      const emf = lambda
        .logs()
        .split("\n")
        .filter((line) => line.startsWith("{") && line.includes('"_aws"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const call = emf.find((line) => line["vance.tool"] === "add_numbers" && "vance.tool.calls" in line);
      expect(call, lambda.logs()).toMatchObject({
        "vance.tool.calls": 1,
        "vance.outcome": "ok",
        _aws: { CloudWatchMetrics: [{ Namespace: "VanceServerTools" }] },
      });
    });

    it("lists the bundled default documents shipped in the bundle", async () => {
      const listed = await request(lambda, "GET", `${T}/tools`);
      expect(listed.statusCode).toBe(200);
      const tools = listed.json?.tools as { name: string; layer: string }[];
      expect(tools).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: "doc_getting_started", layer: "bundled" }),
          expect.objectContaining({ name: "add_numbers", layer: "project" }),
        ]),
      );
    });

    it("spawns a process in the linked table and serves its manifest, then MCP initialize on it", async () => {
      const spawned = await request(lambda, "POST", `${T}/processes`, {
        body: { allowedToolsAdd: ["add_numbers"], models: ["openai/gpt-4.1"] },
      });
      expect(spawned.statusCode).toBe(201);
      const processId = spawned.json?.processId as string;

      const manifest = await request(lambda, "GET", `${T}/processes/${processId}/manifest`);
      expect(manifest.statusCode).toBe(200);
      const tools = manifest.json?.tools as { function: { name: string } }[];
      expect(tools.map((tool) => tool.function.name)).toContain("add_numbers");

      // The MCP SDK is a chunk of its own, loaded by this first MCP request.
      const initialized = await request(lambda, "POST", `${T}/processes/${processId}/mcp`, {
        headers: { accept: "application/json, text/event-stream" },
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "bundle-test", version: "1" },
          },
        },
      });
      expect(initialized.statusCode).toBe(200);
      expect(initialized.json).toMatchObject({
        jsonrpc: "2.0",
        id: 1,
        result: { protocolVersion: "2025-06-18", serverInfo: { name: "vance-server-tools" } },
      });
    });

    it("answers 401 problem+json without a token, as the local server does", async () => {
      const refused = await request(lambda, "GET", `${T}/tools`, { headers: { authorization: "" } });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers["content-type"]).toBe("application/problem+json");
    });
  },
);

describe("the API bundle without its links", () => {
  it("answers the first event 500 and logs one line naming every missing setting and its resource", async () => {
    const lambda = startLambda(deployed.entry, {
      ...lambdaEnvironment("vance-api"),
      ...linkedResources({ Documents: { name: documentsBucket, type: "sst.aws.Bucket" } }),
      ...localAws,
    });
    try {
      const answer = await request(lambda, "GET", "/v1/health");
      expect(answer.statusCode).toBe(500);
      expect(answer.headers["content-type"]).toBe("application/problem+json");
      expect(answer.json).toMatchObject({ status: 500, code: "start_failed" });
      const line = lambda
        .logs()
        .split("\n")
        .find((text) => text.includes('"function.start_failed"'));
      expect(line).toBeDefined();
      const logged = JSON.parse(line!) as { level: string; function: string; error: string };
      expect(logged).toMatchObject({ level: "ERROR", function: "api" });
      for (const missing of [
        "VANCE_CATALOG_BUCKET (linked resource Catalog)",
        "VANCE_STATE_TABLE (linked resource State)",
        "VANCE_JWT_SECRET (linked resource JwtSecret)",
        "VANCE_SECRETS_KEY (linked resource SecretsKey)",
        // Production: no trusted issuer, and the service's own tokens are off by default.
        "VANCE_TOKEN_ISSUERS: required when VANCE_LOCAL_TOKENS is off",
      ]) {
        expect(logged.error).toContain(missing);
      }
      expect(logged.error).not.toContain("VANCE_DOCUMENTS_BUCKET");
    } finally {
      await lambda.stop();
    }
  });
});

describe("what the API bundle loads at a cold start", () => {
  it("stays under 600 kB of JavaScript, without the MCP SDK, the OpenAPI parser, the AWS SDK, the YAML parser, Ajv, RE2, acorn or a native module", () => {
    expect(built.startBytes).toBeLessThan(600_000);
    const startInputs = built.startInputs;
    expect(startInputs.some((input) => input.includes("node_modules/@modelcontextprotocol/sdk/"))).toBe(
      false,
    );
    expect(startInputs.some((input) => input.includes("node_modules/zod/"))).toBe(false);
    expect(startInputs.some((input) => input.includes("node_modules/@readme/openapi-parser/"))).toBe(false);
    // The S3 and DynamoDB stores load the SDK at their first call (functions/deferred-stores.ts).
    const awsSdk = ["node_modules/@aws-sdk/", "node_modules/@smithy/"];
    expect(startInputs.filter((input) => awsSdk.some((sdk) => input.includes(sdk)))).toEqual([]);
    // Ajv, RE2, acorn and the YAML parser load at the first event that is not a health check (loadLazyEngines).
    const lazyEngines = ["ajv", "fast-uri", "re2js", "acorn", "yaml"].map((name) => `node_modules/${name}/`);
    expect(startInputs.filter((input) => lazyEngines.some((engine) => input.includes(engine)))).toEqual([]);
    const allInputs = Object.keys(built.metafile.inputs);
    expect(allInputs.some((input) => input.includes("better-sqlite3"))).toBe(false);
    // The lazily loaded parts are still in the bundle.
    expect(allInputs.some((input) => input.includes("node_modules/@modelcontextprotocol/sdk/"))).toBe(true);
    for (const sdk of awsSdk) expect(allInputs.some((input) => input.includes(sdk))).toBe(true);
    for (const engine of lazyEngines) expect(allInputs.some((input) => input.includes(engine))).toBe(true);
  });
});
