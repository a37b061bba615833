import { SqliteStateStore } from "@vance/adapters/sqlite";
import { type StateStore, StoreUnavailableError, ToolUsage } from "@vance/core";
import { afterEach, describe, expect, it, vi } from "vitest";
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

  it("a refused write is resent with the same token and counts until acknowledged; uses meanwhile follow as one more write", async () => {
    const { state } = countedState();
    let refuse = 2;
    const sends: { token: string | undefined; calls: number | undefined }[] = [];
    const addToolUsage = state.addToolUsage.bind(state);
    const flaky: Pick<StateStore, "addToolUsage" | "listToolUsage"> = {
      addToolUsage: async (key, delta) => {
        sends.push({ token: delta.token, calls: delta.calls });
        if (refuse-- > 0) throw new StoreUnavailableError("state store", "no answer within 3000 ms");
        await addToolUsage(key, delta);
      },
      listToolUsage: (tenant, project, role) => state.listToolUsage(tenant, project, role),
    };
    const warnings: Record<string, unknown>[] = [];
    const resends: (() => void)[] = [];
    const usage = new ToolUsage(flaky, {
      schedule: () => {},
      retryLater: (resend) => resends.push(resend),
      logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
    });
    await usage.countCall(scope, "alpha", 1_000);
    await usage.countCall(scope, "alpha", 1_001);
    const flushed = usage.flush();
    await vi.waitFor(() => expect(resends).toHaveLength(1));
    // A use counted while the increment waits joins the next one, not the one whose token is out.
    await usage.countCall(scope, "alpha", 1_002);
    resends.shift()!();
    await vi.waitFor(() => expect(resends).toHaveLength(1));
    resends.shift()!();
    expect(await flushed).toBe(true);
    await usage.flush();
    expect(sends.map((send) => send.calls)).toEqual([2, 2, 2, 1]);
    expect(new Set(sends.slice(0, 3).map((send) => send.token)).size).toBe(1);
    expect(sends[3]?.token).not.toBe(sends[0]?.token);
    expect((await state.listToolUsage("acme", "shop"))[0]).toMatchObject({ tool: "alpha", calls: 3 });
    // One report per increment, at its first refusal, with the reason; nothing was lost.
    expect(warnings).toEqual([
      expect.objectContaining({
        event: "usage.write_retrying",
        tool: "alpha",
        calls: 2,
        reason: "store_unavailable",
        error: expect.stringContaining("no answer within 3000 ms"),
      }),
    ]);
  });

  it("an increment applied whose answer was lost is resent with its token and counted once (SQLite)", async () => {
    const { state } = countedState();
    let loseAnswer = true;
    const addToolUsage = state.addToolUsage.bind(state);
    const lossy: Pick<StateStore, "addToolUsage" | "listToolUsage"> = {
      addToolUsage: async (key, delta) => {
        await addToolUsage(key, delta);
        if (loseAnswer) {
          loseAnswer = false;
          throw new StoreUnavailableError("state store", "connection reset");
        }
      },
      listToolUsage: (tenant, project, role) => state.listToolUsage(tenant, project, role),
    };
    const usage = new ToolUsage(lossy, { schedule: () => {}, retryDelayMs: () => 1 });
    await usage.countCall(scope, "alpha", 1_000, 4);
    expect(await usage.flush()).toBe(true);
    expect((await state.listToolUsage("acme", "shop"))[0]).toMatchObject({ tool: "alpha", calls: 4 });
  });

  it("an increment unacknowledged at the end of the token window is reported lost with its reason, and never resent", async () => {
    let clock = 1_000;
    let sends = 0;
    const down: Pick<StateStore, "addToolUsage" | "listToolUsage"> = {
      addToolUsage: async () => {
        sends++;
        throw new StoreUnavailableError("state store", "no answer within 3000 ms");
      },
      listToolUsage: async () => [],
    };
    const warnings: Record<string, unknown>[] = [];
    const resends: (() => void)[] = [];
    const usage = new ToolUsage(down, {
      now: () => clock,
      schedule: () => {},
      retryWindowMs: 60_000,
      retryDelayMs: () => 20_000,
      retryLater: (resend) => resends.push(resend),
      logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
    });
    await usage.countDiscoveryHit(scope, "alpha", 1_000);
    const flushed = usage.flush();
    for (let i = 0; i < 2; i++) {
      await vi.waitFor(() => expect(resends).toHaveLength(1));
      clock += 20_000;
      resends.shift()!();
    }
    // The third refusal comes 40 s after the first send: a resend 20 s later would pass the window.
    expect(await flushed).toBe(true);
    expect(sends).toBe(3);
    expect(resends).toHaveLength(0);
    expect(warnings.map((w) => [w.event, w.reason])).toEqual([
      ["usage.write_retrying", "store_unavailable"],
      ["usage.write_failed", "retry_window_passed"],
    ]);
    expect(warnings[1]).toMatchObject({
      tool: "alpha",
      discoveryHits: 1,
      error: expect.stringMatching(/may have landed/),
    });
    expect(usage.backlog).toBe(0);
  });

  it("holds at most maxBacklogTools tools unacknowledged: a use of one more is reported lost, never silently", async () => {
    const down: Pick<StateStore, "addToolUsage" | "listToolUsage"> = {
      addToolUsage: async () => {
        throw new StoreUnavailableError("state store", "paused");
      },
      listToolUsage: async () => [],
    };
    const warnings: Record<string, unknown>[] = [];
    const usage = new ToolUsage(down, {
      schedule: () => {},
      maxBacklogTools: 2,
      retryLater: () => {},
      logger: { info() {}, warn: (event, fields) => warnings.push({ event, ...fields }) },
    });
    // Uses of held tools coalesce and take no more room.
    for (const tool of ["alpha", "beta", "alpha", "beta"]) await usage.countCall(scope, tool, 1_000);
    await usage.countCall(scope, "gamma", 1_000);
    expect(usage.backlog).toBe(2);
    expect(warnings).toEqual([
      expect.objectContaining({
        event: "usage.write_failed",
        tool: "gamma",
        calls: 1,
        reason: "backlog_full",
      }),
    ]);
    // A flush bounded in time says what is left; closing reports it lost.
    expect(await usage.flush({ withinMs: 50 })).toBe(false);
    expect(await usage.close(0)).toBe(false);
    expect(warnings.filter((w) => w.reason === "shutdown").map((w) => [w.tool, w.calls])).toEqual([
      ["alpha", 2],
      ["beta", 2],
    ]);
    expect(usage.backlog).toBe(0);
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
