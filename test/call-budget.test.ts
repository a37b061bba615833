import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { CountingObjectStore } from "@vance/adapters/testing";
import {
  createNetworkPolicy,
  JsonSchemaValidator,
  type ScriptRunner,
  type ScriptRunRequest,
  ToolDispatcher,
  type ToolRuntime,
} from "@vance/core";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { snapshotting, toolServices } from "./support/fixtures";

function scripted(source: string, inputs = "[]", timeoutMs = 5000) {
  return `type: scripted\ndescription: test script\nparameters:\n  timeoutMs: ${timeoutMs}\n  inputs: ${inputs}\n  source: ${JSON.stringify(source)}\n`;
}

/** `invoke_tool` params that nest `levels` more `invoke_tool` calls around a call of `whoami`. */
function nestedInvokes(levels: number): Record<string, unknown> {
  let params: Record<string, unknown> = { name: "whoami", params: {} };
  for (let level = 0; level < levels; level++) params = { name: "invoke_tool", params };
  return params;
}

async function countingApp() {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-budget-"));
  const documents = new CountingObjectStore(new FsObjectStore(join(dataDir, "documents")));
  const { app } = await testApp({ dataDir, documents });
  return { app, documents, client: await projectClient(app) };
}

describe("one call budget for every nested path (over HTTP)", () => {
  it("invoke_tool calling invoke_tool 20 deep answers CallDepthExceeded at once, reading (almost) nothing", async () => {
    const { documents, client } = await countingApp();
    const { processId } = await client.spawn({ engineDefault: ["invoke_tool", "whoami"] });

    // 7 nested invoke_tool calls put whoami at depth 8: the deepest call allowed.
    const deepest = await client.invoke(processId, "invoke_tool", nestedInvokes(7));
    expect(deepest.status).toBe(200);
    expect(deepest.body.value).toMatchObject({ tenant: "acme", processId });

    documents.reset();
    const { status, body } = await client.invoke(processId, "invoke_tool", nestedInvokes(20));
    expect(status).toBe(200);
    expect(body.error).toBe("CallDepthExceeded");
    expect(String(body.message)).toContain("at most 8 deep");
    // Built-in names resolve without a read, and a refused call is refused before it reads anything.
    expect(documents.total).toBe(0);
  });

  it("script → invoke_tool → script → … is counted in one budget: the chain stops 8 calls down", async () => {
    const { client } = await countingApp();
    await client.putTool(
      "relay",
      scripted(
        'let r; try { r = vance.tools.call("invoke_tool", { name: "relay", params: { n: n + 1 } }); } catch (e) { r = { deepest: n, error: e.name }; } r',
        "[{ name: n, type: number }]",
      ),
    );
    const { processId } = await client.spawn({ engineDefault: ["relay", "invoke_tool"] });
    const { status, body } = await client.invoke(processId, "relay", { n: 0 });
    expect(status).toBe(200);
    // relay runs at depths 0, 2, 4, 6, 8 (invoke_tool at 1, 3, 5, 7): five runs, then the ninth level is refused.
    expect(body.value).toEqual({ deepest: 4, error: "CallDepthExceeded" });
  });

  it("a script calling a cheap sibling 2,000 times in a loop is cut off after 1,000 nested calls", async () => {
    const { client } = await countingApp();
    await client.putTool(
      "fan_out",
      scripted(
        'let ok = 0; let error = null; for (let i = 0; i < 2000; i++) { try { vance.tools.call("whoami", {}); ok++; } catch (e) { error = e.name; break; } } ({ ok, error })',
        "[]",
        20_000,
      ),
    );
    await client.putTool(
      "fan_out_unguarded",
      scripted('for (let i = 0; i < 2000; i++) vance.tools.call("whoami", {}); "done"', "[]", 20_000),
    );

    const counted = await client.call("POST", "/tools/fan_out/invoke", { params: {} });
    expect(counted.status).toBe(200);
    expect(counted.body.value).toEqual({ ok: 1000, error: "CallBudgetExceeded" });

    const unguarded = await client.call("POST", "/tools/fan_out_unguarded/invoke", { params: {} });
    expect(unguarded.status).toBe(200);
    expect(unguarded.body.error).toBe("CallBudgetExceeded");
    // The budget belongs to one top-level call: the next request starts afresh.
    expect((await client.call("POST", "/tools/fan_out/invoke", { params: {} })).body.value).toEqual({
      ok: 1000,
      error: "CallBudgetExceeded",
    });
  });
});

