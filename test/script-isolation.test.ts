import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ScriptRunner } from "@vance/core";
import { DEFAULT_WORKER_URL, ScriptPool } from "@vance/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../functions/api/config";
import { scriptPool } from "../functions/api/services";
import { bearer, testApp } from "./support/app";
import { ADD_NUMBERS } from "./support/spec-examples";

// The attacks of issue 8, over HTTP: each ends in its own bounded error while /v1/health and
// other tenants keep being served.

type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let pool: ScriptPool;
/** Every run's timeoutMs and outcome, nested runs included, in the order they ended. */
const outcomes: { timeoutMs: number; outcome: Awaited<ReturnType<ScriptRunner["run"]>> }[] = [];
let attacker: Record<string, string>;
let victim: Record<string, string>;

const ATTACKER = "/v1/tenants/evil/projects/p";
const VICTIM = "/v1/tenants/good/projects/p";

function scripted(source: string, timeoutMs: number, inputs = "[]") {
  return `type: scripted\ndescription: test script\nparameters:\n  timeoutMs: ${timeoutMs}\n  inputs: ${inputs}\n  source: ${JSON.stringify(source)}\n`;
}

async function put(base: string, headers: Record<string, string>, name: string, yaml: string) {
  const res = await app.request(`${base}/tools/${name}`, {
    method: "PUT",
    body: yaml,
    headers: { ...headers, "content-type": "application/yaml" },
  });
  if (res.status >= 300) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
}

