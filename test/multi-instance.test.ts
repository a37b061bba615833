import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { createS3Client } from "@vance/adapters/aws";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { type DynamoLocalServer, freePort, startDynamoLocal, waitUntilReady } from "./setup/dynamodb";
import { type AwsLocalStores, type Instances, prepareAwsLocal, startInstances } from "./support/instances";
import { type S3ConditionalProxy, startS3ConditionalProxy } from "./support/s3-conditional-proxy";
import { S3RVER_CREDENTIALS } from "./support/s3rver";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy";

/**
 * Issue 37: three instances of the service (`VANCE_STORE=s3`, `VANCE_STATE=dynamodb`) over the
 * suite's s3rver — behind a proxy that enforces S3's conditional-write rules, which s3rver
 * ignores — and a DynamoDB Local of this file's own (a paused or unreachable DynamoDB must not
 * stall the other files), reached through a TCP proxy that can lose its traffic.
 */

const CLIENTS = 12;
const INVOKES = 120;
const LOOKUPS = 36;
const TOOL = "doc_getting_started";

let dynamo: DynamoLocalServer;
let proxy: TcpProxy;
let instances: Instances;
let stores: AwsLocalStores;
let s3Proxy: S3ConditionalProxy;
let headClient: S3Client;

beforeAll(async () => {
  const port = await freePort();
  dynamo = startDynamoLocal(port);
  const direct = `http://127.0.0.1:${port}`;
  await waitUntilReady(direct, dynamo);
  proxy = await startTcpProxy(direct);
  stores = await prepareAwsLocal({ s3Endpoint: inject("s3Endpoint"), dynamoEndpoint: direct });
  headClient = createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
    forcePathStyle: true,
  });
  s3Proxy = await startS3ConditionalProxy(inject("s3Endpoint"), headClient);
  instances = await startInstances(3, {
    ...stores,
    s3Endpoint: s3Proxy.endpoint,
    dynamoEndpoint: proxy.endpoint,
  });
}, 180_000);

afterAll(async () => {
  await instances?.stop();
  await s3Proxy?.close();
  headClient?.destroy();
  await proxy?.close();
  await dynamo?.stop();
}, 60_000);

/** One request to instance `i % 3` of the project, with the token every instance accepts; `yaml` sends a YAML body. */
async function call(
  i: number,
  project: string,
  method: string,
  path: string,
  body?: unknown,
  yaml?: string,
  extra: Record<string, string> = {},
) {
  const url = `${instances.urls[i % instances.urls.length]}/v1/tenants/acme/projects/${project}${path}`;
  const res = await fetch(url, {
    method,
    headers: {
      ...extra,
      authorization: `Bearer ${instances.token}`,
      ...(yaml !== undefined
        ? { "content-type": "application/yaml" }
        : body === undefined
          ? {}
          : { "content-type": "application/json" }),
    },
    ...(yaml !== undefined ? { body: yaml } : body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    propagation: res.headers.get("x-vance-propagation"),
    body: (text ? JSON.parse(text) : null) as Record<string, unknown>,
  };
}

/** DynamoDB Local's process group stopped (SIGSTOP) for `ms`, then continued. */
async function pauseDynamo(ms: number): Promise<void> {
  const group = -dynamo.child.pid!;
  process.kill(group, "SIGSTOP");
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    process.kill(group, "SIGCONT");
  }
}

/**
 * 12 clients send INVOKES invokes and LOOKUPS `tool_description` calls of one process, round
 * robin over the instances; `fault` starts once a third of them answered. Answers the number of
 * each that were acknowledged (200).
 */
async function load(project: string, fault?: () => Promise<void>) {
  const spawned = await call(0, project, "POST", "/processes", { models: [], engineDefault: [TOOL] });
  expect(spawned.status).toBe(201);
  const processId = String(spawned.body.processId);
  // The look-ups spread evenly among the invokes: job i is one when the share of them steps up.
  const total = INVOKES + LOOKUPS;
  const lookup = { name: "tool_description", params: { names: [TOOL] } };
  const sequence = Array.from({ length: total }, (_, i) =>
    Math.floor(((i + 1) * LOOKUPS) / total) > Math.floor((i * LOOKUPS) / total)
      ? lookup
      : { name: TOOL, params: {} },
  );
  const statuses = new Map<string, number[]>();
  let next = 0;
  let answered = 0;
  let faulted: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < sequence.length; i = next++) {
        const job = sequence[i]!;
        const res = await call(i, project, "POST", `/processes/${processId}/invoke`, job);
        statuses.set(job.name, [...(statuses.get(job.name) ?? []), res.status]);
        if (++answered === Math.floor(sequence.length / 3) && fault) faulted = fault();
      }
    }),
  );
  await faulted;
  const ok = (name: string) => (statuses.get(name) ?? []).filter((status) => status === 200).length;
  return { invokes: ok(TOOL), lookups: ok("tool_description"), statuses };
}

