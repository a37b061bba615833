import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADD_NUMBERS } from "../support/spec-examples";
import { MAX_BLOCK_MS, startTarget, type Target, threadNices } from "./support";

/**
 * Attack cases of one tenant against the capacity all tenants share (script threads, the serving
 * thread's time), asserting what another tenant sees meanwhile: its scripted `add_numbers`
 * answers within 1 s at the 95th percentile and never 429, and /v1/health (sampled from a
 * process of its own by `target.attack`) never waits 1 s. Each case waits for the attacker's
 * requests in flight when the victim is done: a program at the full call depth retries its
 * refusals inside the sandbox until its 10 s deadline.
 */
describe("attack suite: one tenant against the others' share", { timeout: 120_000 }, () => {
  let target: Target;
  let attacker: string;
  let snake: string;
  let victim: string;
  const EVIL = "/v1/tenants/evil/projects/p";
  const GOOD = "/v1/tenants/good/projects/p";
  /** The ouroboros' own tenant: the other cases spend evil's script time, and a refused attack tests nothing. */
  const SNAKE = "/v1/tenants/snake/projects/p";

  const call = async (path: string, token: string, body: unknown) => {
    const response = await target.request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      token,
    });
    return {
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  /**
   * Runs `attackOnce` from `parallel` loops until the victim made `victimCalls` calls of its
   * `add_numbers`, one after another; answers the attacker's outcomes and the victim's latencies.
   */
  const underAttack = async (name: string, parallel: number, attackOnce: () => Promise<string>) => {
    const victimCalls = 40;
    const result = await target.attack(
      name,
      async () => {
        const seen = new Map<string, number>();
        let done = false;
        const loops = Array.from({ length: parallel }, async () => {
          while (!done) {
            const outcome = await attackOnce();
            seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
          }
        });
        const latencies: number[] = [];
        const statuses: number[] = [];
        const values: unknown[] = [];
        try {
          for (let i = 0; i < victimCalls; i++) {
            const started = performance.now();
            const answer = await call(`${GOOD}/tools/add_numbers/invoke`, victim, { params: { a: i, b: 1 } });
            latencies.push(performance.now() - started);
            statuses.push(answer.status);
            values.push(answer.body.value);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        } finally {
          done = true;
          await Promise.all(loops);
        }
        latencies.sort((a, b) => a - b);
        const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1]!;
        return { seen, p95, max: latencies.at(-1)!, statuses, values };
      },
      ({ seen, p95, max }) =>
        `attacker ${[...seen].map(([outcome, times]) => `${outcome}×${times}`).join(", ")}; victim add_numbers p95 ${p95.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
    );
    expect(
      result.statuses.filter((status) => status !== 200),
      "the victim's refused calls",
    ).toEqual([]);
    expect(result.values).toEqual(Array.from({ length: victimCalls }, (_, i) => i + 1));
    expect(result.p95, "the victim's add_numbers p95 (ms)").toBeLessThan(MAX_BLOCK_MS);
    return result;
  };

  /**
   * Script threads terminated mid-run so far (all terminated less the idle ones retired): a
   * cancelled or timed-out run stops on its own thread, so a chain ended by its root's deadline,
   * budget or caller starts and stops no thread.
   */
  const threadsKilled = async () => {
    const { scripts } = (await (await target.request("/v1/metrics")).json()) as {
      scripts: { workers: { terminated: number; retired: number } };
    };
    const { terminated, retired } = scripts.workers;
    expect([terminated, retired], "the script pool's thread counts").toEqual([
      expect.any(Number),
      expect.any(Number),
    ]);
    return terminated - retired;
  };

  /** An outcome in a word: the HTTP status and the tool's error or problem code. */
  const outcomeOf = (answer: { status: number; body: Record<string, unknown> }) =>
    `${answer.status} ${String(answer.body.error ?? answer.body.code ?? "ok")}`;

  beforeAll(async () => {
    target = await startTarget();
    attacker = await target.token_("evil", ["read"]);
    victim = await target.token_("good", ["read"]);
    snake = await target.token_("snake", ["read"]);
    const put = async (path: string, body: string) => {
      const answer = await target.request(path, {
        method: "PUT",
        headers: { "content-type": "application/yaml" },
        body,
      });
      expect(answer.status, await answer.clone().text()).toBeLessThan(300);
    };
    await put(`${GOOD}/tools/add_numbers`, ADD_NUMBERS);
    await put(
      `${SNAKE}/tools/ouroboros`,
      [
        "type: scripted",
        "description: calls itself, and again when refused",
        "parameters:",
        "  timeoutMs: 10000",
        "  inputs: []",
        `  source: ${JSON.stringify('for (;;) { try { vance.tools.call("ouroboros", {}) } catch (e) { if (e.name === "CallBudgetExceeded") throw e } }')}`,
      ].join("\n"),
    );
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  it.runIf(process.platform === "linux")(
    "the server's script threads run 10 nice levels below its serving thread, which keeps its own",
    async () => {
      // One scripted call: the pool has started its threads.
      expect(
        (await call(`${GOOD}/tools/add_numbers/invoke`, victim, { params: { a: 1, b: 2 } })).body,
      ).toMatchObject({ value: 3 });
      type Workers = { idle: number; busy: number; starting: number };
      const workers = async () =>
        ((await (await target.request("/v1/metrics")).json()) as { scripts: { workers: Workers } }).scripts
          .workers;
      const yielding = () => [...threadNices(target.pid).values()].filter((nice) => nice === 10).length;
      // Every thread the script pool holds yields, and nothing else does (no parse thread started yet).
      await expect
        .poll(async () => {
          const { idle, busy, starting } = await workers();
          return starting === 0 && yielding() === idle + busy;
        })
        .toBe(true);
      expect(yielding()).toBeGreaterThan(0);
      expect(threadNices(target.pid).get(target.pid), "the serving thread").toBe(0);
    },
  );

  it("four execute_javascript programs of a read-role process, calling themselves 8 deep and retrying when refused", async () => {
    const spawned = await call(`${EVIL}/processes`, attacker, {
      engine: "attacker",
      allowedToolsAdd: ["execute_javascript"],
      models: [],
    });
    expect(spawned.status).toBe(201);
    const processId = String(spawned.body.processId);
    const killedBefore = await threadsKilled();
    // The program calls itself (its own source travels in SELF) and retries whatever is refused
    // but the end of its call budget.
    const body = `for (;;) { try { vance.tools.call("execute_javascript", { code: "const SELF = " + JSON.stringify(SELF) + "; " + SELF, timeoutMs: 10000 }) } catch (e) { if (e.name === "CallBudgetExceeded") throw e } }`;
    const program = `const SELF = ${JSON.stringify(body)}; ${body}`;
    const { seen } = await underAttack(
      "4 × execute_javascript calling itself, retrying refusals",
      4,
      async () =>
        outcomeOf(
          await call(`${EVIL}/processes/${processId}/invoke`, attacker, {
            name: "execute_javascript",
            params: { code: program, timeoutMs: 10_000 },
          }),
        ),
    );
    // Its nested runs met the tenant's share of threads: refused at once, not waited for.
    const metrics = (await (await target.request("/v1/metrics")).json()) as { scripts: { busy: number } };
    expect(metrics.scripts.busy).toBeGreaterThan(0);
    // Every chain it cancelled (its root's deadline or budget) ended on its threads: none terminated.
    expect(await threadsKilled(), "script threads terminated mid-run").toBe(killedBefore);
    // What the attacker met: its budget's end, or its tenant's time spent — never a success.
    for (const outcome of seen.keys()) {
      expect(["200 CallBudgetExceeded", "429 rate_limited", "429 busy", "200 TimeoutError"]).toContain(
        outcome,
      );
    }
  });

  it("a read token's flood of spawns, four in flight, each with fresh client schemas of 2,979 nodes", async () => {
    let spawns = 0;
    /** One client tool's schema of 993 nodes, 60 of its properties with a pattern, none seen before. */
    const freshSchema = (tag: string) => ({
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 330 }, (_, i) => [
          `${tag}_${i}`,
          i < 60 ? { type: "string", pattern: `^${tag}${i}[a-z]*$` } : { type: "integer", minimum: i },
        ]),
      ),
    });
    const { seen } = await underAttack(
      "spawn flood with fresh client schemas (read token, 4 in flight)",
      4,
      async () => {
        const tag = `s${++spawns}x${Math.random().toString(36).slice(2, 8)}`;
        const answer = await call(`${EVIL}/processes`, attacker, {
          engine: "attacker",
          models: [],
          clientTools: [0, 1, 2].map((i) => ({
            name: `client_${i}`,
            description: "a client tool",
            inputSchema: freshSchema(`${tag}t${i}`),
          })),
        });
        return outcomeOf(answer);
      },
    );
    // Each spawn compiled (201) or waited its tenant's turn in vain or past its time (429) — nothing else.
    for (const outcome of seen.keys()) expect(["201 ok", "429 busy", "429 rate_limited"]).toContain(outcome);
    expect(seen.get("201 ok")).toBeGreaterThan(0);
  });

  it("a scripted tool calling itself, four at once, retrying when refused", async () => {
    const killedBefore = await threadsKilled();
    const { seen } = await underAttack("4 × scripted ouroboros calling itself", 4, async () =>
      outcomeOf(await call(`${SNAKE}/tools/ouroboros/invoke`, snake, { params: {} })),
    );
    for (const outcome of seen.keys()) {
      expect(["200 CallBudgetExceeded", "429 rate_limited", "429 busy", "200 TimeoutError"]).toContain(
        outcome,
      );
    }
    expect(await threadsKilled(), "script threads terminated mid-run").toBe(killedBefore);
  });
});
