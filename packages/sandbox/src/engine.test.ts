import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EngineJob,
  finishRun,
  type PreparedRun,
  prepareRun,
  runScript,
  type ScriptOutcome,
} from "./engine";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits";
import { type CompiledQuickJS, compileQuickJS, type LoadedModule, loadModule } from "./module";

// One context serves run after run (its module's memory put back after each): whatever a run
// does to it, the next run sees the context as it was made. These run the engine on this thread
// as a script worker does, and check that the context really is the same one.

let compiled: CompiledQuickJS;

beforeAll(async () => {
  compiled = await compileQuickJS();
});

/** A script worker's loop, on this thread: the context it keeps, and the modules it replaced. */
class Runner {
  loaded!: LoadedModule;
  next!: PreparedRun;
  replaced = 0;

  static async start(): Promise<Runner> {
    const runner = new Runner();
    runner.loaded = await loadModule(compiled, DEFAULT_LIMITS.memoryBytes);
    runner.next = prepareRun(runner.loaded);
    return runner;
  }

  async run(
    source: string,
    inputs: Record<string, unknown> = {},
    extra: Partial<EngineJob> = {},
  ): Promise<{ outcome: ScriptOutcome; sameContext: boolean }> {
    const current = this.next;
    const timeoutMs = extra.timeoutMs ?? 2_000;
    const { outcome, reusable } = runScript(current, {
      source,
      inputs,
      timeoutMs,
      deadline: performance.now() + timeoutMs,
      limits: DEFAULT_LIMITS,
      callTool: undefined,
      ...extra,
    });
    const kept = finishRun(current, reusable);
    if (kept) {
      this.next = kept;
    } else if (reusable) {
      this.next = prepareRun(this.loaded);
    } else {
      this.replaced += 1;
      this.loaded = await loadModule(compiled, DEFAULT_LIMITS.memoryBytes);
      this.next = prepareRun(this.loaded);
    }
    return { outcome, sameContext: this.next === current };
  }

  /** Runs `source` and answers its value, failing the test on any other outcome. */
  async value(source: string, inputs: Record<string, unknown> = {}): Promise<unknown> {
    const { outcome } = await this.run(source, inputs);
    if (!outcome.ok) throw new Error(`${outcome.error}: ${outcome.message}`);
    return outcome.value;
  }
}

/** What a fresh context shows of the state a hostile run could have touched. */
const PROBE = `[
  typeof leaked, typeof declared, typeof lexical, typeof Declared, typeof hoisted,
  ({}).polluted, [].polluted, Object.keys(Object.prototype).length,
  typeof [].push, [1, 2].map((x) => x * 2), JSON.stringify({ a: 1 }), typeof Math.random(),
  Object.isFrozen(Object.prototype), Object.getOwnPropertyNames(globalThis).length,
  typeof late, Symbol.for("shared").description, typeof Date.now(), String(Date.prototype.getTime).length > 0,
  Function.prototype.call === Function.prototype.call, typeof vance, typeof console,
]`;