/** The project's counters of TOOL as instance `i` answers them (it flushes what it holds first). */
async function counted(i: number, project: string) {
  const insights = await call(i, project, "GET", "/insights/tool-usage");
  if (insights.status !== 200) return { calls: -1, discoveryHits: -1 };
  const roles = insights.body.roles as { tools: { name: string; calls: number; discoveryHits: number }[] }[];
  const row = roles.flatMap((role) => role.tools).find((tool) => tool.name === TOOL);
  return { calls: row?.calls ?? 0, discoveryHits: row?.discoveryHits ?? 0 };
}

/** Waits until the counters reach the acknowledged calls, then reads them on every instance once more. */
async function expectCountedExactly(project: string, expected: { invokes: number; lookups: number }) {
  const want = { calls: expected.invokes, discoveryHits: expected.lookups };
  await vi.waitFor(
    async () => {
      // Each instance flushes what it holds before it answers; the last read sees all three.
      for (const i of [0, 1, 2]) await counted(i, project);
      const now = await counted(0, project);
      expect(now.calls).toBeGreaterThanOrEqual(want.calls);
      expect(now.discoveryHits).toBeGreaterThanOrEqual(want.discoveryHits);
    },
    { timeout: 60_000, interval: 500 },
  );
  for (const i of [0, 1, 2]) expect(await counted(i, project)).toEqual(want);
  const lost = instances.logs().filter((line) => line.event === "usage.write_failed");
  expect(lost).toEqual([]);
}

/** What the fault did, for the report: answers other than 200, and increments that had to be resent. */
function figures(project: string, acknowledged: Awaited<ReturnType<typeof load>>): string {
  const refused = [...acknowledged.statuses.values()].flat().filter((status) => status !== 200).length;
  const resent = instances
    .logs()
    .filter((line) => line.event === "usage.write_retrying" && line.project === project).length;
  return JSON.stringify({ invokes: acknowledged.invokes, lookups: acknowledged.lookups, refused, resent });
}

describe("usage counted exactly once across three instances", () => {
  it("12 concurrent clients: every acknowledged invoke and look-up counted once", async () => {
    const acknowledged = await load("counts-plain");
    expect(acknowledged).toMatchObject({ invokes: INVOKES, lookups: LOOKUPS });
    await expectCountedExactly("counts-plain", acknowledged);
  }, 120_000);

  it("with DynamoDB paused (SIGSTOP) for 2 s during the load", async () => {
    const acknowledged = await load("counts-paused", () => pauseDynamo(2_000));
    console.log("paused DynamoDB:", figures("counts-paused", acknowledged));
    expect(acknowledged.invokes + acknowledged.lookups).toBeGreaterThan(0);
    await expectCountedExactly("counts-paused", acknowledged);
  }, 120_000);

  it("with DynamoDB's traffic lost for 2 s during the load (requests and answers dropped by a proxy)", async () => {
    const acknowledged = await load("counts-dropped", () => proxy.drop(2_000));
    console.log("dropped DynamoDB:", figures("counts-dropped", acknowledged));
    expect(acknowledged.invokes + acknowledged.lookups).toBeGreaterThan(0);
    await expectCountedExactly("counts-dropped", acknowledged);
  }, 120_000);
});

const WRITES = 8;
const doc = (version: string) =>
  `type: doc_lookup\ndescription: ${version}\nparameters:\n  path: documents/getting_started.md\n`;

/** A tool's description as instance `i` answers it (null when it answers no 200). */
async function described(i: number, project: string, name: string): Promise<string | null> {
  const res = await call(i, project, "GET", `/tools/${name}`);
  return res.status === 200 ? String((res.body.config as { description: string }).description) : null;
}

/** The tool's document as S3 holds it, read past every instance. */
async function storedVersion(project: string, name: string): Promise<string | null> {
  const s3 = createS3Client({
    endpoint: inject("s3Endpoint"),
    region: "us-east-1",
    credentials: S3RVER_CREDENTIALS,
    forcePathStyle: true,
  });
  try {
    const object = await s3.send(
      new GetObjectCommand({
        Bucket: stores.documentsBucket,
        Key: `acme/${project}/server-tools/${name}.yaml`,
      }),
    );
    return /description: (.+)/.exec((await object.Body?.transformToString()) ?? "")?.[1] ?? null;
  } finally {
    s3.destroy();
  }
}

/**
 * WRITES tools written once ("v1") and read on every instance; then, while `fault` runs, each is
 * written again ("v2") through instance i % 3 at its own moment of the fault. Each answer must be
 * honest: a 2xx write is read as v2 on every instance once DynamoDB answers again; a 5xx write is
 * not in S3 (nothing to show). Answers the outcomes and how long after the fault the last
 * instance still showed v1.
 */