async function invoke(base: string, headers: Record<string, string>, name: string, params: unknown = {}) {
  const res = await app.request(`${base}/tools/${name}/invoke`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ params }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/**
 * `/v1/health` asked one request after another until `attack` settles (each must answer 200), and
 * the attack's result; `answered`: health answers that came while the attack still ran.
 */
async function healthDuring<T>(attack: Promise<T>): Promise<{ result: T; answered: number }> {
  let done = false;
  let answered = 0;
  const sampler = (async () => {
    while (!done) {
      const res = await app.request("/v1/health");
      expect(res.status).toBe(200);
      if (!done) answered++;
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const result = await attack.finally(() => {
    done = true;
  });
  await sampler;
  return { result, answered };
}

beforeAll(async () => {
  pool = await ScriptPool.create({
    warmWorkers: 2,
    maxRunsPerTenant: 4,
    maxQueuedPerTenant: 4,
    maxWorkers: 24,
  });
  const recording: ScriptRunner & Pick<ScriptPool, "stats"> = {
    run: async (request) => {
      const outcome = await pool.run(request);
      outcomes.push({ timeoutMs: request.timeoutMs, outcome });
      return outcome;
    },
    stats: () => pool.stats(),
  };
  ({ app } = await testApp({ scripts: recording }));
  attacker = await bearer({ tenant: "evil", roles: ["read", "write"] });
  victim = await bearer({ tenant: "good", roles: ["read", "write"] });
  await put(VICTIM, victim, "add_numbers", ADD_NUMBERS);
  await put(ATTACKER, attacker, "regex_bomb", scripted("/^(a+)+$/.test('a'.repeat(40) + '!')", 1000));
  await put(ATTACKER, attacker, "spin", scripted("while (true) {}", 1000));
  await put(ATTACKER, attacker, "spin_long", scripted("while (true) {}", 30000));
  await put(ATTACKER, attacker, "calls_spin", scripted("vance.tools.call('spin_long', {})", 300));
  await put(ATTACKER, attacker, "echo", scripted("({ got: x })", 1000, "[{ name: x, type: number }]"));
  await put(
    ATTACKER,
    attacker,
    "deep_then_call",
    scripted(
      "function f(n) { return n === 0 ? vance.tools.call('echo', { x: 7 }).got : 1 + f(n - 1); } f(2000)",
      5000,
    ),
  );
});

afterAll(() => pool.close());

describe("scripts cannot stall the service", () => {
  it("ends a catastrophic regex with TimeoutError at its timeoutMs while health answers", async () => {
    const { result, answered } = await healthDuring(invoke(ATTACKER, attacker, "regex_bomb"));
    expect(result).toMatchObject({
      status: 200,
      body: { error: "TimeoutError", message: "script exceeded its deadline of 1000 ms" },
    });
    // Health was served while the regex ran on its thread.
    expect(answered).toBeGreaterThan(0);
  });

  it.each([10, 100])(
    "serves another tenant's add_numbers while one tenant runs %i endless loops at once",
    async (parallel) => {
      const flood = Promise.all(Array.from({ length: parallel }, () => invoke(ATTACKER, attacker, "spin")));
      const victimCalls = (async () => {
        const answers = [];
        for (let i = 0; i < 10; i++)
          answers.push(await invoke(VICTIM, victim, "add_numbers", { a: i, b: 1 }));
        return answers;
      })();
      const { result, answered } = await healthDuring(Promise.all([flood, victimCalls]));
      const [floodAnswers, victimAnswers] = result;
      expect(victimAnswers.map((answer) => answer.body.value)).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
      expect(answered).toBeGreaterThan(0);
      // 4 run and 4 wait their turn, each at most its own 1 s deadline (on a loaded machine it
      // may pass before a slot frees); the rest are told at once to come back later.
      const timedOut = floodAnswers.filter(
        (answer) => answer.status === 200 && answer.body.error === "TimeoutError",
      );
      const busy = floodAnswers.filter((answer) => answer.status === 429);
      expect(timedOut.length).toBeGreaterThanOrEqual(4);
      expect(timedOut.length).toBeLessThanOrEqual(8);
      expect(busy).toHaveLength(parallel - timedOut.length);
      for (const answer of busy) {
        expect(answer.body).toMatchObject({ code: "busy", status: 429 });
        expect(answer.retryAfter).toBe("1");
      }
    },
  );

  it("cancels a nested endless loop when its caller times out, freeing its thread", async () => {
    const answer = await invoke(ATTACKER, attacker, "calls_spin");
    expect(answer.body).toMatchObject({ error: "TimeoutError" });
    // The thread frees once the cancel lands: wait for that state, not for a fixed second.
    await vi.waitFor(() => expect(pool.stats().workers.busy).toBe(0), { timeout: 50_000, interval: 10 });
    // The nested run (its own timeoutMs is 30 s) ended as Cancelled: the cancel freed the
    // thread, not its timeout.
    const nested = outcomes.filter((run) => run.timeoutMs === 30_000).map((run) => run.outcome);
    expect(nested).toMatchObject([{ ok: false, error: "Cancelled" }]);
  });

  it("returns a sibling's answer from 2,000 frames deep", async () => {
    expect((await invoke(ATTACKER, attacker, "deep_then_call")).body).toMatchObject({ value: 2007 });
  });
});

describe("VANCE_SCRIPT_WORKER", () => {
  it("points the pool at a shipped copy of the bundle, and a missing file fails at start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-worker-"));
    copyFileSync(fileURLToPath(DEFAULT_WORKER_URL), join(dir, "script-worker.mjs"));
    const shipped = await scriptPool(loadConfig({ VANCE_SCRIPT_WORKER: join(dir, "script-worker.mjs") }));
    try {
      expect(await shipped.run({ source: "6 * 7", inputs: {}, timeoutMs: 1000 })).toEqual({
        ok: true,
        value: 42,
      });
    } finally {
      await shipped.close();
    }
    await expect(scriptPool(loadConfig({ VANCE_SCRIPT_WORKER: join(dir, "missing.mjs") }))).rejects.toThrow();
  });
});

describe("a tenant's script time per minute", () => {
  it("answers 429 rate_limited with Retry-After once the tenant spent it, and serves another tenant", async () => {
    const limited = await ScriptPool.create({ warmWorkers: 1, workerSecondsPerMinute: 1 });
    try {
      const { app: limitedApp } = await testApp({ scripts: limited });
      const call = async (base: string, headers: Record<string, string>, name: string, params = {}) => {
        const res = await limitedApp.request(`${base}/tools/${name}/invoke`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ params }),
        });
        return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
      };
      for (const [base, headers] of [
        [ATTACKER, attacker],
        [VICTIM, victim],
      ] as const) {
        const res = await limitedApp.request(`${base}/tools/add_numbers`, {
          method: "PUT",
          body: ADD_NUMBERS,
          headers: { ...headers, "content-type": "application/yaml" },
        });
        expect(res.status).toBeLessThan(300);
      }
      const spinSource = scripted("while (true) {}", 1200);
      await limitedApp.request(`${ATTACKER}/tools/spin`, {
        method: "PUT",
        body: spinSource,
        headers: { ...attacker, "content-type": "application/yaml" },
      });
      expect((await call(ATTACKER, attacker, "spin")).body).toMatchObject({ error: "TimeoutError" });
      const refused = await call(ATTACKER, attacker, "add_numbers", { a: 1, b: 2 });
      expect(refused).toMatchObject({
        status: 429,
        body: { code: "rate_limited", detail: expect.stringContaining("1 s of script time per minute") },
      });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(await call(VICTIM, victim, "add_numbers", { a: 1, b: 2 })).toMatchObject({
        status: 200,
        body: { value: 3 },
      });
    } finally {
      await limited.close();
    }
  });
});
