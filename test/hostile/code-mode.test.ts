import { type ChildProcess, spawn } from "node:child_process";
import { createInterface, type Interface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, startLocalServer } from "../support/local-server";

// Attack cases for code mode (issue 29): a model's program in `execute_javascript` that loops
// forever, runs a catastrophic regex, fans out 100,000 tool calls or allocates without end
// ends at its limit, while /v1/health, polled from a process of its own, keeps answering: no
// health request waits a second. The server runs as `npm start` runs it (its own script pool).

/** The one timing bound of the attack suite: a freeze here is seconds, so it holds on a loaded machine. */
const MAX_BLOCK_MS = 1_000;

/**
 * Polls GET /v1/health in a loop, each request after the one before (a blocked event loop shows
 * as one long request), 20 ms apart; "report" answers the longest wait since the last report.
 */
const POLLER = `
import http from "node:http";
import { createInterface } from "node:readline";
const url = new URL("/v1/health", process.argv[1]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let waits = [];
let pending = null;
const once = () => new Promise((resolve) => {
  const started = performance.now();
  const request = http.get(url, { agent }, (response) => {
    response.resume();
    response.on("end", () => resolve({ ms: performance.now() - started, ok: response.statusCode === 200 }));
  });
  request.on("error", () => resolve({ ms: performance.now() - started, ok: false }));
});
(async () => { for (;;) { pending = once(); waits.push(await pending); await new Promise((r) => setTimeout(r, 20)); } })();
createInterface({ input: process.stdin }).on("line", async () => {
  if (pending) waits.push(await pending);
  const maxMs = Math.max(0, ...waits.map((wait) => wait.ms));
  process.stdout.write(JSON.stringify({ count: waits.length, failed: waits.filter((w) => !w.ok).length, maxMs }) + "\\n");
  waits = [];
});
process.stdin.on("end", () => process.exit(0));
`;

class HealthPoller {
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];

  constructor(private readonly child: ChildProcess) {
    this.lines = createInterface({ input: child.stdout! });
    this.lines.on("line", (line) => this.waiting.shift()?.(line));
  }

  static start(base: string): HealthPoller {
    const child = spawn(process.execPath, ["--input-type=module", "-e", POLLER, base], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    return new HealthPoller(child);
  }

  /** The polls since the last report: how many, how many failed, the longest wait. */
  async report(): Promise<{ count: number; failed: number; maxMs: number }> {
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.child.stdin!.write("report\n");
    return JSON.parse(await answer);
  }

  stop(): void {
    this.child.stdin!.end();
    if (this.child.exitCode === null) this.child.kill();
  }
}

let server: LocalServer;
let poller: HealthPoller;
let processId: string;
const T = "/v1/tenants/acme/projects/attack";

async function request(
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs `code` in the process while the poller watches; asserts health kept answering within the bound. */
async function attack(code: string, timeoutMs: number) {
  await poller.report();
  const answer = await request(`${T}/processes/${processId}/invoke`, {
    name: "execute_javascript",
    params: { code, timeoutMs },
  });
  const health = await poller.report();
  expect(health.count, "the health poller got answers").toBeGreaterThan(0);
  expect(health.failed).toBe(0);
  expect(health.maxMs, "no health request waited a second").toBeLessThan(MAX_BLOCK_MS);
  expect(answer.status).toBe(200);
  return answer.body;
}

beforeAll(async () => {
  server = await startLocalServer();
  poller = HealthPoller.start(server.base);
  const spawned = await request(`${T}/processes`, {
    engine: "attacker",
    allowedToolsAdd: ["execute_javascript", "whoami"],
    models: [],
  });
  expect(spawned.status).toBe(201);
  processId = String(spawned.body.processId);
}, 60_000);

afterAll(() => {
  poller?.stop();
  server?.stop();
});

describe("code mode under attack: each program ends at its limit, health keeps answering", () => {
  it("an endless loop ends at its deadline", async () => {
    const answer = await attack("let n = 0; for (;;) { n++ }", 1_500);
    expect(answer).toMatchObject({ error: "TimeoutError", message: expect.stringContaining("1500 ms") });
  });

  it("a catastrophic regex (QuickJS never interrupts one) ends when its thread is terminated", async () => {
    const answer = await attack(`console.log("start"); /^(a+)+$/.test("a".repeat(45) + "!")`, 1_000);
    expect(answer).toMatchObject({ error: "TimeoutError", message: expect.stringContaining('"start"') });
  });

  it("a 100,000-call fan-out stops at the call budget: 1,000 calls run, the rest refused in the sandbox", async () => {
    const answer = await attack(
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
    const uncaught = await attack(`for (;;) vance.tools.call("whoami", {})`, 30_000);
    expect(uncaught).toMatchObject({ error: "CallBudgetExceeded" });
    // Each call that ran counts as usage, once per call.
    const usage = await request(`${T}/insights/tool-usage`);
    const tools = (usage.body.roles as { role: string; tools: { name: string; calls: number }[] }[])[0]!
      .tools;
    expect(tools.find((tool) => tool.name === "whoami")?.calls).toBe(2_000);
  });

  it("an allocation without end stops at the memory limit", async () => {
    const answer = await attack(
      `const keep = []; for (;;) keep.push("x".repeat(1 << 20) + keep.length)`,
      10_000,
    );
    expect(answer).toMatchObject({ error: "MemoryError" });
  });
});
