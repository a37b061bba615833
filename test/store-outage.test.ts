import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createDynamoClient,
  createS3Client,
  DynamoStateStore,
  ensureStateTable,
  S3ObjectStore,
} from "@vance/adapters/aws";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { type Logger, type StateStore, StoreUnavailableError } from "@vance/core";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type DynamoLocalServer, freePort, startDynamoLocal, waitUntilReady } from "./setup/dynamodb";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { type RunningS3rver, S3RVER_BUCKET, S3RVER_CREDENTIALS, startS3rver } from "./support/s3rver";

type Client = Awaited<ReturnType<typeof projectClient>>;

/** One request through the app, with how long it took (printed, not asserted: a loaded machine is slow). */
async function timed(client: Client, method: string, path: string, body?: unknown, contentType?: string) {
  const started = performance.now();
  const res = await client.call(method, path, body, contentType);
  return { ...res, ms: Math.round(performance.now() - started) };
}

function expectUnavailable(res: { status: number; body: Record<string, unknown>; ms: number }, what: string) {
  expect(res.status, what).toBe(503);
  expect(res.body.code, what).toBe("store_unavailable");
}

/**
 * A TCP server that accepts connections and never answers: a store that hangs rather than refuses.
 * `abandoned()`: connections the client gave up on (hung up).
 */
