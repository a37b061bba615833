import { randomBytes, randomUUID } from "node:crypto";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { createDynamoClient, createS3Client, ensureStateTable } from "@vance/adapters/aws";
import { type LocalServer, startLocalServer } from "./local-server";
import { S3RVER_CREDENTIALS } from "./s3rver";

/**
 * Several instances of the service over one S3 endpoint and one DynamoDB endpoint, as AWS runs
 * many function instances over one bucket and one table: each instance is `functions/api/node.ts`
 * in a process of its own (own caches, own usage write-behind, own connections), all sharing the
 * JWT secret and the secrets key, so a token or a sealed secret from one works on all.
 */

/** Where the instances keep their data: endpoints (or proxies in front of them), buckets, table. */
export interface AwsLocalStores {
  /** s3rver's base URL (path-style, credentials S3RVER/S3RVER), or a proxy in front of it. */
  readonly s3Endpoint: string;
  /** DynamoDB Local's base URL, or a proxy in front of it. */
  readonly dynamoEndpoint: string;
  readonly documentsBucket: string;
  readonly catalogBucket: string;
  readonly table: string;
}

/**
 * Creates the two buckets and the state table (absent ones only), talking to the stores directly
 * (`direct` endpoints, not through a proxy that a test may make lose traffic), and answers the
 * stores with fresh names unless given.
 */
export async function prepareAwsLocal(direct: {
  readonly s3Endpoint: string;
  readonly dynamoEndpoint: string;
  readonly documentsBucket?: string;
  readonly catalogBucket?: string;
  readonly table?: string;
}): Promise<AwsLocalStores> {
  const suffix = randomUUID().slice(0, 8);
  const stores = {
    s3Endpoint: direct.s3Endpoint,
    dynamoEndpoint: direct.dynamoEndpoint,
    documentsBucket: direct.documentsBucket ?? `vance-docs-${suffix}`,
    catalogBucket: direct.catalogBucket ?? `vance-catalog-${suffix}`,
    table: direct.table ?? `vance-state-${suffix}`,
  };
  const s3 = createS3Client({
    endpoint: direct.s3Endpoint,
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
    forcePathStyle: true,
  });
  const dynamo = createDynamoClient({ endpoint: direct.dynamoEndpoint, deadlineMs: 10_000 });
  try {
    for (const bucket of [stores.documentsBucket, stores.catalogBucket]) {
      try {
        await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (error) {
        const name = (error as { name?: string }).name;
        if (name !== "BucketAlreadyOwnedByYou" && name !== "BucketAlreadyExists") throw error;
      }
    }
    await ensureStateTable(dynamo, stores.table);
  } finally {
    s3.destroy();
    dynamo.destroy();
  }
  return stores;
}

/** The store settings one instance gets to run over `stores` (what a Lambda instance gets from its linked resources). */
export function storesEnv(stores: AwsLocalStores): Record<string, string> {
  return {
    VANCE_STORE: "s3",
    VANCE_S3_ENDPOINT: stores.s3Endpoint,
    VANCE_S3_FORCE_PATH_STYLE: "true",
    VANCE_DOCUMENTS_BUCKET: stores.documentsBucket,
    VANCE_CATALOG_BUCKET: stores.catalogBucket,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: "us-east-1",
    VANCE_STATE: "dynamodb",
    VANCE_DYNAMODB_ENDPOINT: stores.dynamoEndpoint,
    VANCE_STATE_TABLE: stores.table,
  };
}

/** The settings one instance gets to run over `stores` (what `npm start` reads from the environment). */
export function awsLocalEnv(stores: AwsLocalStores, shared: { jwtSecret: string; secretsKey: string }) {
  return { ...storesEnv(stores), VANCE_JWT_SECRET: shared.jwtSecret, VANCE_SECRETS_KEY: shared.secretsKey };
}

/** Running instances: their base URLs, one token valid on all, their log lines, and a stop. */
export interface Instances {
  readonly urls: readonly string[];
  /** A development token (all tenants, read/write/admin) that every instance accepts. */
  readonly token: string;
  /** JSON log lines each instance printed so far (stdout and stderr), parsed where they parse. */
  logs(instance?: number): Record<string, unknown>[];
  /** Stops every instance with SIGTERM (each flushes what it holds first) and waits until they exited. */
  stop(): Promise<void>;
}

/**
 * Starts `n` instances over `stores`, side by side, each on a free port with a data directory of
 * its own under the system temp directory; `env` adds or overrides settings.
 */
export async function startInstances(
  n: number,
  stores: AwsLocalStores,
  env: Record<string, string> = {},
): Promise<Instances> {
  const shared = {
    jwtSecret: randomBytes(24).toString("base64url"),
    secretsKey: randomBytes(32).toString("base64"),
  };
  const settings = { ...awsLocalEnv(stores, shared), ...env };
  const started = await Promise.allSettled(
    Array.from({ length: n }, () => startLocalServer({ env: settings, timeoutMs: 90_000 })),
  );
  const servers = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = started.find((result) => result.status === "rejected");
  if (failed) {
    await Promise.all(servers.map((server) => server.stop()));
    throw failed.reason;
  }
  const lines = servers.map((server) => collectLines(server));
  return {
    urls: servers.map((server) => server.base),
    token: servers[0]!.token,
    logs: (instance) =>
      (instance === undefined ? lines : [lines[instance]!]).flatMap((list) => list.flatMap(parseLine)),
    stop: async () => {
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}

/** Every line the server prints from now on. */
function collectLines(server: LocalServer): string[] {
  const lines: string[] = [];
  for (const stream of [server.child.stdout, server.child.stderr]) {
    let rest = "";
    stream?.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts);
    });
  }
  return lines;
}

function parseLine(line: string): Record<string, unknown>[] {
  if (!line.startsWith("{")) return [];
  try {
    return [JSON.parse(line) as Record<string, unknown>];
  } catch {
    return [];
  }
}