describe("ToolDispatcher callLimits", () => {
  /** A dispatcher whose scripts are `run`, over an in-memory cascade holding one script tool `caller`. */
  async function dispatcherWith(
    run: ScriptRunner["run"],
    callLimits: { maxCalls?: number; maxDepth?: number },
  ) {
    const { tools, cascade } = toolServices();
    await tools.put("acme", "shop", "caller", scripted('vance.tools.call("whoami", {})'));
    const runtime: ToolRuntime = {
      fetch: () => Promise.reject(new Error("no network in this test")),
      resolveHost: async () => [],
      scripts: { run },
      now: () => Date.now(),
    };
    const dispatcher = new ToolDispatcher({
      cascade,
      runtime,
      environment: { networkPolicy: createNetworkPolicy([]), jsonSchemas: new JsonSchemaValidator() },
      secrets: { lookupFor: () => async () => undefined },
      callLimits,
    });
    return snapshotting(dispatcher, tools);
  }
  const call = {
    caller: { tenant: "acme", project: "shop" },
    name: "caller",
    params: {},
    allowedTools: null,
  };

  it("a lowered fan-out budget cuts the loop at its number", async () => {
    const loop = async (request: ScriptRunRequest) => {
      for (let i = 0; i < 2000; i++) {
        const outcome = await request.callTool!("whoami", {}, request.signal);
        if ("error" in outcome) return { ok: false as const, error: outcome.error, message: `after ${i}` };
      }
      return { ok: true as const, value: "never stopped" };
    };
    const dispatcher = await dispatcherWith(loop, { maxCalls: 50 });
    expect(await dispatcher.invoke(call)).toMatchObject({ error: "CallBudgetExceeded", message: "after 50" });
  });

  it("a script that calls itself and retries every refusal spends one tally: its attempts stop at 1,000", async () => {
    let attempts = 0;
    let runs = 0;
    // Each run calls `caller` (itself) again and retries whatever is refused, but the budget's end.
    const selfCalling = async (request: ScriptRunRequest) => {
      runs++;
      for (let i = 0; i < 5_000; i++) {
        attempts++;
        const outcome = await request.callTool!("caller", {}, request.signal);
        if ("error" in outcome && outcome.error === "CallBudgetExceeded") {
          return { ok: false as const, error: outcome.error, message: outcome.message };
        }
      }
      return { ok: true as const, value: "never stopped" };
    };
    const dispatcher = await dispatcherWith(selfCalling, {});
    expect(await dispatcher.invoke(call)).toMatchObject({ error: "CallBudgetExceeded" });
    // 1,000 charged attempts (runs and depth refusals alike), then one refusal per level ends it.
    expect(attempts).toBeGreaterThan(1_000);
    expect(attempts).toBeLessThanOrEqual(1_000 + 9);
    expect(runs).toBeLessThanOrEqual(1_000 + 1);
  });

  it("RateLimited is a 429 rate_limited for the top-level call, with the wait it named", async () => {
    const limited = async () => ({
      ok: false as const,
      error: "RateLimited",
      message: "tenant 'acme' spent its script time",
      retryAfterMs: 12_300,
    });
    const dispatcher = await dispatcherWith(limited, {});
    await expect(dispatcher.invoke(call)).rejects.toMatchObject({
      code: "rate_limited",
      status: 429,
      extra: { retryAfterSeconds: 13 },
    });
  });

  it("Busy is a 429 only for the top-level call; a nested call sees it as an error value", async () => {
    const busy = async () => ({ ok: false as const, error: "Busy", message: "the tenant's runs are full" });
    const dispatcher = await dispatcherWith(busy, {});
    await expect(dispatcher.invoke(call)).rejects.toMatchObject({ code: "busy", status: 429 });
  });
});

describe("Busy inside invoke_tool (over HTTP)", () => {
  it("a nested invoke_tool's Busy reaches the calling script as Busy, not as a refused top-level call", async () => {
    // `outer` calls invoke_tool → `inner`; every run of `inner` finds the sandbox full.
    const scripts: ScriptRunner = {
      async run(request) {
        if (!request.callTool) return { ok: false, error: "Busy", message: "the tenant's runs are full" };
        const outcome = await request.callTool("invoke_tool", { name: "inner", params: {} }, request.signal);
        return { ok: true, value: { saw: "error" in outcome ? outcome.error : "value" } };
      },
    };
    const { app } = await testApp({ scripts });
    const client = await projectClient(app);
    await client.putTool("outer", scripted('vance.tools.call("invoke_tool", {})'));
    await client.putTool("inner", scripted('"unreached"'));
    const { processId } = await client.spawn({ engineDefault: ["outer", "inner", "invoke_tool"] });

    const nested = await client.invoke(processId, "outer", {});
    expect(nested.status).toBe(200);
    expect(nested.body.value).toEqual({ saw: "Busy" });
    const top = await client.invoke(processId, "inner", {});
    expect(top.status).toBe(429);
    expect(top.body.code).toBe("busy");
  });
});