async function writesDuring(project: string, faultMs: number, fault: (ms: number) => Promise<void>) {
  const names = Array.from({ length: WRITES }, (_, i) => `written_${i}`);
  for (const name of names) {
    const res = await call(0, project, "PUT", `/tools/${name}`, undefined, doc("v1"));
    expect(res.status).toBe(201);
  }
  for (const name of names) for (const i of [0, 1, 2]) expect(await described(i, project, name)).toBe("v1");
  const faulted = fault(faultMs);
  // The writes start spread over the fault, so some meet it before S3 and some between S3 and DynamoDB.
  const answers = await Promise.all(
    names.map(async (name, i) => {
      await new Promise((resolve) => setTimeout(resolve, (faultMs * i) / WRITES));
      const res = await call(i, project, "PUT", `/tools/${name}`, undefined, doc("v2"));
      return { name, status: res.status, pending: res.propagation === "pending" };
    }),
  );
  await faulted;
  const recovered = performance.now();
  let staleMs = 0;
  for (const { name, status } of answers) {
    if (status < 300) {
      for (const i of [0, 1, 2]) {
        await vi.waitFor(async () => expect(await described(i, project, name)).toBe("v2"), {
          timeout: 30_000,
          interval: 50,
        });
        staleMs = Math.max(staleMs, performance.now() - recovered);
      }
    } else {
      expect(status).toBe(503);
      expect(await storedVersion(project, name)).toBe("v1");
      for (const i of [0, 1, 2]) expect(await described(i, project, name)).toBe("v1");
    }
  }
  return {
    stored: answers.filter((a) => a.status < 300).length,
    pending: answers.filter((a) => a.pending).length,
    refused: answers.filter((a) => a.status >= 300).length,
    staleMs: Math.round(staleMs),
  };
}

describe("writes during a DynamoDB outage across three instances: a 2xx is stored and seen everywhere, a 5xx changed nothing", () => {
  it("with DynamoDB paused (SIGSTOP) for 4 s", async () => {
    const outcome = await writesDuring("writes-paused", 4_000, pauseDynamo);
    console.log("writes, DynamoDB paused 4 s:", JSON.stringify(outcome));
    expect(outcome.stored + outcome.refused).toBe(WRITES);
  }, 120_000);

  it("with DynamoDB's traffic lost for 4 s (requests and answers dropped)", async () => {
    const outcome = await writesDuring("writes-dropped", 4_000, (ms) => proxy.drop(ms));
    console.log("writes, DynamoDB traffic lost 4 s:", JSON.stringify(outcome));
    expect(outcome.stored + outcome.refused).toBe(WRITES);
  }, 120_000);
});

describe("conditional writes across three instances, through an S3 that enforces If-Match and If-None-Match", () => {
  const RACERS = 12;

  it("12 concurrent creates of one name (If-None-Match: *) over three instances: one 201, the rest 412", async () => {
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        call(i, "races", "PUT", "/tools/raced", undefined, doc(`creator ${i}`), { "if-none-match": "*" }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, ...Array(RACERS - 1).fill(412)]);
    const winner = answers.findIndex((answer) => answer.status === 201);
    for (const i of [0, 1, 2]) expect(await described(i, "races", "raced")).toBe(`creator ${winner}`);
  }, 60_000);

  it("a create whose S3 answer arrives after the client's timeout answers 201: the resent PUT's 412 is its own write", async () => {
    // The first PUT lands in S3, but its answer comes 5 s late: past the instance's per-attempt
    // timeout (half the 3 s store deadline), so the SDK sends the same PUT again, which finds the
    // key its own first attempt wrote.
    s3Proxy.holdNextAnswer(`acme/late/server-tools/late_create.yaml`, 5_000);
    const refusedBefore = s3Proxy.refused;
    const created = await call(0, "late", "PUT", "/tools/late_create", undefined, doc("v1"), {
      "if-none-match": "*",
    });
    expect(s3Proxy.held).toBeGreaterThanOrEqual(1);
    expect(s3Proxy.refused).toBeGreaterThan(refusedBefore);
    expect(created.status).toBe(201);
    expect(await storedVersion("late", "late_create")).toBe("v1");
    for (const i of [0, 1, 2]) expect(await described(i, "late", "late_create")).toBe("v1");
    // Someone else's create of the same name is still refused.
    const second = await call(1, "late", "PUT", "/tools/late_create", undefined, doc("v2"), {
      "if-none-match": "*",
    });
    expect(second.status).toBe(412);
  }, 60_000);

  it("12 concurrent writes with one If-Match over three instances: one 200, the rest 412, and every instance reads the winner", async () => {
    const created = await call(0, "races", "PUT", "/tools/matched", undefined, doc("v0"));
    expect(created.status).toBe(201);
    const etag = String(created.body.etag);
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        call(i, "races", "PUT", "/tools/matched", undefined, doc(`writer ${i}`), { "if-match": etag }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...Array(RACERS - 1).fill(412)]);
    const winner = answers.findIndex((answer) => answer.status === 200);
    for (const i of [0, 1, 2]) expect(await described(i, "races", "matched")).toBe(`writer ${winner}`);
    // The stale ETag now loses everywhere, deletes included.
    const stale = await call(1, "races", "DELETE", "/tools/matched", undefined, undefined, {
      "if-match": etag,
    });
    expect(stale.status).toBe(412);
  }, 60_000);
});
