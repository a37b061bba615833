import { afterEach, describe, expect, it } from "vitest";
import { type CallTool, type ScriptOutcome, ScriptPool, type ToolCallOutcome } from "./index";

// What a hostile script can do to the thread that serves everyone: nothing. Each attack ends in
// its own bounded outcome while the main thread's event loop keeps turning.

const CATASTROPHIC_REGEX = "/^(a+)+$/.test('a'.repeat(40) + '!')";

const pools: ScriptPool[] = [];
async function newPool(options: Parameters<typeof ScriptPool.create>[0] = {}) {
  const pool = await ScriptPool.create({ warmWorkers: 2, ...options });
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

/** Waits for a state; the bound only ends a wait that never comes (a loaded machine is slow, not wrong). */
async function until(condition: () => boolean, ms = 50_000): Promise<void> {
  const end = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a script's worst", () => {
  it("ends a catastrophic regex (which QuickJS never interrupts) at its deadline, off the main thread", async () => {
    const pool = await newPool();
    const result = await pool.run({ source: CATASTROPHIC_REGEX, inputs: {}, timeoutMs: 500 });
    expect(result).toEqual({
      ok: false,
      error: "TimeoutError",
      message: "script exceeded its deadline of 500 ms",
    });
    // The main thread ran no guest code: the regex's own thread was ended.
    expect(pool.stats().workers.terminated).toBe(1);
    expect(await pool.run({ source: "'still here'", inputs: {}, timeoutMs: 1_000 })).toEqual({
      ok: true,
      value: "still here",
    });
  });

  it("ends a catastrophic regex reached through a sibling call's answer too", async () => {
    const pool = await newPool();
    const callTool: CallTool = async () => ({ value: `${"a".repeat(40)}!` });
    const outcome = await pool.run({
      source: "/^(a+)+$/.test(vance.tools.call('text', {}))",
      inputs: {},
      timeoutMs: 300,
      callTool,
    });
    expect(outcome).toMatchObject({ ok: false, error: "TimeoutError" });
  });

  it("lets another tenant's runs through while one tenant floods the pool with endless loops", async () => {
    // Two endless loops hold the attacker's share (two more wait): as many threads as the machine's
    // cores spin while the victim runs, not twice as many.
    const pool = await newPool({ maxRunsPerTenant: 2, maxQueuedPerTenant: 2 });
    // The flood's caller goes away once the victim is done: whatever still runs or waits ends then.
    const caller = new AbortController();
    const flood = Array.from({ length: 100 }, () =>
      pool.run({
        source: "while (true) {}",
        inputs: {},
        timeoutMs: 30_000,
        tenant: "attacker",
        signal: caller.signal,
      }),
    );
    const victim: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      victim.push(
        await pool.run({ source: "a + b", inputs: { a: i, b: 1 }, timeoutMs: 1_000, tenant: "victim" }),
      );
    }
    expect(victim).toEqual(Array.from({ length: 20 }, (_, i) => ({ ok: true, value: i + 1 })));
    caller.abort();
    const outcomes = await Promise.all(flood);
    const count = (error: string) =>
      outcomes.filter((outcome) => !outcome.ok && outcome.error === error).length;
    // At most 2 ran and 2 waited; the other 96 or more were refused at once (Busy). How the 4
    // ended depends on the machine's load (the caller leaving: Cancelled; a wait for a slot that
    // ran out first: Busy; the tenant's worker time spent: RateLimited): none of them succeeded.
    expect(outcomes.filter((outcome) => outcome.ok)).toEqual([]);
    expect(count("Busy")).toBeGreaterThanOrEqual(96);
    expect(count("Cancelled") + count("Busy") + count("RateLimited")).toBe(100);
  });

  it("refuses a nested run with Busy when no thread is free, instead of waiting", async () => {
    const pool = await newPool({ maxWorkers: 1 });
    const callTool: CallTool = (_name, params, signal) =>
      pool
        .run({ source: "x * 2", inputs: { x: params }, timeoutMs: 1_000, tenant: "t", nested: true, signal })
        .then((outcome): ToolCallOutcome => (outcome.ok ? { value: outcome.value } : outcome));
    const outcome = await pool.run({
      source: "try { vance.tools.call('double', 21) } catch (e) { e.name + ': ' + e.message }",
      inputs: {},
      timeoutMs: 2_000,
      tenant: "t",
      callTool,
    });
    // The caller holds the only thread, which is all of its tenant's share too.
    expect(outcome).toEqual({
      ok: true,
      value: "Busy: tenant 't' has too many scripts running; try again shortly",
    });
  });

  it("runs a caller's sibling runs under its root's slot: four callers of a scripted sibling all finish", async () => {
    const pool = await newPool({ maxRunsPerTenant: 2 });
    const callTool: CallTool = (_name, params, signal) =>
      pool
        .run({ source: "x + 1", inputs: { x: params }, timeoutMs: 20_000, tenant: "t", nested: true, signal })
        .then((outcome): ToolCallOutcome => (outcome.ok ? { value: outcome.value } : outcome));
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        pool.run({
          source: "vance.tools.call('inc', i) * 10",
          inputs: { i },
          // Only a deadlock would need the deadline (two callers wait for the first two's slots,
          // each of which starts a thread for its sibling): 2 s ran out at load 30 on 2 cores.
          timeoutMs: 20_000,
          tenant: "t",
          callTool,
        }),
      ),
    );
    expect(outcomes).toEqual([20, 30, 40, 50].map((value) => ({ ok: true, value })));
  });

  it("never lets one tenant's nesting hold more than its share of the threads: the rest fail fast with Busy and another tenant runs", async () => {
    const pool = await newPool({ maxWorkers: 8, maxRunsPerTenant: 2, maxThreadsPerTenant: 3 });
    let refusedNested = 0;
    let mostHeld = 0;
    // Each level calls itself again, and retries when refused, until its deadline.
    const callTool: CallTool = async (_name, params, signal) => {
      const depth = params as number;
      const outcome = await pool.run({
        source:
          "for (;;) { try { vance.tools.call('self', depth + 1) } catch (e) { if (e.name !== 'Busy') throw e } }",
        inputs: { depth },
        timeoutMs: 10_000,
        tenant: "nester",
        nested: true,
        signal,
        callTool,
      });
      mostHeld = Math.max(mostHeld, pool.threadsOf("nester"));
      if (!outcome.ok && outcome.error === "Busy") refusedNested += 1;
      return outcome.ok ? { value: outcome.value } : outcome;
    };
    const caller = new AbortController();
    const roots = [1, 2].map(() =>
      pool.run({
        source: "for (;;) { try { vance.tools.call('self', 1) } catch (e) {} }",
        inputs: {},
        timeoutMs: 30_000,
        tenant: "nester",
        callTool,
        signal: caller.signal,
      }),
    );
    await until(() => refusedNested > 10, 10_000);
    expect(pool.threadsOf("nester")).toBe(3);
    // The other tenant finds threads free: the nester never holds more than its 3 of 8.
    expect(
      await pool.run({ source: "a + b", inputs: { a: 2, b: 3 }, timeoutMs: 1_000, tenant: "victim" }),
    ).toEqual({ ok: true, value: 5 });
    caller.abort();
    for (const root of await Promise.all(roots))
      expect(root).toMatchObject({ ok: false, error: "Cancelled" });
    expect(mostHeld).toBeLessThanOrEqual(3);
    await until(() => pool.stats().workers.busy === 0);
  });

  it("refuses a run that cannot get a slot before its deadline with Busy, sooner than the queue's wait", async () => {
    const pool = await newPool({ maxRunsPerTenant: 1, maxQueueWaitMs: 30_000 });
    // Only its caller ends the holding run, once the other was refused: a fast thread spends the
    // default statement budget of a tight loop early, and the run would give its slot back.
    const caller = new AbortController();
    const holding = pool.run({
      source: "while (true) {}",
      inputs: {},
      timeoutMs: 30_000,
      tenant: "q",
      limits: { maxInterrupts: Number.MAX_SAFE_INTEGER },
      signal: caller.signal,
    });
    const refused = await pool.run({ source: "1", inputs: {}, timeoutMs: 200, tenant: "q" });
    expect(refused).toMatchObject({ ok: false, error: "Busy" });
    // It left the queue at its deadline, while the first run still holds the slot.
    expect(pool.stats().workers.busy).toBe(1);
    caller.abort();
    expect(await holding).toMatchObject({ ok: false, error: "Cancelled" });
  });

  it("refuses a tenant's runs with RateLimited once it spent its worker time, and not another tenant's", async () => {
    const pool = await newPool({ workerSecondsPerMinute: 1 });
    // A second of an endless loop spends the whole allowance (its waits for sibling calls would not).
    expect(
      await pool.run({ source: "while (true) {}", inputs: {}, timeoutMs: 1_200, tenant: "spender" }),
    ).toMatchObject({ ok: false, error: "TimeoutError" });
    const refused = await pool.run({ source: "1", inputs: {}, timeoutMs: 1_000, tenant: "spender" });
    expect(refused).toMatchObject({
      ok: false,
      error: "RateLimited",
      message: expect.stringContaining("tenant 'spender' spent its 1 s of script time per minute"),
    });
    expect(refused.ok === false && refused.retryAfterMs).toBeGreaterThan(0);
    expect(pool.stats().rateLimited).toBe(1);
    expect(await pool.run({ source: "1", inputs: {}, timeoutMs: 1_000, tenant: "other" })).toEqual({
      ok: true,
      value: 1,
    });
  });

  it("charges a caller's worker time without its waits for sibling calls", async () => {
    const pool = await newPool({ workerSecondsPerMinute: 1 });
    const slow: CallTool = () => new Promise((resolve) => setTimeout(() => resolve({ value: 1 }), 1_500));
    // 1.5 s waiting for a sibling is not the caller's thread time: the tenant may run again.
    expect(
      await pool.run({
        source: "vance.tools.call('slow', {})",
        inputs: {},
        timeoutMs: 5_000,
        tenant: "t",
        callTool: slow,
      }),
    ).toEqual({ ok: true, value: 1 });
    expect(await pool.run({ source: "2", inputs: {}, timeoutMs: 1_000, tenant: "t" })).toEqual({
      ok: true,
      value: 2,
    });
  });

  it("refuses a share of every thread: a tenant may never hold the whole pool", async () => {
    await expect(ScriptPool.create({ maxWorkers: 4, maxThreadsPerTenant: 4 })).rejects.toThrow(
      "maxThreadsPerTenant must be less than the 4 threads",
    );
  });

  it("cancels a nested run when its caller times out, and frees its thread at once", async () => {
    const pool = await newPool();
    let nested: Promise<unknown> | undefined;
    const callTool: CallTool = (_name, _params, signal) => {
      nested = pool.run({ source: "while (true) {}", inputs: {}, timeoutMs: 30_000, nested: true, signal });
      return nested.then(() => ({ value: null }));
    };
    const outcome = await pool.run({
      source: "vance.tools.call('spin', {})",
      inputs: {},
      timeoutMs: 300,
      callTool,
    });
    expect(outcome).toMatchObject({ ok: false, error: "TimeoutError" });
    expect(await nested).toEqual({
      ok: false,
      error: "Cancelled",
      message: "the caller ended before the script finished",
    });
    // Cancelled, not its own 30 s deadline, freed the thread.
    await until(() => pool.stats().workers.busy === 0);
  });

  it.each([
    ["its caller going away", { timeoutMs: 30_000, abort: true }],
    ["its root's deadline", { timeoutMs: 3_000, abort: false }],
  ])(
    "ends a nested chain cancelled by %s on its threads: none terminated, each next run sees a clean context",
    async (_cause, root) => {
      // As many warm threads as the chain holds: none is retired as idle meanwhile, so every
      // thread stopped would be one a cancel terminated.
      const pool = await newPool({ warmWorkers: 6, maxWorkers: 16, maxThreadsPerTenant: 8 });
      const nested: Promise<ScriptOutcome>[] = [];
      // Each level leaves traces in its context, then calls the next, again whatever it answers (as
      // the attack suite's programs do); the deepest loops without end.
      const traces =
        "globalThis.leaked = depth; Object.prototype.polluted = depth; JSON.parse = () => depth;";
      const callTool: CallTool = (_name, params, signal) => {
        const depth = params as number;
        const run = pool.run({
          source:
            depth < 5
              ? `${traces} for (;;) { try { vance.tools.call('self', depth + 1) } catch (e) {} }`
              : `${traces} for (;;) { try { for (;;) {} } catch (e) {} }`,
          inputs: { depth },
          timeoutMs: 30_000,
          tenant: "chain",
          nested: true,
          signal,
          callTool,
          limits: { maxInterrupts: Number.MAX_SAFE_INTEGER },
        });
        nested.push(run);
        return run.then((outcome): ToolCallOutcome => (outcome.ok ? { value: outcome.value } : outcome));
      };
      const caller = new AbortController();
      const rooted = pool.run({
        source: `${traces.replaceAll("depth", "0")} vance.tools.call('self', 1)`,
        inputs: {},
        timeoutMs: root.timeoutMs,
        tenant: "chain",
        callTool,
        signal: caller.signal,
        limits: { maxInterrupts: Number.MAX_SAFE_INTEGER },
      });
      if (root.abort) {
        // The whole chain holds its threads: the root and five levels below it.
        await until(() => pool.threadsOf("chain") === 6);
        caller.abort();
      }
      expect(await rooted).toMatchObject({ ok: false, error: root.abort ? "Cancelled" : "TimeoutError" });
      const levels = await Promise.all(nested);
      // Past the root's deadline the chain was whole too, unless a loaded machine was slower than it.
      expect(levels.length).toBeGreaterThanOrEqual(root.abort ? 5 : 1);
      for (const level of levels) {
        expect(level).toEqual({
          ok: false,
          error: "Cancelled",
          message: "the caller ended before the script finished",
        });
      }
      await until(() => pool.stats().workers.busy === 0);
      // Every level stopped at an interrupt check on its own thread: none was terminated.
      expect(pool.stats().workers.terminated).toBe(0);
      // Every idle thread serves one run: as many runs as there are idle threads, each of a tenant
      // of its own, all handed out in this turn, before any can answer, so each takes a thread of
      // its own. None sees a trace.
      const { idle } = pool.stats().workers;
      expect(idle).toBeGreaterThanOrEqual(6);
      const runs = await Promise.all(
        Array.from({ length: idle }, (_, i) =>
          pool.run({
            source: "[typeof leaked, ({}).polluted, JSON.parse('[1]')[0]]",
            inputs: {},
            timeoutMs: 5_000,
            tenant: `reader-${i}`,
          }),
        ),
      );
      for (const run of runs) expect(run).toEqual({ ok: true, value: ["undefined", null, 1] });
      expect(pool.stats().workers.terminated).toBe(0);
    },
  );

  it("terminates a cancelled run that ignores its interrupt checks (a catastrophic regex) once the grace is over", async () => {
    const pool = await newPool({ graceMs: 50 });
    const caller = new AbortController();
    // No loop and no call before the regex: the run meets no interrupt check where it could see
    // the cancel (each run starts from the same restored context, its interrupt counter included).
    const running = pool.run({
      source: CATASTROPHIC_REGEX,
      inputs: {},
      timeoutMs: 30_000,
      signal: caller.signal,
    });
    await until(() => pool.stats().workers.busy === 1);
    caller.abort();
    expect(await running).toEqual({
      ok: false,
      error: "Cancelled",
      message: "the caller ended before the script finished",
    });
    expect(pool.stats().workers.terminated).toBe(1);
    expect(await pool.run({ source: "'still here'", inputs: {}, timeoutMs: 5_000 })).toEqual({
      ok: true,
      value: "still here",
    });
  });

  it("cancels a queued run whose caller went away", async () => {
    const pool = await newPool({ maxRunsPerTenant: 1 });
    const first = pool.run({ source: "while (true) {}", inputs: {}, timeoutMs: 500, tenant: "q" });
    const caller = new AbortController();
    const queued = pool.run({
      source: "1",
      inputs: {},
      timeoutMs: 5_000,
      tenant: "q",
      signal: caller.signal,
    });
    expect(pool.stats().queued).toBe(1);
    caller.abort();
    expect(await queued).toMatchObject({ ok: false, error: "Cancelled" });
    expect(await first).toMatchObject({ ok: false, error: "TimeoutError" });
  });

  it("keeps its memory to the sandbox: a bomb in one run does not stop the next", async () => {
    const pool = await newPool({ warmWorkers: 1 });
    const bomb = "const parts = []; while (true) parts.push('x'.repeat(1 << 16) + parts.length);";
    expect(await pool.run({ source: bomb, inputs: {}, timeoutMs: 10_000 })).toMatchObject({
      ok: false,
      error: "MemoryError",
    });
    expect(await pool.run({ source: "[1, 2, 3].length", inputs: {}, timeoutMs: 1_000 })).toEqual({
      ok: true,
      value: 3,
    });
  });

  it("gives the thread no environment: secrets of the host process are out of reach", async () => {
    process.env.VANCE_SECRET_PROBE = "do-not-leak";
    try {
      const pool = await newPool({ warmWorkers: 1 });
      const outcome = await pool.run({
        source: "[typeof process, typeof require, typeof globalThis.process]",
        inputs: {},
        timeoutMs: 1_000,
      });
      expect(outcome).toEqual({ ok: true, value: ["undefined", "undefined", "undefined"] });
    } finally {
      delete process.env.VANCE_SECRET_PROBE;
    }
  });
});

