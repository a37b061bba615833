import { SqliteStateStore } from "@vance/adapters/sqlite";
import { type StateStore, ToolUsage } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A SQLite state store whose usage writes are counted. */
function countedState() {
  const state = new SqliteStateStore(":memory:");
  cleanups.push(() => state.close());
  const writes = { count: 0 };
  const addToolUsage = state.addToolUsage.bind(state);
  state.addToolUsage = async (key, delta) => {
    writes.count++;
    await addToolUsage(key, delta);
  };
  return { state, writes };
}

const scope = { tenant: "acme", project: "shop", role: "default" };

describe("ToolUsage written behind the answer", () => {
  it("loses no count: 300 concurrent uses of three tools, flushed at any point, add up exactly, in fewer writes", async () => {
    const { state, writes } = countedState();
    const flushes: (() => void)[] = [];
    const usage = new ToolUsage(state, { schedule: (flush) => flushes.push(flush) });
    const tools = ["alpha", "beta", "gamma"];
    const uses = Array.from({ length: 300 }, (_, i) => {
      const tool = tools[i % 3]!;
      return i % 10 === 0
        ? usage.countDiscoveryHit(scope, tool, 1_000 + i)
        : usage.countCall(scope, tool, 1_000 + i);
    });
    await Promise.all(uses.slice(0, 150));
    // A scheduled flush runs while more uses arrive; the rest wait for the one the shutdown makes.
    for (const flush of flushes.splice(0)) flush();
    await Promise.all(uses.slice(150));
    await usage.flush();
    const rows = await state.listToolUsage("acme", "shop");
    const total = (field: "calls" | "discoveryHits") => rows.reduce((sum, row) => sum + row[field], 0);
    expect(total("calls")).toBe(270);
    expect(total("discoveryHits")).toBe(30);
    expect(rows.map((row) => [row.tool, row.lastUsedAt])).toEqual([
      ["alpha", 1_297],
      ["beta", 1_298],
      ["gamma", 1_299],
    ]);
    expect(writes.count).toBeLessThanOrEqual(6);
  });

  it("a read of demand or of the insights table sees every use counted before it, flushed or not", async () => {
    const { state, writes } = countedState();
    const usage = new ToolUsage(state, { schedule: () => {} });
    await usage.countCall(scope, "alpha", 1_000);
    await usage.countCall(scope, "alpha", 1_001, 2);
    // Demand counts the queued uses without writing them (a manifest waits for no write).
    expect((await usage.demand(scope)).get("alpha")).toBe(3);
    expect(writes.count).toBe(0);
    await usage.flush();
    // Written: read again from the store, counted once.
    expect((await usage.demand(scope)).get("alpha")).toBe(3);
    await usage.countDiscoveryHit(scope, "beta", 1_002);
    expect(
      (await usage.byRole("acme", "shop")).roles[0]?.tools.map((tool) => [
        tool.name,
        tool.calls,
        tool.discoveryHits,
      ]),
    ).toEqual([
      ["alpha", 3, 0],
      ["beta", 0, 1],
    ]);
  });

  it("a refused write is reported with the counts it held, and the next uses are written again", async () => {
    const { state } = countedState();
    let refuse = true;
    const addToolUsage = state.addToolUsage.bind(state);
    const flaky: Pick<StateStore, "addToolUsage" | "listToolUsage"> = {
      addToolUsage: async (key, delta) => {
        if (refuse) throw new Error("state store down");
        await addToolUsage(key, delta);
      },
      listToolUsage: (tenant, project, role) => state.listToolUsage(tenant, project, role),
    };
    const warnings: Record<string, unknown>[] = [];
    const usage = new ToolUsage(flaky, {
      schedule: () => {},
      logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
    });
    await usage.countCall(scope, "alpha", 1_000);
    await usage.countCall(scope, "alpha", 1_001);
    await usage.flush();
    expect(warnings).toEqual([
      expect.objectContaining({ event: "usage.write_failed", tool: "alpha", calls: 2, discoveryHits: 0 }),
    ]);
    refuse = false;
    await usage.countCall(scope, "alpha", 1_002);
    await usage.flush();
    expect((await state.listToolUsage("acme", "shop"))[0]).toMatchObject({ tool: "alpha", calls: 1 });
  });
});

describe("usage over HTTP, written behind the answers", () => {
  it("20 concurrent invokes in a process count 20 calls", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const { processId } = await client.spawn({ engineDefault: ["doc_getting_started"] });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => client.invoke(processId, "doc_getting_started")),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const insights = await client.call("GET", "/insights/tool-usage");
    expect(insights.body).toMatchObject({
      roles: [{ role: "default", tools: [{ name: "doc_getting_started", calls: 20, discoveryHits: 0 }] }],
    });
  });

  it("a demand read that a written use overtook is answered but not kept: the next demand reads the store again", async () => {
    const { state } = countedState();
    const flushes: (() => void)[] = [];
    const usage = new ToolUsage(state, { schedule: (flush) => flushes.push(flush), demandTtlMs: 60_000 });
    // The read starts before the use is counted and answers only after its write finished.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const listToolUsage = state.listToolUsage.bind(state);
    let reads = 0;
    state.listToolUsage = async (...args) => {
      reads++;
      const rows = await listToolUsage(...args);
      if (reads === 1) await gate;
      return rows;
    };
    const slowRead = usage.demand(scope);
    await usage.countCall(scope, "alpha", 1_000);
    await usage.flush();
    release();
    expect((await slowRead).get("alpha") ?? 0).toBe(0);
    expect((await usage.demand(scope)).get("alpha")).toBe(1);
    expect(reads).toBe(2);
  });
});
