import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { StateStore } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

/** The state-store methods that write; every other method only reads. */
const WRITES = [
  "createProcess",
  "touchProcess",
  "touchActivatedTools",
  "removeActivatedTools",
  "addToolUsage",
  "putObservedToolLimit",
  "bumpGeneration",
  "markOnce",
] as const;

/** A SQLite state store with its write calls counted (a proxy, so every port method is seen). */
function countingState(): {
  store: StateStore;
  sqlite: SqliteStateStore;
  writes: () => number;
  close: () => void;
} {
  const sqlite = new SqliteStateStore(":memory:");
  let writes = 0;
  const store = new Proxy(sqlite, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (!(WRITES as readonly (string | symbol)[]).includes(property)) return value.bind(target);
      return (...args: unknown[]) => {
        writes++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, sqlite, writes: () => writes, close: () => sqlite.close() };
}

const opened: { close: () => void }[] = [];
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
});

const doc = (description: string, extra = "") =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting_started.md\n${extra}`;

/** 160 client tools over openai's 127: every manifest demotes some. */
function clientTools() {
  return Array.from({ length: 160 }, (_, i) => ({
    name: `file_op${String(i).padStart(3, "0")}`,
    description: `The file tool ${i}.`,
    inputSchema: { type: "object" },
  }));
}

async function setup() {
  const now = { t: 1_000_000 };
  const state = countingState();
  opened.push(state);
  const { app, services } = await testApp({
    state: state.store,
    now: () => now.t,
    env: { VANCE_ACTIVATION_TTL_SECONDS: "600" },
  });
  // Usage is written behind the answers: flushed before counting, so only the GET's own writes count.
  const writes = async () => {
    await services.usage.flush();
    return state.writes();
  };
  /** The activations as stored, not as a read answers them. */
  const stored = async (processId: string) =>
    Object.keys(
      (await state.sqlite.getProcess({ tenant: "acme", project: "shop", processId }))?.activatedTools ?? {},
    );
  return { now, writes, stored, client: await projectClient(app) };
}

describe("a manifest GET writes nothing to the state store", () => {
  it("after its activations decayed: expiry is computed on read, and the decayed names go with the next write", async () => {
    const { now, writes, stored, client } = await setup();
    const names = ["notes_a", "notes_b", "notes_c"];
    for (const name of names) await client.putTool(name, doc(`Operation ${name}.`, "labels: [notes]\n"));
    const { processId } = await client.spawn({ allowedToolsAdd: ["@notes"] });
    await client.invoke(processId, "tool_description", { names });
    expect((await client.manifest(processId)).primary).toEqual([...names, "tool_description", "tool_list"]);

    now.t += 700_000;
    const before = await writes();
    const decayed = await client.manifest(processId);
    await client.manifest(processId);
    expect(decayed.primary).toEqual(["tool_description", "tool_list"]);
    expect((await writes()) - before).toBe(0);
    // The record reads as the manifest does: the decayed activations are gone from it.
    expect((await client.process(processId)).activatedTools).toEqual({});
    expect((await writes()) - before).toBe(0);
    expect((await stored(processId)).sort()).toEqual(names);

    // The next write of the activations takes the decayed names out of the stored record.
    await client.invoke(processId, "notes_b");
    expect(Object.keys((await client.process(processId)).activatedTools)).toEqual(["notes_b"]);
    expect(await stored(processId)).toEqual(["notes_b"]);
    expect((await client.manifest(processId)).primary).toEqual(["notes_b", "tool_description", "tool_list"]);
  });

  it("with demotions already logged: only a new outcome asks the fire-once gate", async () => {
    const { writes, client } = await setup();
    const { processId } = await client.spawn({ clientTools: clientTools(), models: ["openai/gpt-4.1"] });
    const spawned = await writes();
    const first = await client.manifest(processId);
    expect(first.demoted.length).toBeGreaterThan(0);
    // A new outcome: the `budget.demoted` line's fire-once marker, the one write a GET may make.
    expect((await writes()) - spawned).toBe(1);
    const before = await writes();
    for (let turn = 0; turn < 3; turn++) await client.manifest(processId);
    await client.manifest(processId, { format: "anthropic" });
    expect((await writes()) - before).toBe(0);
  });
});

describe("a call of an activated tool", () => {
  it("re-stamps its activation at most once per 1% of the TTL (6 s of 600 s): calls in between write no activation", async () => {
    const { now, client } = await setup();
    await client.putTool("notes_a", doc("Operation notes_a.", "labels: [notes]\n"));
    const { processId } = await client.spawn({ allowedToolsAdd: ["@notes"] });
    await client.invoke(processId, "tool_description", { names: ["notes_a"] });
    const stamp = async () => (await client.process(processId)).activatedTools.notes_a;
    const activated = await stamp();
    expect(activated).toBe(1_000_000);

    now.t += 5_000;
    expect((await client.invoke(processId, "notes_a")).status).toBe(200);
    expect(await stamp()).toBe(activated);

    now.t += 1_000;
    expect((await client.invoke(processId, "notes_a")).status).toBe(200);
    expect(await stamp()).toBe(1_006_000);
    expect((await client.manifest(processId)).primary).toEqual(["notes_a", "tool_description", "tool_list"]);
  });
});
