import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { StateStore } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

const HOUR_MS = 3_600_000;
/** The idle TTL these tests set (`VANCE_PROCESS_IDLE_TTL_SECONDS`): one hour. */
const TTL_MS = HOUR_MS;

/** A SQLite state store whose `touchProcess` calls are counted (a proxy, so every port method is seen). */
function countingState(): { store: StateStore; touches: () => number; close: () => void } {
  const sqlite = new SqliteStateStore(":memory:");
  let touches = 0;
  const store = new Proxy(sqlite, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property !== "touchProcess") return value.bind(target);
      return (...args: unknown[]) => {
        touches++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, touches: () => touches, close: () => sqlite.close() };
}

const opened: { close: () => void }[] = [];
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
});

async function setup(env: Record<string, string> = {}) {
  const now = { t: Date.UTC(2026, 0, 5, 10, 0, 0) };
  const state = countingState();
  opened.push(state);
  const { app } = await testApp({
    state: state.store,
    now: () => now.t,
    env: { VANCE_PROCESS_IDLE_TTL_SECONDS: String(TTL_MS / 1000), ...env },
  });
  return { now, touches: state.touches, client: await projectClient(app) };
}

describe("processes expire after the idle TTL (VANCE_PROCESS_IDLE_TTL_SECONDS)", () => {
  it("a process read before its TTL lives on; one left alone for the TTL answers 404 process_not_found to every request", async () => {
    const { now, client } = await setup();
    const { processId } = await client.spawn({});
    const spawnedAt = now.t;
    expect((await client.process(processId)).expiresAt).toBe(spawnedAt + TTL_MS);

    // Read a minute before it would expire: the read moves its expiry a full TTL on.
    now.t += TTL_MS - 60_000;
    expect((await client.call("GET", `/processes/${processId}/manifest`)).status).toBe(200);
    now.t += TTL_MS - 60_000;
    expect((await client.call("POST", `/processes/${processId}/invoke`, { name: "tool_list" })).status).toBe(
      200,
    );
    expect((await client.process(processId)).expiresAt).toBe(now.t + TTL_MS);

    now.t += TTL_MS;
    const answers = [
      await client.call("GET", `/processes/${processId}`),
      await client.call("GET", `/processes/${processId}/manifest`),
      await client.call("POST", `/processes/${processId}/invoke`, { name: "tool_list" }),
      await client.call("DELETE", `/processes/${processId}`),
    ];
    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual([
      [404, "process_not_found"],
      [404, "process_not_found"],
      [404, "process_not_found"],
      [404, "process_not_found"],
    ]);
  });

  it("a busy process writes its expiry once per hundredth of the TTL, not once per request", async () => {
    const { now, touches, client } = await setup();
    const { processId } = await client.spawn({});
    // 36 s is a hundredth of the hour: 40 requests 1 s apart fall within the first span, then past it.
    for (let i = 0; i < 40; i++) {
      now.t += 1_000;
      expect((await client.call("GET", `/processes/${processId}/manifest`)).status).toBe(200);
    }
    expect(touches()).toBe(1);
    for (let i = 0; i < 40; i++) {
      now.t += 1_000;
      await client.call("POST", `/processes/${processId}/invoke`, { name: "tool_list" });
    }
    expect(touches()).toBe(2);
  });

  it("expired processes no longer count against VANCE_QUOTA_LIVE_PROCESSES: a spawn at the quota counts them out", async () => {
    const { now, client } = await setup({ VANCE_QUOTA_LIVE_PROCESSES: "3" });
    const first = await client.spawn({});
    await client.spawn({});
    now.t += TTL_MS / 2;
    const third = await client.spawn({});
    const refused = await client.call("POST", "/processes", { models: [] });
    expect([refused.status, refused.body.code, refused.body.quota]).toEqual([
      429,
      "quota_exceeded",
      "liveProcesses",
    ]);

    // The first two expire; the first was read meanwhile and lives on, the third is younger.
    now.t += TTL_MS / 4;
    expect((await client.call("GET", `/processes/${first.processId}`)).status).toBe(200);
    now.t += TTL_MS / 2;
    expect((await client.call("POST", "/processes", { models: [] })).status).toBe(201);
    const full = await client.call("POST", "/processes", { models: [] });
    expect([full.status, full.body.code]).toEqual([429, "quota_exceeded"]);

    // An ended process gives its place back as before; an expired one has none left to give.
    expect((await client.call("DELETE", `/processes/${third.processId}`)).status).toBe(204);
    expect((await client.call("POST", "/processes", { models: [] })).status).toBe(201);
  });
});
