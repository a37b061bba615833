import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type Target } from "./support";

/**
 * Attack cases for code mode: a model's `execute_javascript` program that loops forever, runs a
 * catastrophic regex, fans out 100,000 tool calls or allocates without end ends at its limit on
 * the real server, while /v1/health keeps answering.
 */
describe("attack suite: code mode", () => {
  let target: Target;
  let processId: string;
  const T = "/v1/tenants/hostile/projects/code-mode";

  const post = async (path: string, body: unknown) => {
    const response = await target.request(`${T}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  /** Runs `code` in the process as one attack; the program's answer. */
  const program = (name: string, code: string, timeoutMs: number) =>
    target.attack(
      name,
      async () => {
        const answer = await post(`/processes/${processId}/invoke`, {
          name: "execute_javascript",
          params: { code, timeoutMs },
        });
        expect(answer.status).toBe(200);
        return answer.body;
      },
      (body) => String(body.error ?? JSON.stringify((body.value as { result: unknown }).result)),
    );

  beforeAll(async () => {
    target = await startTarget();
    const spawned = await post("/processes", {
      engine: "attacker",
      allowedToolsAdd: ["execute_javascript", "whoami"],
      models: [],
    });
    expect(spawned.status).toBe(201);
    processId = String(spawned.body.processId);
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  it("an endless loop ends at its deadline", async () => {
    const answer = await program("execute_javascript: for (;;) {}", "let n = 0; for (;;) { n++ }", 1_500);
    expect(answer).toMatchObject({ error: "TimeoutError", message: expect.stringContaining("1500 ms") });
  });

  it("a catastrophic regex (QuickJS never interrupts one) ends when its thread is terminated", async () => {
    const answer = await program(
      "execute_javascript: /^(a+)+$/ on 45 a's and a '!'",
      `console.log("start"); /^(a+)+$/.test("a".repeat(45) + "!")`,
      1_000,
    );
    // What it printed before the thread was stopped still comes back.
    expect(answer).toMatchObject({ error: "TimeoutError", message: expect.stringContaining('"start"') });
  });

  it("a 100,000-call fan-out stops at the call budget: 1,000 calls run, the rest refused in the sandbox", async () => {
    const answer = await program(
      "execute_javascript: 100,000 calls of whoami, each refusal caught",
      `let ok = 0, refused = 0, last;
for (let i = 0; i < 100000; i++) {
  try { vance.tools.call("whoami", {}); ok++ } catch (e) { refused++; last = e.code }
}
({ ok, refused, last })`,
      30_000,
    );
    expect(answer).toMatchObject({
      value: { result: { ok: 1_000, refused: 99_000, last: "CallBudgetExceeded" } },
    });
    // Uncaught, the first refusal ends the program with the budget's error.
    const uncaught = await program(
      "execute_javascript: calls of whoami without end, uncaught",
      `for (;;) vance.tools.call("whoami", {})`,
      30_000,
    );
    expect(uncaught).toMatchObject({ error: "CallBudgetExceeded" });
    // Each call that ran counts as usage, once.
    const usage = await target.request(`${T}/insights/tool-usage`);
    const { roles } = (await usage.json()) as { roles: { tools: { name: string; calls: number }[] }[] };
    expect(roles[0]!.tools.find((tool) => tool.name === "whoami")?.calls).toBe(2_000);
  });

  it("an allocation without end stops at the memory limit", async () => {
    const answer = await program(
      "execute_javascript: 1 MiB strings kept without end",
      `const keep = []; for (;;) keep.push("x".repeat(1 << 20) + keep.length)`,
      10_000,
    );
    expect(answer).toMatchObject({ error: "MemoryError" });
  });
});
