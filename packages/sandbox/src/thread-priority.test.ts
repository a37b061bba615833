import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorkerBundle } from "../build-worker";
import { DEFAULT_WORKER_NICE } from "./pool-defaults";
import { ScriptPool } from "./script-pool";
import { TaskPool } from "./task-pool";

/** The nice value of each thread of this process, by thread id (Linux's /proc). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    // Fields after the command's closing parenthesis start at field 3 (state); nice is field 19.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

const count = (nice: number) => [...threadNices().values()].filter((value) => value === nice).length;

describe.runIf(process.platform === "linux")("worker threads yield the CPU to the serving thread", () => {
  let dir: string;
  let taskWorker: URL;
  const warnings: unknown[] = [];
  const logger = { info() {}, warn: (event: string, fields?: unknown) => warnings.push({ event, fields }) };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vance-thread-priority-"));
    const bundle = join(dir, "worker.mjs");
    await buildWorkerBundle(fileURLToPath(new URL("./task-pool.fixture.ts", import.meta.url)), bundle);
    taskWorker = pathToFileURL(bundle);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("each script thread runs 10 nice levels below the serving thread, which keeps its own", async () => {
    expect(count(10)).toBe(0);
    const pool = await ScriptPool.create({ warmWorkers: 3, workerNice: DEFAULT_WORKER_NICE, logger });
    try {
      expect(count(10)).toBe(3);
      expect(threadNices().get(process.pid), "the serving (main) thread").toBe(0);
      // A run past its deadline has its thread terminated; the thread that replaces it yields too.
      expect(await pool.run({ source: "for (;;) {}", inputs: {}, timeoutMs: 50 })).toMatchObject({
        error: "TimeoutError",
      });
      expect(await pool.run({ source: "a + b", inputs: { a: 1, b: 2 }, timeoutMs: 5_000 })).toEqual({
        ok: true,
        value: 3,
      });
      // Once the terminated thread is gone and its replacement started: every thread of the pool
      // yields (the one that ran stays idle beside the warm three until it retires).
      await expect.poll(() => pool.stats().workers.starting).toBe(0);
      const { idle, started, terminated } = pool.stats().workers;
      expect(idle).toBe(started - terminated);
      expect(idle).toBeGreaterThanOrEqual(3);
      await expect.poll(() => count(10)).toBe(idle);
      expect(warnings).toEqual([]);
    } finally {
      await pool.close();
    }
    await expect.poll(() => count(10)).toBe(0);
  });

  it("each task thread runs workerNice levels below; unset leaves every thread as it was", async () => {
    const niced = await TaskPool.create({ workerUrl: taskWorker, warmWorkers: 2, workerNice: 7, logger });
    const plain = await ScriptPool.create({ warmWorkers: 2 });
    const plainTasks = await TaskPool.create({ workerUrl: taskWorker, warmWorkers: 2 });
    try {
      expect(count(7)).toBe(2);
      expect([...threadNices().values()].filter((nice) => nice !== 0 && nice !== 7)).toEqual([]);
      expect(await niced.run({ task: "echo", input: 1, tenant: "acme" })).toEqual({
        ok: true,
        value: { echoed: 1 },
      });
      expect(warnings).toEqual([]);
    } finally {
      niced.close();
      plainTasks.close();
      await plain.close();
    }
  });

  it("refuses a nice offset outside 0..19", async () => {
    await expect(ScriptPool.create({ workerNice: 20 })).rejects.toThrow(
      "workerNice must be a whole number from 0 to 19, got 20",
    );
    await expect(TaskPool.create({ workerUrl: taskWorker, workerNice: -1 })).rejects.toThrow(
      "workerNice must be a whole number from 0 to 19, got -1",
    );
  });
});
