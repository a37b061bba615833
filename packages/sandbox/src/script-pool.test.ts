import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type CallTool, ScriptPool, type ScriptRequest, type ToolCallOutcome } from "./index";

let pool: ScriptPool;

beforeAll(async () => {
  pool = await ScriptPool.create({ warmWorkers: 2, maxRunsPerTenant: 64, maxWorkers: 64 });
});

afterAll(() => pool.close());

// Every run's handles are freed and its thread's context restored after it (engine.test.ts
// checks that nothing survives). What is left to check between tests is that no thread stayed busy.
afterEach(() => {
  expect(pool.stats().workers.busy).toBe(0);
});

function run(source: string, inputs: Record<string, unknown> = {}, extra: Partial<ScriptRequest> = {}) {
  return pool.run({ source, inputs, timeoutMs: 2_000, ...extra });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("scripts", () => {
  const runIn = run;

  it("runs add_numbers", async () => {
    expect(await runIn("a + b", { a: 1, b: 2 })).toEqual({ ok: true, value: 3 });
  });

  it("binds strings, objects, arrays and undefined as top-level variables", async () => {
    const outcome = await runIn(
      "[greeting + ', ' + user.name, tags.length, tags[1], user.address.city, typeof missing, Object.keys(raw)]",
      {
        greeting: 'Hello "there"\n\u2028',
        user: { name: "Arthur", address: { city: "Cottington" } },
        tags: ["a", "b", "c"],
        missing: undefined,
        raw: JSON.parse('{"__proto__": 1}'),
      },
    );
    expect(outcome).toEqual({
      ok: true,
      value: ['Hello "there"\n\u2028, Arthur', 3, "b", "Cottington", "undefined", ["__proto__"]],
    });
  });

  it("returns the value of the last expression after statements", async () => {
    const source = `
      let total = 0;
      for (const n of numbers) { total += n; }
      function double(x) { return x * 2; }
      double(total)
    `;
    expect(await runIn(source, { numbers: [1, 2, 3] })).toEqual({ ok: true, value: 12 });
    expect(await runIn("if (n > 1) { 'big' } else { 'small' }", { n: 5 })).toEqual({
      ok: true,
      value: "big",
    });
    expect(await runIn("const x = 1;")).toEqual({ ok: true, value: null });
  });

  it("reads results with JSON semantics", async () => {
    expect(await runIn("undefined")).toEqual({ ok: true, value: null });
    expect(await runIn("(function () {})")).toEqual({ ok: true, value: null });
    expect(await runIn("0 / 0")).toEqual({ ok: true, value: null });
    expect(await runIn("true")).toEqual({ ok: true, value: true });
    expect(await runIn("({ a: 1, f() {}, u: undefined, d: { toJSON() { return 'D'; } } })")).toEqual({
      ok: true,
      value: { a: 1, d: "D" },
    });
    expect(await runIn("const o = {}; o.self = o; o")).toMatchObject({ ok: false, error: "TypeError" });
  });

  it("reports a syntax error", async () => {
    expect(await runIn("a +", { a: 1 })).toMatchObject({ ok: false, error: "SyntaxError" });
  });

  it("reports what the script threw by class name and message", async () => {
    expect(await runIn("null.x")).toMatchObject({ ok: false, error: "TypeError" });
    expect(
      await runIn(
        "class TicketError extends Error { name = 'TicketError' }; throw new TicketError('no such ticket')",
      ),
    ).toEqual({ ok: false, error: "TicketError", message: "no such ticket" });
    expect(await runIn("throw 'plain'")).toEqual({ ok: false, error: "Error", message: "plain" });
  });

  it("ends an endless loop with TimeoutError at its deadline and keeps working", async () => {
    const outcome = await runIn("while (true) {}", {}, { timeoutMs: 200 });
    expect(outcome).toMatchObject({
      ok: false,
      error: "TimeoutError",
      message: "script exceeded its deadline of 200 ms",
    });
    expect(await runIn("1 + 1")).toEqual({ ok: true, value: 2 });
  });

  it("ends a run past its statement budget with StatementLimitError", async () => {
    const outcome = await runIn("for (;;) {}", {}, { timeoutMs: 10_000, limits: { maxInterrupts: 5 } });
    expect(outcome).toMatchObject({ ok: false, error: "StatementLimitError" });
  });

  it("ends a memory bomb with MemoryError and keeps working", async () => {
    const bomb =
      "const parts = []; const chunk = 'x'.repeat(1 << 16); while (true) parts.push(chunk + parts.length);";
    expect(await runIn(bomb, {}, { timeoutMs: 10_000 })).toMatchObject({ ok: false, error: "MemoryError" });
    const single = "'x'.repeat(64 * 1024 * 1024).length";
    expect(await runIn(single, {}, { timeoutMs: 10_000 })).toMatchObject({ ok: false, error: "MemoryError" });
    expect(await runIn("[1, 2, 3].length")).toEqual({ ok: true, value: 3 });
  });

  it("ends deep recursion with RangeError without taking the process down", async () => {
    expect(await runIn("function f() { return f(); } f()")).toMatchObject({ ok: false, error: "RangeError" });
    expect(await runIn("function g(n) { return n === 0 ? 0 : 1 + g(n - 1); } g(1e6)")).toMatchObject({
      ok: false,
      error: "RangeError",
    });
    expect(await runIn("'alive'")).toEqual({ ok: true, value: "alive" });
  });

  it.each([
    ["require('fs')", "'require' is not defined"],
    ["process.env", "'process' is not defined"],
    ["fetch('x')", "'fetch' is not defined"],
    ["setTimeout(() => 1, 1)", "'setTimeout' is not defined"],
  ])("has no I/O or timers: %s", async (source, message) => {
    expect(await runIn(source)).toEqual({ ok: false, error: "ReferenceError", message });
  });

  it("offers the standard library a tool script uses, without typed arrays and BigInt", async () => {
    const source =
      "[JSON.stringify({a:1}), new Date(0).toISOString(), /b+/.test('abb'), new Map([[1,2]]).get(1), typeof Promise, typeof Proxy, typeof Uint8Array, typeof ArrayBuffer]";
    expect(await runIn(source)).toEqual({
      ok: true,
      value: [
        '{"a":1}',
        "1970-01-01T00:00:00.000Z",
        true,
        2,
        "function",
        "function",
        "undefined",
        "undefined",
      ],
    });
  });

  it("gives scripts a console that never reaches the host's stdout", async () => {
    const write = vi.spyOn(process.stdout, "write");
    try {
      expect(await runIn("console.log('hello'); console.error('oops'); 7")).toEqual({ ok: true, value: 7 });
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });

  it("does not leak state between runs", async () => {
    expect(
      await runIn("globalThis.leaked = 42; var declared = 1; Object.prototype.polluted = true; 1"),
    ).toEqual({
      ok: true,
      value: 1,
    });
    expect(await runIn("[typeof leaked, typeof declared, ({}).polluted === undefined]")).toEqual({
      ok: true,
      value: ["undefined", "undefined", true],
    });
  });

  it("refuses vance.tools.call when no sibling tools are given", async () => {
    expect(await runIn("vance.tools.call('x', {})")).toEqual({
      ok: false,
      error: "ToolCallError",
      message: "vance.tools.call is not available in this invocation",
    });
  });
});

describe("vance.tools.call", () => {
  it("returns the sibling's value into the script", async () => {
    const calls: [string, unknown][] = [];
    const callTool: CallTool = async (name, params) => {
      calls.push([name, params]);
      const { a, b } = params as { a: number; b: number };
      return { value: { sum: a + b } };
    };
    const outcome = await run(
      "vance.tools.call('add_numbers', { a, b, skip: undefined }).sum * 10",
      { a: 1, b: 2 },
      { callTool },
    );
    expect(outcome).toEqual({ ok: true, value: 30 });
    expect(calls).toEqual([["add_numbers", { a: 1, b: 2 }]]);
  });

  it("throws the sibling's error inside the script, where it can be caught", async () => {
    const callTool: CallTool = async () => ({ error: "NotFoundError", message: "no tool jira_get_issue" });
    const caught = await run(
      "try { vance.tools.call('jira_get_issue', { key: 'V-1' }) } catch (e) { [e.name, e.message, e instanceof Error] }",
      {},
      { callTool },
    );
    expect(caught).toEqual({ ok: true, value: ["NotFoundError", "no tool jira_get_issue", true] });
    const uncaught = await run("vance.tools.call('jira_get_issue', {})", {}, { callTool });
    expect(uncaught).toEqual({ ok: false, error: "NotFoundError", message: "no tool jira_get_issue" });
  });

  it("turns a failing host into a ToolCallError inside the script", async () => {
    const callTool: CallTool = async () => {
      throw new Error("dispatcher exploded");
    };
    expect(await run("vance.tools.call('x', {})", {}, { callTool })).toEqual({
      ok: false,
      error: "ToolCallError",
      message: "dispatcher exploded",
    });
  });

  it("ends with TimeoutError when the sibling never answers, and aborts its signal", async () => {
    let signal: AbortSignal | undefined;
    const callTool: CallTool = (_name, _params, abort) => {
      signal = abort;
      return new Promise<ToolCallOutcome>(() => {});
    };
    const outcome = await run("vance.tools.call('hang', {})", {}, { callTool, timeoutMs: 150 });
    expect(outcome).toMatchObject({ ok: false, error: "TimeoutError" });
    expect(signal?.aborted).toBe(true);
  });

  it("keeps TimeoutError as the outcome when the script catches the sibling's timeout", async () => {
    const callTool: CallTool = () => new Promise<ToolCallOutcome>(() => {});
    const outcome = await run(
      "try { vance.tools.call('hang', {}) } catch (e) { 'swallowed' }",
      {},
      {
        callTool,
        timeoutMs: 100,
      },
    );
    expect(outcome).toMatchObject({ ok: false, error: "TimeoutError" });
  });

  it("survives scripts that call it from toJSON while the host reads values", async () => {
    const callTool: CallTool = async (name) => ({ value: name });
    const fromParams = await run(
      "vance.tools.call('outer', { toJSON() { return vance.tools.call('inner', {}); } })",
      {},
      { callTool },
    );
    expect(fromParams).toMatchObject({ ok: false, error: "ToolCallError" });
    const fromResult = await run("({ toJSON() { return vance.tools.call('late', {}); } })", {}, { callTool });
    expect(fromResult).toMatchObject({ ok: false, error: "ToolCallError" });
    expect(await run("vance.tools.call('after', {})", {}, { callTool })).toEqual({
      ok: true,
      value: "after",
    });
  });

  it("answers from 2,000 frames deep in the script's own recursion", async () => {
    const callTool: CallTool = async (_name, params) => ({ value: params });
    const source =
      "function f(n) { return n === 0 ? vance.tools.call('deep', { n: 'bottom' }).n : f(n - 1); } f(2000)";
    expect(await run(source, {}, { callTool })).toEqual({ ok: true, value: "bottom" });
  });

  it("lets the sibling itself run scripts, nested two levels deep", async () => {
    const callTool: CallTool = async (name, params) => {
      const { x } = params as { x: number };
      if (name === "double") {
        return pool
          .run({
            source: "vance.tools.call('increment', { x }) * 2",
            inputs: { x },
            timeoutMs: 2_000,
            callTool,
          })
          .then((outcome) => (outcome.ok ? { value: outcome.value } : outcome));
      }
      const inner = await pool.run({ source: "x + 1", inputs: { x }, timeoutMs: 2_000 });
      return inner.ok ? { value: inner.value } : inner;
    };
    expect(await run("vance.tools.call('double', { x }) + 1000", { x: 4 }, { callTool })).toEqual({
      ok: true,
      value: 1010,
    });
  });

  it("serves 50 concurrent runs with correct, distinct results", async () => {
    const callTool: CallTool = async (_name, params) => {
      await delay(Math.random() * 5);
      return { value: { echoed: (params as { i: number }).i } };
    };
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        // What is asserted is correctness under concurrency, not speed: 50 runs may need new
        // threads, and a loaded machine starts them slowly, so the deadline is generous.
        run(
          "const reply = vance.tools.call('echo', { i }); [i, reply.echoed * 2]",
          { i },
          { callTool, timeoutMs: 20_000 },
        ),
      ),
    );
    expect(outcomes).toEqual(Array.from({ length: 50 }, (_, i) => ({ ok: true, value: [i, i * 2] })));
  });
});

describe("misuse", () => {
  it("rejects the reserved input name vance", async () => {
    expect(await run("vance", { vance: 1 })).toEqual({
      ok: false,
      error: "InputError",
      message: 'input name "vance" is reserved',
    });
  });

  it("rejects limits QuickJS cannot enforce safely", async () => {
    await expect(run("1", {}, { timeoutMs: 0 })).rejects.toThrow(RangeError);
    await expect(run("1", {}, { limits: { maxStackBytes: 8 * 1024 * 1024 } })).rejects.toThrow(RangeError);
    await expect(run("1", {}, { limits: { maxStackBytes: 2 * 1024 * 1024 } })).rejects.toThrow(
      "sizes its threads",
    );
    await expect(run("1", {}, { limits: { memoryBytes: 1024 * 1024 * 1024 } })).rejects.toThrow(RangeError);
  });

  it("refuses to run once closed", async () => {
    const own = await ScriptPool.create({ warmWorkers: 0 });
    expect(await own.run({ source: "1", inputs: {}, timeoutMs: 1_000 })).toEqual({ ok: true, value: 1 });
    await own.close();
    await expect(own.run({ source: "1", inputs: {}, timeoutMs: 100 })).rejects.toThrow("closed");
  });
});