async function blackHole(): Promise<{
  endpoint: string;
  abandoned: () => number;
  close: () => Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let abandoned = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    // Read (and drop) what arrives, so that the client's hang-up is seen as a close.
    socket.resume();
    socket.on("close", () => {
      if (sockets.delete(socket)) abandoned++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        const open = [...sockets];
        sockets.clear();
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// The outages are independent (each has its store of its own, or a silent endpoint), and most of
// their time is waiting: on java's start, on the 3 s deadlines. So they wait side by side.
describe.concurrent("store outages", () => {
  describe("object store outage (own s3rver, stopped and restarted by PID)", () => {
    let s3rver: RunningS3rver | undefined;
    afterAll(async () => {
      await s3rver?.stop();
    });

    it("answers 503 store_unavailable while s3rver is down, and serves again once it is back", async () => {
      s3rver = await startS3rver();
      const port = Number(new URL(s3rver.endpoint).port);
      const s3 = createS3Client({
        endpoint: s3rver.endpoint,
        region: "us-east-1",
        credentials: S3RVER_CREDENTIALS,
        forcePathStyle: true,
      });
      const { app } = await testApp({ documents: new S3ObjectStore({ client: s3, bucket: S3RVER_BUCKET }) });
      const client = await projectClient(app);
      const put = (body: string) => timed(client, "PUT", "/documents/notes/a.md", body, "text/markdown");
      expect((await put("# before")).status).toBe(201);

      await s3rver.stop();
      const down = [
        await timed(client, "GET", "/documents/notes/a.md"),
        await put("# during"),
        await timed(client, "GET", "/tools"),
        await timed(client, "GET", "/tools/doc_getting_started"),
        await timed(client, "POST", "/tools/doc_getting_started/invoke", { params: {} }),
      ];
      for (const [index, res] of down.entries()) expectUnavailable(res, `request ${index} with s3rver down`);
      console.info(`503 latency with s3rver down (ms): ${down.map((res) => res.ms).join(", ")}`);
      const raw = await app.request(`${client.base}/documents/notes/a.md`, { headers: client.headers });
      expect([raw.status, raw.headers.get("retry-after")]).toEqual([503, "1"]);

      // The same port, a fresh (empty) bucket: the first request after the restart succeeds.
      s3rver = await startS3rver({ port });
      const after = await put("# after");
      expect(after.status).toBe(201);
      const read = await app.request(`${client.base}/documents/notes/a.md`, { headers: client.headers });
      expect(await read.text()).toBe("# after");
      expect((await timed(client, "GET", "/tools")).status).toBe(200);
    }, 60_000);

    it("answers 503 at the default 3 s deadline when S3 accepts connections but never answers", async ({
      expect,
    }) => {
      const hole = await blackHole();
      try {
        const s3 = createS3Client({
          endpoint: hole.endpoint,
          region: "us-east-1",
          credentials: S3RVER_CREDENTIALS,
          forcePathStyle: true,
        });
        const { app } = await testApp({
          documents: new S3ObjectStore({ client: s3, bucket: S3RVER_BUCKET }),
        });
        const client = await projectClient(app);
        const res = await timed(client, "GET", "/documents/notes/a.md");
        expectUnavailable(res, "GET with a silent S3");
        // The deadline ended the request: the store's connection was given up, not left hanging.
        await expect.poll(() => hole.abandoned()).toBeGreaterThan(0);
        console.info(`503 latency with a silent S3 endpoint (ms): ${res.ms}`);
      } finally {
        await hole.close();
      }
    });
  });

  describe("state store outage (own DynamoDB Local, stopped and restarted; java killed with its group)", () => {
    let dynamo: DynamoLocalServer | undefined;
    let dbPath: string | undefined;
    afterAll(async () => {
      await dynamo?.stop();
      if (dbPath) await rm(dbPath, { recursive: true, force: true });
    });

    it("answers 503 store_unavailable while DynamoDB Local is down, and serves the same process after it restarts", async () => {
      dbPath = await mkdtemp(join(tmpdir(), "vance-dynamo-outage-"));
      const port = await freePort();
      const endpoint = `http://127.0.0.1:${port}`;
      dynamo = startDynamoLocal(port, { dbPath });
      await waitUntilReady(endpoint, dynamo);
      const dynamoClient = createDynamoClient({ endpoint });
      await ensureStateTable(dynamoClient, "outage");
      const state = new DynamoStateStore({ client: dynamoClient, tableName: "outage" });
      const { app } = await testApp({ state });
      const client = await projectClient(app);
      const { processId } = await client.spawn({ allowedToolsAdd: ["doc_getting_started"] });
      expect((await client.invoke(processId, "doc_getting_started")).status).toBe(200);

      await dynamo.stop();
      const down = [
        await timed(client, "POST", "/processes", { models: [] }),
        await timed(client, "GET", `/processes/${processId}`),
        await timed(client, "POST", `/processes/${processId}/invoke`, {
          name: "doc_getting_started",
          params: {},
        }),
        await timed(client, "GET", `/processes/${processId}/manifest`),
        await timed(client, "GET", "/insights/tool-usage"),
      ];
      for (const [index, res] of down.entries())
        expectUnavailable(res, `request ${index} with DynamoDB down`);
      console.info(`503 latency with DynamoDB Local down (ms): ${down.map((res) => res.ms).join(", ")}`);

      dynamo = startDynamoLocal(port, { dbPath });
      await waitUntilReady(endpoint, dynamo);
      const record = await timed(client, "GET", `/processes/${processId}`);
      expect(record.status).toBe(200);
      expect(record.body.processId).toBe(processId);
      expect((await client.invoke(processId, "doc_getting_started")).status).toBe(200);
      // Two DynamoDB Local starts (~4 s each, far more on a loaded 2-core machine).
    }, 90_000);

    it("answers 503 at the default 3 s deadline when DynamoDB accepts connections but never answers", async ({
      expect,
    }) => {
      const hole = await blackHole();
      try {
        const state = new DynamoStateStore({
          client: createDynamoClient({ endpoint: hole.endpoint }),
          tableName: "never",
        });
        const { app } = await testApp({ state });
        const client = await projectClient(app);
        const res = await timed(client, "POST", "/processes", { models: [] });
        expectUnavailable(res, "spawn with a silent DynamoDB");
        await expect.poll(() => hole.abandoned()).toBeGreaterThan(0);
        console.info(`503 latency with a silent DynamoDB endpoint (ms): ${res.ms}`);
      } finally {
        await hole.close();
      }
    });
  });

  describe("usage counting never fails a call", () => {
    let dir: string | undefined;
    afterEach(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("answers a successful tool call with its value when counting and activation writes fail, and logs a WARN for each", async () => {
      dir = await mkdtemp(join(tmpdir(), "vance-counting-"));
      const inner = new SqliteStateStore(join(dir, "state.sqlite"));
      const failing = ["addToolUsage", "touchActivatedTools"];
      const state = new Proxy(inner, {
        get(target, property, receiver) {
          if (typeof property === "string" && failing.includes(property)) {
            return async () => {
              throw new StoreUnavailableError("state store", "stopped for the test");
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }) as StateStore;
      const warnings: { event: string; fields: Record<string, unknown> }[] = [];
      const logger: Logger = {
        info() {},
        warn(event, fields = {}) {
          warnings.push({ event, fields: { ...fields } });
        },
      };
      const { app, services } = await testApp({ state, logger });
      const client = await projectClient(app);
      // Deferred (an engine default, not promoted): its first call activates it as well as counting it.
      const { processId } = await client.spawn({ engineDefault: ["doc_getting_started"] });

      const res = await client.invoke(processId, "doc_getting_started");
      expect(res.status).toBe(200);
      expect(typeof res.body.value).toBe("string");
      const lost = warnings.filter((entry) => entry.event === "process.bookkeeping_failed");
      expect(lost).toHaveLength(1);
      expect(lost[0]?.fields).toMatchObject({ processId, tool: "doc_getting_started" });
      // The count is written behind the answer: a refusal is reported with its reason and resent
      // later; closing (a shutdown) while the store is still away reports the count lost.
      expect(await services.usage.flush({ withinMs: 100 })).toBe(false);
      const retrying = warnings.filter((entry) => entry.event === "usage.write_retrying");
      expect(retrying).toHaveLength(1);
      expect(retrying[0]?.fields).toMatchObject({
        tool: "doc_getting_started",
        calls: 1,
        reason: "store_unavailable",
      });
      await services.usage.close(0);
      const uncounted = warnings.filter((entry) => entry.event === "usage.write_failed");
      expect(uncounted).toHaveLength(1);
      expect(uncounted[0]?.fields).toMatchObject({
        tool: "doc_getting_started",
        calls: 1,
        reason: "shutdown",
      });
    });
  });
});