describe("a context reused run after run", () => {
  let runner: Runner;

  beforeAll(async () => {
    runner = await Runner.start();
  });

  afterAll(() => {
    finishRun(runner.next, true);
  });

  it("reuses the context: a run costs no new runtime, and a plain run changes nothing", async () => {
    expect(runner.next.snapshot).not.toBeNull();
    const first = await runner.run("a + b", { a: 1, b: 2 });
    expect(first).toEqual({ outcome: { ok: true, value: 3 }, sameContext: true });
    expect(await runner.run("a + b", { a: 2, b: 2 })).toEqual({
      outcome: { ok: true, value: 4 },
      sameContext: true,
    });
  });

  it("shows the next run nothing of a run that wrote globals, declared names and patched every prototype", async () => {
    const pristine = await runner.value(PROBE);
    const { outcome, sameContext } = await runner.run(`
      globalThis.leaked = 42;
      var declared = 1; let lexical = 2; class Declared {} function hoisted() {}
      Object.prototype.polluted = true;
      Array.prototype.polluted = true;
      Array.prototype.push = null;
      Array.prototype.map = function () { return "patched"; };
      JSON.stringify = () => "patched";
      Math.random = () => 4;
      Date.now = () => 0;
      Function.prototype.call = null;
      Symbol.for("shared");
      Object.defineProperty(globalThis, "trap", { get() { throw new Error("trapped"); } });
      Object.freeze(Object.prototype);
      1
    `);
    expect(outcome).toEqual({ ok: true, value: 1 });
    expect(sameContext).toBe(true);
    expect(await runner.value(PROBE)).toEqual(pristine);
    // The same names may be declared again: the last run's `let` and `class` are gone.
    expect(await runner.value("let lexical = 'again'; class Declared {}; lexical")).toBe("again");
    expect(await runner.value("typeof trap")).toBe("undefined");
  });

  it("drops the jobs a run left pending: its promise callbacks never run in a later run", async () => {
    const { sameContext } = await runner.run(`
      Promise.resolve().then(() => { globalThis.late = "from an earlier run"; });
      (async () => { await null; globalThis.late = "from an earlier run"; })();
      new Promise(() => {});
      1
    `);
    expect(sameContext).toBe(true);
    expect(await runner.value("Promise.resolve(); typeof late")).toBe("undefined");
    expect(await runner.value("typeof late")).toBe("undefined");
  });

  it("shows nothing of a run that hit its deadline or its statement budget, in the same context", async () => {
    const deadline = await runner.run(
      "globalThis.leaked = 'deadline'; Object.prototype.polluted = 1; for (;;) {}",
      {},
      {
        timeoutMs: 50,
      },
    );
    expect(deadline.outcome).toMatchObject({ ok: false, error: "TimeoutError" });
    expect(deadline.sameContext).toBe(true);
    expect(await runner.value("[typeof leaked, ({}).polluted]")).toEqual(["undefined", null]);

    const limits: SandboxLimits = { ...DEFAULT_LIMITS, maxInterrupts: 3 };
    const budget = await runner.run("globalThis.leaked = 'budget'; for (;;) {}", {}, { limits });
    expect(budget.outcome).toMatchObject({ ok: false, error: "StatementLimitError" });
    expect(budget.sameContext).toBe(true);
    expect(await runner.value("typeof leaked")).toBe("undefined");
  });

  it.each([
    ["cancelled", { cancelAfter: 3 }],
    ["past its deadline", { cancelAfter: Number.POSITIVE_INFINITY }],
  ])(
    "stops a run %s at its next call, though it catches every error and every finally, in the same context",
    async (_how, { cancelAfter }) => {
      let calls = 0;
      // Each call refused, as a budget's end or a Busy pool answers: the loop catches them all.
      const callTool = () => {
        calls += 1;
        return { error: "Busy", message: "refused" };
      };
      const { outcome, sameContext } = await runner.run(
        "globalThis.leaked = 1; for (;;) { try { vance.tools.call('self', {}) } catch (e) {} finally { continue } }",
        {},
        {
          callTool,
          cancelled: () => calls >= cancelAfter,
          // Past its deadline after three calls' worth of loop, for the other case.
          ...(Number.isFinite(cancelAfter) ? {} : { timeoutMs: 1, deadline: performance.now() + 1 }),
          limits: { ...DEFAULT_LIMITS, maxInterrupts: Number.MAX_SAFE_INTEGER },
        },
      );
      expect(outcome).toMatchObject({
        ok: false,
        error: Number.isFinite(cancelAfter) ? "Cancelled" : "TimeoutError",
      });
      // Not a call more once told: an interrupt check alone would have let thousands through.
      if (Number.isFinite(cancelAfter)) expect(calls).toBe(cancelAfter);
      expect(sameContext).toBe(true);
      expect(await runner.value("typeof leaked")).toBe("undefined");
    },
  );

  it("shows nothing of a run that overflowed its stack or threw midway", async () => {
    const overflow = await runner.run("globalThis.leaked = 1; function f() { return f() + 1; } f()");
    expect(overflow.outcome).toMatchObject({ ok: false, error: "RangeError" });
    const thrown = await runner.run(
      "globalThis.leaked = 2; Object.prototype.polluted = 1; throw new TypeError('midway')",
    );
    expect(thrown.outcome).toEqual({ ok: false, error: "TypeError", message: "midway" });
    expect(thrown.sameContext).toBe(true);
    expect(await runner.value("[typeof leaked, ({}).polluted]")).toEqual(["undefined", null]);
  });

  it("starts the next run on a fresh module after a run exhausted its memory", async () => {
    const replaced = runner.replaced;
    const bomb = await runner.run(
      "globalThis.leaked = 1; const parts = []; for (;;) parts.push('x'.repeat(1 << 20) + parts.length);",
    );
    expect(bomb.outcome).toMatchObject({ ok: false, error: "MemoryError" });
    expect(runner.replaced).toBe(replaced + 1);
    expect(runner.next.snapshot).not.toBeNull();
    expect(await runner.value("typeof leaked")).toBe("undefined");
    expect((await runner.run("a + b", { a: 1, b: 2 })).sameContext).toBe(true);
  });

  it("shows nothing of a run whose one oversized allocation was refused, in the same context", async () => {
    const refused = await runner.run("globalThis.leaked = 1; 'x'.repeat(48 * 1024 * 1024)");
    expect(refused.outcome).toMatchObject({ ok: false, error: "MemoryError" });
    expect(refused.sameContext).toBe(true);
    expect(await runner.value("typeof leaked")).toBe("undefined");
  });

  it("draws Math.random anew for every run, as a fresh context would", async () => {
    const draws = new Set<unknown>();
    for (let i = 0; i < 5; i++) draws.add(await runner.value("Math.random()"));
    expect(draws.size).toBe(5);
  });

  it("keeps the bound inputs to their run", async () => {
    expect(await runner.value("typeof secret === 'string' ? secret : 'none'", { secret: "tenant A's" })).toBe(
      "tenant A's",
    );
    expect(await runner.value("typeof secret")).toBe("undefined");
  });

  it("installs console and vance only for the run whose source names them", async () => {
    const lines: string[] = [];
    const logged = await runner.run(
      "console.log('one', { a: 1 }); typeof globalThis['van' + 'ce']",
      {},
      { log: (line) => lines.push(line) },
    );
    expect(logged.outcome).toEqual({ ok: true, value: "undefined" });
    expect(lines).toEqual(['one {"a":1}']);
    expect(
      await runner.value("[typeof globalThis['con' + 'sole'], typeof globalThis['van' + 'ce']]"),
    ).toEqual(["undefined", "undefined"]);
    const called = await runner.run("vance.tools.call('x', {})");
    expect(called.outcome).toEqual({
      ok: false,
      error: "ToolCallError",
      message: "vance.tools.call is not available in this invocation",
    });
  });
});