describe("one thread, run after run", () => {
  /** What a script could have left behind, as the next run sees it. */
  const PROBE =
    "[typeof leaked, typeof lexical, ({}).polluted, [].polluted, typeof [].push, JSON.stringify({ a: 1 }), typeof late, typeof Math.random()]";
  const CLEAN = ["undefined", "undefined", null, null, "function", '{"a":1}', "undefined", "number"];

  it("shows each run nothing of the last, whatever that one did to its context, on the same thread", async () => {
    const pool = await newPool({ warmWorkers: 1, maxWorkers: 1 });
    const run = (source: string, timeoutMs = 2_000) => pool.run({ source, inputs: {}, timeoutMs });
    expect(await run(PROBE)).toEqual({ ok: true, value: CLEAN });
    const attacks: [string, string, number?][] = [
      [
        "globalThis.leaked = 1; let lexical = 2; Object.prototype.polluted = 1; Array.prototype.polluted = 1; Array.prototype.push = null; JSON.stringify = () => 'x'; Math.random = () => 'x'; 1",
        "ok",
      ],
      [
        "Promise.resolve().then(() => { globalThis.late = 1; }); (async () => { await null; globalThis.late = 2; })(); 1",
        "ok",
      ],
      ["globalThis.leaked = 1; Object.prototype.polluted = 1; for (;;) {}", "TimeoutError", 200],
      ["globalThis.leaked = 1; function f() { return f() + 1; } f()", "RangeError"],
      [
        "globalThis.leaked = 1; const parts = []; for (;;) parts.push('x'.repeat(1 << 16) + parts.length);",
        "MemoryError",
        10_000,
      ],
      ["globalThis.leaked = 1; Object.freeze(Object.prototype); throw new Error('midway')", "Error"],
    ];
    for (const [source, expected, timeoutMs] of attacks) {
      const outcome = await run(source, timeoutMs);
      expect(outcome.ok ? "ok" : outcome.error).toBe(expected);
      expect(await run(PROBE)).toEqual({ ok: true, value: CLEAN });
      expect(await run("let lexical = 'declared again'; lexical")).toEqual({
        ok: true,
        value: "declared again",
      });
    }
    // One thread served them all: QuickJS interrupted the endless loop, so nothing was terminated.
    expect(pool.stats().workers).toMatchObject({ started: 1, terminated: 0 });
  });

  it("draws Math.random anew for each run", async () => {
    const pool = await newPool({ warmWorkers: 1, maxWorkers: 1 });
    const draws = new Set<unknown>();
    for (let i = 0; i < 5; i++) {
      const outcome = await pool.run({ source: "Math.random()", inputs: {}, timeoutMs: 1_000 });
      draws.add(outcome.ok ? outcome.value : outcome.error);
    }
    expect(draws.size).toBe(5);
    expect(pool.stats().workers.started).toBe(1);
  });
});
