import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CallTool, LOG_LIMITS, ScriptPool, type ScriptRequest } from "./index";

// What a run reports beside its outcome when asked (`report`): its console lines and how far its
// sibling calls got; its result bounded (`maxResultChars`); a spent budget answered in the worker.

let pool: ScriptPool;

beforeAll(async () => {
  pool = await ScriptPool.create({ warmWorkers: 1, graceMs: 100 });
});

afterAll(() => pool.close());

afterEach(() => {
  expect(pool.stats().workers.busy).toBe(0);
});

function run(source: string, extra: Partial<ScriptRequest> = {}) {
  return pool.run({ source, inputs: {}, timeoutMs: 2_000, report: true, ...extra });
}

describe("a reported run", () => {
  it("answers its console lines: strings as they are, other values as JSON, the last 50 of them", async () => {
    const outcome = await run(
      `console.log("a", 1, { b: [2] }, null); console.warn(undefined, () => 1); console.error("x".repeat(2000)); 7`,
    );
    expect(outcome).toMatchObject({ ok: true, value: 7, calls: { completed: 0 } });
    const lines = outcome.logs!.lines;
    expect(lines.slice(0, 2)).toEqual(['a 1 {"b":[2]} null', "undefined () => 1"]);
    expect(lines[2]).toHaveLength(LOG_LIMITS.lineChars);
    expect(lines[2]!.endsWith("…")).toBe(true);

    // 5,000 lines cross to the host: a deadline of 2 s ended it at load 30 on 2 cores.
    const many = await run("for (let i = 0; i < 5000; i++) console.log(i); 'done'", { timeoutMs: 20_000 });
    expect(many.logs).toEqual({
      lines: Array.from({ length: LOG_LIMITS.lines }, (_, i) => String(5000 - LOG_LIMITS.lines + i)),
      total: 5000,
    });
  });

  it("keeps console quiet without report, as scripted tools run", async () => {
    const outcome = await pool.run({ source: "console.log('x'); 1", inputs: {}, timeoutMs: 1_000 });
    expect(outcome).toEqual({ ok: true, value: 1 });
  });

  it("keeps what a run printed before its thread was terminated (a regex that ignores the deadline)", async () => {
    const outcome = await run(`console.log("about to hang"); /^(a+)+$/.test("a".repeat(40) + "!")`, {
      timeoutMs: 300,
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: "TimeoutError",
      logs: { lines: ["about to hang"], total: 1 },
    });
  });

  it("counts the calls answered and names the one a deadline cut off", async () => {
    let calls = 0;
    const callTool: CallTool = (name) => {
      calls += 1;
      return name === "slow" ? new Promise(() => {}) : Promise.resolve({ value: calls });
    };
    const outcome = await run(
      `vance.tools.call("a", {}); vance.tools.call("b", {}); vance.tools.call("slow", {})`,
      {
        timeoutMs: 300,
        callTool,
      },
    );
    expect(outcome).toMatchObject({
      ok: false,
      error: "TimeoutError",
      calls: { completed: 2, running: "slow" },
    });
  });

  it("throws a tool's failure with its code and the tool's name", async () => {
    const callTool: CallTool = async () => ({ error: "HttpError", message: "HTTP 404: gone" });
    const outcome = await run(
      `try { vance.tools.call("lookup", {}) } catch (e) { [e instanceof Error, e.name, e.code, e.tool, e.message] }`,
      { callTool },
    );
    expect(outcome).toMatchObject({
      ok: true,
      value: [true, "HttpError", "HttpError", "lookup", "HTTP 404: gone"],
    });
  });

  it("answers later calls in the worker after a final refusal: 20,000 calls cost one round trip past it", async () => {
    let reached = 0;
    const callTool: CallTool = async () => {
      reached += 1;
      return reached <= 10
        ? { value: reached }
        : { error: "CallBudgetExceeded", message: "spent", final: true };
    };
    const outcome = await run(
      `let ok = 0, refused = 0, last;
for (let i = 0; i < 20000; i++) { try { vance.tools.call("t", {}); ok++ } catch (e) { refused++; last = e.code } }
({ ok, refused, last })`,
      { callTool, timeoutMs: 10_000 },
    );
    expect(outcome).toMatchObject({
      ok: true,
      value: { ok: 10, refused: 19_990, last: "CallBudgetExceeded" },
    });
    expect(reached).toBe(11);
    // A refusal that is not final (a tool below failed alike) is asked again every time.
    let asked = 0;
    const notFinal: CallTool = async () => {
      asked += 1;
      return { error: "CallBudgetExceeded", message: "a tool below ran out" };
    };
    await run(`for (let i = 0; i < 3; i++) { try { vance.tools.call("t", {}) } catch {} }`, {
      callTool: notFinal,
    });
    expect(asked).toBe(3);
  });

  it("fails a result longer than maxResultChars on the script's thread", async () => {
    expect(await run(`"x".repeat(100)`, { maxResultChars: 102 })).toMatchObject({ ok: true });
    expect(await run(`"x".repeat(101)`, { maxResultChars: 102 })).toMatchObject({
      ok: false,
      error: "ResultTooLarge",
      message: expect.stringContaining("103 characters of JSON, more than the 102 allowed"),
    });
  });
});
