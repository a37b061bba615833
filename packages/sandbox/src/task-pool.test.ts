import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildWorkerBundle } from "../build-worker";
import { TaskPool } from "./task-pool";

describe("TaskPool", () => {
  let dir: string;
  let workerUrl: URL;
  let pool: TaskPool | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vance-task-pool-"));
    const bundle = join(dir, "worker.mjs");
    await buildWorkerBundle(fileURLToPath(new URL("./task-pool.fixture.ts", import.meta.url)), bundle);
    workerUrl = pathToFileURL(bundle);
  });

  afterEach(() => pool?.close());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers a task's value, and a thrown error as TaskError with its message", async () => {
    pool = await TaskPool.create({ workerUrl });
    expect(await pool.run({ task: "echo", input: [1, "a"], tenant: "acme" })).toEqual({
      ok: true,
      value: { echoed: [1, "a"] },
    });
    expect(await pool.run({ task: "fail", input: "x", tenant: "acme" })).toEqual({
      ok: false,
      error: "TaskError",
      message: "failed on x",
    });
    expect(await pool.run({ task: "nothing", input: null, tenant: "acme" })).toMatchObject({
      error: "TaskError",
    });
  });

  it("terminates a task at its deadline and answers the next one on a fresh thread", async () => {
    pool = await TaskPool.create({ workerUrl, what: "spinning" });
    expect(await pool.run({ task: "spin", input: null, tenant: "acme", timeoutMs: 100 })).toEqual({
      ok: false,
      error: "TimeoutError",
      message: "spinning did not finish within 100 ms, so it was stopped",
    });
    expect(await pool.run({ task: "echo", input: 2, tenant: "acme" })).toEqual({
      ok: true,
      value: { echoed: 2 },
    });
    expect(pool.stats()).toMatchObject({ timedOut: 1, terminated: 1 });
  });

  it("a tenant whose slot and queue are taken gets Busy at once, while another tenant is answered", async () => {
    pool = await TaskPool.create({ workerUrl, maxRunsPerTenant: 1, maxQueuedPerTenant: 0, maxWorkers: 2 });
    const stop = new AbortController();
    const spinning = pool.run({ task: "spin", input: null, tenant: "flood", signal: stop.signal });
    expect(await pool.run({ task: "echo", input: 1, tenant: "flood" })).toMatchObject({
      ok: false,
      error: "Busy",
    });
    expect(await pool.run({ task: "echo", input: 3, tenant: "other" })).toEqual({
      ok: true,
      value: { echoed: 3 },
    });
    stop.abort();
    expect(await spinning).toMatchObject({ ok: false, error: "Cancelled" });
    expect(pool.stats()).toMatchObject({ busy: 1 });
  });
});
