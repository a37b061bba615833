import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DescribeTimeToLiveCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { stateTableTtlAttribute } from "@vance/adapters";
import { createDynamoClient, DynamoStateStore, ensureStateTable } from "@vance/adapters/aws";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { ProcessKey, ProcessRecord, StateStore } from "@vance/core";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** A store under test, built around the suite's clock (epoch ms). */
type StoreFactory = (now: () => number) => Promise<{ store: StateStore; close: () => Promise<void> }>;

const START = Date.UTC(2025, 0, 1, 12, 0, 0);

function processRecord(key: ProcessKey, overrides: Partial<ProcessRecord> = {}): ProcessRecord {
  return {
    ...key,
    createdAt: "2025-01-01T12:00:00.000Z",
    recipe: "research",
    engine: null,
    role: "research",
    allowedTools: ["doc_lookup", "tool_description", "tool_list", "weather__today"],
    allowedPacks: ["gmail", "weather"],
    excludedTools: ["gmail__delete"],
    allowedToolsAdd: ["@weather"],
    allowedToolsKeep: ["doc_lookup"],
    allowedToolsDefer: ["weather__today"],
    allowedToolsDropFirst: [],
    models: ["openai/gpt-4.1", "anthropic/claude-sonnet"],
    clientTools: [
      {
        name: "open_file",
        description: "Opens a file in the editor",
        inputSchema: {
          type: "object",
          properties: { path: { type: "string" }, lines: { type: "array", items: { type: "integer" } } },
          required: ["path"],
          additionalProperties: false,
        },
      },
    ],
    activatedTools: {},
    ...overrides,
  };
}

/** The one contract every StateStore implementation must pass. */
function stateStoreContract(name: string, factory: StoreFactory): void {
  describe(`StateStore contract: ${name}`, () => {
    let store: StateStore;
    let close: () => Promise<void>;
    let nowMs = START;
    let sequence = 0;
    /** Every test works on its own tenant, marker and model names, so one store serves the suite. */
    const unique = (prefix: string) => `${prefix}-${++sequence}`;
    const newKey = (): ProcessKey => ({
      tenant: unique("tenant"),
      project: unique("project"),
      processId: randomUUID(),
    });

    beforeAll(async () => {
      ({ store, close } = await factory(() => nowMs));
    });
    afterAll(async () => {
      await close?.();
    });

    describe("processes", () => {
      it("returns a created process with every field, nested client tool schemas included", async () => {
        const key = newKey();
        const record = processRecord(key, { activatedTools: { weather__today: START } });
        expect(await store.createProcess(record)).toBe(true);
        expect(await store.getProcess(key)).toEqual(record);
      });

      it("keeps null recipe and empty lists as they were", async () => {
        const key = newKey();
        const record = processRecord(key, {
          recipe: null,
          engine: "vance-engine",
          role: "vance-engine",
          allowedToolsAdd: [],
          clientTools: [],
          models: [],
        });
        await store.createProcess(record);
        expect(await store.getProcess(key)).toEqual(record);
      });

      it("refuses a second create with the same id and leaves the first record unchanged", async () => {
        const key = newKey();
        const first = processRecord(key);
        expect(await store.createProcess(first)).toBe(true);
        expect(
          await store.createProcess(processRecord(key, { role: "intruder", allowedTools: ["evil"] })),
        ).toBe(false);
        expect(await store.getProcess(key)).toEqual(first);
      });

      it("answers null for an unknown process", async () => {
        expect(await store.getProcess(newKey())).toBeNull();
      });

      it("isolates processes by tenant and project", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key));
        expect(await store.getProcess({ ...key, tenant: unique("other-tenant") })).toBeNull();
        expect(await store.getProcess({ ...key, project: unique("other-project") })).toBeNull();
        const sameIdElsewhere = { ...key, project: unique("project") };
        expect(await store.createProcess(processRecord(sameIdElsewhere, { role: "elsewhere" }))).toBe(true);
        expect((await store.getProcess(key))?.role).toBe("research");
        expect((await store.getProcess(sameIdElsewhere))?.role).toBe("elsewhere");
      });

      it("does not confuse ids that only differ in where a '#' sits", async () => {
        const a: ProcessKey = { tenant: "t#1", project: "p", processId: "x" };
        const b: ProcessKey = { tenant: "t", project: "1#p", processId: "x" };
        const suffix = unique("");
        const ka = { ...a, processId: `x${suffix}` };
        const kb = { ...b, processId: `x${suffix}` };
        expect(await store.createProcess(processRecord(ka, { role: "a" }))).toBe(true);
        expect(await store.createProcess(processRecord(kb, { role: "b" }))).toBe(true);
        expect((await store.getProcess(ka))?.role).toBe("a");
        expect((await store.getProcess(kb))?.role).toBe("b");
      });

      it("deletes a process with its activations once: a second delete, or one of an unknown process, answers false", async () => {
        const key = newKey();
        const neighbour = { ...key, processId: unique("neighbour") };
        await store.createProcess(processRecord(key));
        await store.createProcess(processRecord(neighbour));
        await store.touchActivatedTools(key, ["a_tool"], START);
        expect(await store.deleteProcess(key)).toBe(true);
        expect(await store.getProcess(key)).toBeNull();
        expect(await store.touchActivatedTools(key, ["a_tool"], START)).toBe(false);
        expect(await store.deleteProcess(key)).toBe(false);
        expect(await store.deleteProcess(newKey())).toBe(false);
        expect(await store.getProcess(neighbour)).toEqual(processRecord(neighbour));
        // The id may be spawned again, and starts with no activations.
        expect(await store.createProcess(processRecord(key))).toBe(true);
        expect((await store.getProcess(key))?.activatedTools).toEqual({});
      });
    });

    describe("idle expiry", () => {
      // Expiries a year ahead: DynamoDB Local deletes items whose TTL attribute has passed (the
      // suite's fixed 2025 clock), so a record could vanish between two steps (a whole-suite run
      // saw a live process's delete answer false).
      const START = Math.ceil(Date.now() / 1000) * 1000 + 365 * 24 * 3600 * 1000;
      it("keeps a process's expiry, moves it on touch, and touches no unknown process", async () => {
        const key = newKey();
        const record = processRecord(key, { expiresAt: START + 60_000 });
        expect(await store.createProcess(record)).toBe(true);
        expect(await store.getProcess(key)).toEqual(record);
        expect(await store.touchProcess(key, START + 120_000)).toBe(true);
        expect(await store.getProcess(key)).toEqual({ ...record, expiresAt: START + 120_000 });
        const read = await store.getProcessAndGenerations(key, []);
        expect(read.process?.expiresAt).toBe(START + 120_000);
        const unknown = newKey();
        expect(await store.touchProcess(unknown, START + 120_000)).toBe(false);
        expect(await store.getProcess(unknown)).toBeNull();
      });

      it("counts a tenant's processes that have not expired, over every project, and the earliest expiry among them", async () => {
        const tenant = unique("tenant");
        const other = unique("tenant");
        const at = (project: string, expiresAt: number): ProcessKey & { expiresAt: number } => ({
          tenant,
          project,
          processId: randomUUID(),
          expiresAt,
        });
        const a = at("one", START + 1_000);
        const b = at("one", START + 2_000);
        const c = at("two", START + 3_000);
        for (const { expiresAt, ...key } of [a, b, c])
          await store.createProcess(processRecord(key, { expiresAt }));
        await store.createProcess(
          processRecord({ ...newKey(), tenant: other }, { expiresAt: START + 9_000 }),
        );
        expect(await store.countLiveProcesses(tenant, START)).toEqual({ live: 3, nextExpiry: START + 1_000 });
        expect(await store.countLiveProcesses(tenant, START + 1_500)).toEqual({
          live: 2,
          nextExpiry: START + 2_000,
        });
        // A touch moves an expiry on: b lives past c.
        expect(await store.touchProcess(b, START + 5_000)).toBe(true);
        expect(await store.countLiveProcesses(tenant, START + 2_500)).toEqual({
          live: 2,
          nextExpiry: START + 3_000,
        });
        expect(await store.countLiveProcesses(tenant, START + 5_000)).toEqual({ live: 0, nextExpiry: null });
        expect(await store.countLiveProcesses(unique("tenant"), START)).toEqual({
          live: 0,
          nextExpiry: null,
        });
      });

      it("a delete with liveAt answers false for a process that had expired by then, and deletes it all the same", async () => {
        const expired = newKey();
        const live = newKey();
        await store.createProcess(processRecord(expired, { expiresAt: START + 1_000 }));
        await store.createProcess(processRecord(live, { expiresAt: START + 9_000 }));
        expect(await store.deleteProcess(expired, START + 1_000)).toBe(false);
        expect(await store.getProcess(expired)).toBeNull();
        expect(await store.deleteProcess(live, START + 1_000)).toBe(true);
        expect(await store.getProcess(live)).toBeNull();
        expect(await store.countLiveProcesses(live.tenant, START)).toEqual({ live: 0, nextExpiry: null });
      });
    });

    describe("activated tools", () => {
      it("sets timestamps for the touched names and keeps the others", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key, { activatedTools: { old_tool: START - 5_000 } }));
        expect(await store.touchActivatedTools(key, ["weather__today", "weather__week"], START)).toBe(true);
        const record = await store.getProcess(key);
        expect(record?.activatedTools).toEqual({
          old_tool: START - 5_000,
          weather__today: START,
          weather__week: START,
        });
        expect(record?.allowedTools).toEqual(processRecord(key).allowedTools);
      });

      it("moves the time forward when a name is touched again", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key));
        await store.touchActivatedTools(key, ["a_tool", "b_tool"], START);
        await store.touchActivatedTools(key, ["a_tool", "a_tool"], START + 60_000);
        expect((await store.getProcess(key))?.activatedTools).toEqual({
          a_tool: START + 60_000,
          b_tool: START,
        });
      });

      it("accepts tool names with dots and dashes as plain map keys", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key));
        await store.touchActivatedTools(key, ["mcp.pack__op-1"], START);
        expect((await store.getProcess(key))?.activatedTools).toEqual({ "mcp.pack__op-1": START });
      });

      it("answers false for an unknown process and creates nothing", async () => {
        const key = newKey();
        expect(await store.touchActivatedTools(key, ["weather__today"], START)).toBe(false);
        expect(await store.touchActivatedTools(key, [], START)).toBe(false);
        expect(await store.getProcess(key)).toBeNull();
      });

      it("removes the named entries, ignores absent ones, and keeps the rest", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key));
        await store.touchActivatedTools(key, ["a_tool", "b_tool", "c_tool"], START);
        await store.removeActivatedTools(key, ["a_tool", "never_activated"]);
        const record = await store.getProcess(key);
        expect(record?.activatedTools).toEqual({ b_tool: START, c_tool: START });
        expect(record?.models).toEqual(processRecord(key).models);
      });

      it("removing from an unknown process creates nothing", async () => {
        const key = newKey();
        await store.removeActivatedTools(key, ["a_tool"]);
        expect(await store.getProcess(key)).toBeNull();
      });
    });

    describe("tool usage", () => {
      it("counts 50 concurrent calls on one key exactly", async () => {
        const tenant = unique("tenant");
        const key = { tenant, project: "p", role: "research", tool: "doc_lookup" };
        await Promise.all(Array.from({ length: 50 }, () => store.addToolUsage(key, { calls: 1, at: START })));
        expect(await store.listToolUsage(tenant, "p")).toEqual([
          { role: "research", tool: "doc_lookup", calls: 50, discoveryHits: 0, lastUsedAt: START },
        ]);
      });

      it("applies a delta resent with its token once, in order and out of order, and a new token again", async () => {
        const tenant = unique("tenant");
        const key = { tenant, project: "p", role: "r", tool: "t" };
        const token = randomUUID().replaceAll("-", "");
        // A resend after a lost answer: the same token and counts, three times.
        for (let i = 0; i < 3; i++)
          await store.addToolUsage(key, { calls: 2, discoveryHits: 1, at: START + 10, token });
        // An older timestamp takes the second write (counters only); resent, it still counts once.
        const late = randomUUID().replaceAll("-", "");
        for (let i = 0; i < 3; i++) await store.addToolUsage(key, { calls: 5, at: START, token: late });
        await store.addToolUsage(key, { calls: 1, at: START + 20, token: randomUUID().replaceAll("-", "") });
        expect(await store.listToolUsage(tenant, "p")).toEqual([
          { role: "r", tool: "t", calls: 8, discoveryHits: 1, lastUsedAt: START + 20 },
        ]);
      });

      it("counts discovery hits apart from calls", async () => {
        const tenant = unique("tenant");
        const key = { tenant, project: "p", role: "r", tool: "weather__today" };
        await store.addToolUsage(key, { discoveryHits: 1, at: START });
        await store.addToolUsage(key, { discoveryHits: 1, at: START + 1 });
        await store.addToolUsage(key, { calls: 3, at: START + 2 });
        const [row] = await store.listToolUsage(tenant, "p");
        expect(row).toMatchObject({ calls: 3, discoveryHits: 2 });
      });

      it("keeps lastUsedAt at the newest use when an older one arrives later", async () => {
        const tenant = unique("tenant");
        const key = { tenant, project: "p", role: "r", tool: "t" };
        await store.addToolUsage(key, { calls: 1, at: START + 10_000 });
        await store.addToolUsage(key, { calls: 1, at: START });
        await store.addToolUsage(key, { calls: 1, at: START + 5_000 });
        expect(await store.listToolUsage(tenant, "p")).toEqual([
          { role: "r", tool: "t", calls: 3, discoveryHits: 0, lastUsedAt: START + 10_000 },
        ]);
        await store.addToolUsage(key, { calls: 1, at: START + 20_000 });
        expect((await store.listToolUsage(tenant, "p"))[0]?.lastUsedAt).toBe(START + 20_000);
      });

      it("lists by role then tool, filters one role, and keeps projects apart", async () => {
        const tenant = unique("tenant");
        const uses: [string, string, string][] = [
          ["p", "zeta", "b_tool"],
          ["p", "alpha", "z_tool"],
          ["p", "zeta", "a_tool"],
          ["p", "alpha", "a_tool"],
          ["p", "alpha-2", "a_tool"],
          ["other", "alpha", "only_in_other"],
        ];
        for (const [project, role, tool] of uses) {
          await store.addToolUsage({ tenant, project, role, tool }, { calls: 1, at: START });
        }
        const listed = await store.listToolUsage(tenant, "p");
        expect(listed.map((r) => `${r.role}/${r.tool}`)).toEqual([
          "alpha/a_tool",
          "alpha/z_tool",
          "alpha-2/a_tool",
          "zeta/a_tool",
          "zeta/b_tool",
        ]);
        // "alpha" must not pick up the rows of role "alpha-2".
        expect((await store.listToolUsage(tenant, "p", "alpha")).map((r) => r.tool)).toEqual([
          "a_tool",
          "z_tool",
        ]);
        expect((await store.listToolUsage(tenant, "other")).map((r) => r.tool)).toEqual(["only_in_other"]);
        expect(await store.listToolUsage(unique("tenant"), "p")).toEqual([]);
      });

      it("keeps a role containing '#' apart from its prefix", async () => {
        const tenant = unique("tenant");
        await store.addToolUsage({ tenant, project: "p", role: "r", tool: "x#y" }, { calls: 1, at: START });
        await store.addToolUsage({ tenant, project: "p", role: "r#x", tool: "y" }, { calls: 2, at: START });
        expect((await store.listToolUsage(tenant, "p", "r")).map((r) => [r.tool, r.calls])).toEqual([
          ["x#y", 1],
        ]);
        expect((await store.listToolUsage(tenant, "p", "r#x")).map((r) => [r.tool, r.calls])).toEqual([
          ["y", 2],
        ]);
      });
    });

    describe("observed tool limits", () => {
      it("returns recorded limits by key, leaves unknown keys out, and lets a newer observation win (of any model)", async () => {
        const key = `*/${unique("gw")}`;
        const instance = key.slice(2);
        await store.putObservedToolLimit({ key, model: `${instance}/a`, maxTools: 128, observedAt: START });
        await store.putObservedToolLimit({
          key,
          model: `${instance}/b`,
          maxTools: 64,
          observedAt: START + 1_000,
        });
        expect(await store.getObservedToolLimits([key, `*/${unique("never-seen")}`])).toEqual([
          { key, model: `${instance}/b`, maxTools: 64, observedAt: START + 1_000 },
        ]);
      });

      it("keeps a tenant's key apart from the platform's for the same instance", async () => {
        const instance = unique("gw");
        await store.putObservedToolLimit({
          key: `*/${instance}`,
          model: `${instance}/a`,
          maxTools: 100,
          observedAt: START,
        });
        await store.putObservedToolLimit({
          key: `acme/${instance}`,
          model: `${instance}/a`,
          maxTools: 8,
          observedAt: START,
        });
        expect((await store.getObservedToolLimits([`*/${instance}`])).map((limit) => limit.maxTools)).toEqual(
          [100],
        );
        expect(
          (await store.getObservedToolLimits([`acme/${instance}`, `other/${instance}`])).map(
            (limit) => limit.maxTools,
          ),
        ).toEqual([8]);
      });

      it("does not let an older observation that arrives late replace a newer one", async () => {
        const key = `*/${unique("gw")}`;
        await store.putObservedToolLimit({ key, model: "gw/m", maxTools: 40, observedAt: START + 1_000 });
        await store.putObservedToolLimit({ key, model: "gw/m", maxTools: 128, observedAt: START });
        expect(await store.getObservedToolLimits([key])).toEqual([
          { key, model: "gw/m", maxTools: 40, observedAt: START + 1_000 },
        ]);
      });

      it("answers for more than 100 keys at once", async () => {
        const keys = Array.from({ length: 230 }, (_, i) => `*/${unique("bulk")}-${i}`);
        const observed = keys.filter((_, i) => i % 3 === 0);
        for (const [i, key] of observed.entries()) {
          await store.putObservedToolLimit({ key, model: "bulk/m", maxTools: 10 + i, observedAt: START });
        }
        const limits = await store.getObservedToolLimits([...keys, keys[0]!]);
        expect(limits.map((l) => l.key)).toEqual(observed);
        expect(limits.at(-1)?.maxTools).toBe(10 + observed.length - 1);
      });

      it("answers an empty list for no keys", async () => {
        expect(await store.getObservedToolLimits([])).toEqual([]);
      });
      it("lists every limit in key order and withdraws one; withdrawing it again answers false", async () => {
        const instance = unique("listed");
        const keys = [`*/${instance}`, `acme/${instance}`, `zeta/${instance}`];
        for (const key of [...keys].reverse()) {
          await store.putObservedToolLimit({ key, model: `${instance}/m`, maxTools: 50, observedAt: START });
        }
        const ours = async () =>
          (await store.listObservedToolLimits()).filter((limit) => limit.key.endsWith(`/${instance}`));
        expect((await ours()).map((limit) => limit.key)).toEqual(keys);
        expect(await store.deleteObservedToolLimit(`acme/${instance}`)).toBe(true);
        expect(await store.deleteObservedToolLimit(`acme/${instance}`)).toBe(false);
        expect((await ours()).map((limit) => limit.key)).toEqual([keys[0], keys[2]]);
        expect(await store.getObservedToolLimits([`acme/${instance}`])).toEqual([]);
      });
    });

    describe("quota counters", () => {
      it("adds within the limit and refuses, changing nothing, past it", async () => {
        const key = unique("quota");
        expect(await store.addToQuota(key, 60, 100)).toBe(true);
        expect(await store.addToQuota(key, 40, 100)).toBe(true);
        expect(await store.addToQuota(key, 1, 100)).toBe(false);
        expect(await store.getQuotaUsage(key)).toBe(100);
        expect(await store.addToQuota(key, -30, 100)).toBe(true);
        expect(await store.addToQuota(key, 31, 100)).toBe(false);
        expect(await store.addToQuota(key, 30, 100)).toBe(true);
        expect(await store.getQuotaUsage(key)).toBe(100);
        expect(await store.addToQuota(unique("quota"), 101, 100)).toBe(false);
        expect(await store.getQuotaUsage(unique("never"))).toBe(0);
      });

      it("lets exactly 10 of 25 concurrent adds through a limit of 10", async () => {
        const key = unique("quota");
        const results = await Promise.all(Array.from({ length: 25 }, () => store.addToQuota(key, 1, 10)));
        expect(results.filter(Boolean)).toHaveLength(10);
        expect(await store.getQuotaUsage(key)).toBe(10);
      });

      it("a window's counter starts again from zero once it ended, and not before", async () => {
        const key = unique("window");
        const end = nowMs + 60_000;
        expect(await store.addToQuota(key, 2, 2, end)).toBe(true);
        expect(await store.addToQuota(key, 1, 2, end)).toBe(false);
        nowMs += 59_000;
        expect(await store.addToQuota(key, 1, 2, end)).toBe(false);
        nowMs += 2_000;
        expect(await store.getQuotaUsage(key)).toBe(0);
        expect(await store.addToQuota(key, 1, 2, nowMs + 60_000)).toBe(true);
        expect(await store.getQuotaUsage(key)).toBe(1);
      });
    });

    describe("generation markers", () => {
      it("counts from 0: an absent marker reads 0, each bump answers the new value", async () => {
        const marker = unique("documents/acme/shop");
        expect(await store.getGenerations([marker])).toEqual([0]);
        expect(await store.bumpGeneration(marker)).toBe(1);
        expect(await store.bumpGeneration(marker)).toBe(2);
        expect(await store.getGenerations([marker])).toEqual([2]);
      });

      it("counts 50 concurrent bumps exactly, each answering a different value", async () => {
        const marker = unique("documents/acme/_tenant");
        await store.bumpGeneration(marker);
        const answers = await Promise.all(Array.from({ length: 50 }, () => store.bumpGeneration(marker)));
        expect(await store.getGenerations([marker])).toEqual([51]);
        expect([...answers].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
      });

      it("reads several markers in the order asked, repeats and absent ones included, and keeps them apart", async () => {
        const a = unique("gen-a");
        const b = unique("gen-b");
        const hashed = `${a}#x`;
        await store.bumpGeneration(a);
        await store.bumpGeneration(b);
        await store.bumpGeneration(b);
        expect(await store.getGenerations([b, unique("never"), a, b, hashed])).toEqual([2, 0, 1, 2, 0]);
        expect(await store.getGenerations([])).toEqual([]);
      });

      it("reads a process and markers together; an unknown process is null beside its markers", async () => {
        const key = newKey();
        const record = processRecord(key, { activatedTools: { weather__today: START } });
        await store.createProcess(record);
        const marker = unique("documents");
        await store.bumpGeneration(marker);
        const read = await store.getProcessAndGenerations(key, [marker, unique("never")]);
        expect(read).toEqual({ process: record, generations: [1, 0], version: expect.any(String) });
        expect(await store.getProcessAndGenerations(newKey(), [marker])).toEqual({
          process: null,
          generations: [1],
        });
      });

      it("names the record's spawn-time fields by a version: the same while only activations and expiry change, another for a record stored anew under the id", async () => {
        const key = newKey();
        await store.createProcess(processRecord(key, { role: "first" }));
        const first = await store.getProcessAndGenerations(key, []);
        expect(first.version).toEqual(expect.any(String));
        await store.touchActivatedTools(key, ["weather__today"], START);
        await store.touchProcess(key, Math.ceil(Date.now() / 1000) * 1000 + 365 * 24 * 3600 * 1000);
        const touched = await store.getProcessAndGenerations(key, []);
        expect(touched.process?.activatedTools).toEqual({ weather__today: START });
        expect(touched.version).toBe(first.version);
        await store.deleteProcess(key);
        await store.createProcess(processRecord(key, { role: "second" }));
        const again = await store.getProcessAndGenerations(key, []);
        expect(again.process?.role).toBe("second");
        expect(again.version).toEqual(expect.any(String));
        expect(again.version).not.toBe(first.version);
      });
    });

    describe("fire-once markers", () => {
      it("lets the first caller through and holds back the second", async () => {
        const marker = unique("diag");
        expect(await store.markOnce(marker, 3600)).toBe(true);
        expect(await store.markOnce(marker, 3600)).toBe(false);
        expect(await store.markOnce(unique("diag"), 3600)).toBe(true);
      });

      it("lets exactly one of 10 concurrent callers through", async () => {
        const marker = unique("diag");
        const results = await Promise.all(Array.from({ length: 10 }, () => store.markOnce(marker, 3600)));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it("opens again once the ttl has passed, and not before", async () => {
        const marker = unique("diag");
        expect(await store.markOnce(marker, 60)).toBe(true);
        nowMs += 59_000;
        expect(await store.markOnce(marker, 60)).toBe(false);
        nowMs += 2_000;
        expect(await store.markOnce(marker, 60)).toBe(true);
        expect(await store.markOnce(marker, 60)).toBe(false);
      });
    });
  });
}

stateStoreContract("SqliteStateStore in memory", async (now) => {
  const store = new SqliteStateStore(":memory:", { now });
  return { store, close: async () => store.close() };
});

const sqliteDir = mkdtempSync(join(tmpdir(), "vance-state-"));
afterAll(() => rmSync(sqliteDir, { recursive: true, force: true }));

stateStoreContract("SqliteStateStore in a file", async (now) => {
  const store = new SqliteStateStore(join(sqliteDir, "contract.sqlite"), { now });
  return { store, close: async () => store.close() };
});

stateStoreContract("DynamoStateStore on DynamoDB Local", async (now) => {
  const client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
  const tableName = `state-${randomUUID()}`;
  await ensureStateTable(client, tableName);
  const store = new DynamoStateStore({ client, tableName, now });
  return { store, close: async () => client.destroy() };
});

describe("SqliteStateStore in a file", () => {
  it("keeps processes, activations and counters after the file is reopened", async () => {
    const file = join(sqliteDir, "reopen.sqlite");
    const key: ProcessKey = { tenant: "t", project: "p", processId: "proc-1" };
    const first = new SqliteStateStore(file);
    await first.createProcess(processRecord(key));
    await first.touchActivatedTools(key, ["weather__today"], START);
    await first.addToolUsage({ tenant: "t", project: "p", role: "r", tool: "x" }, { calls: 2, at: START });
    first.close();

    const second = new SqliteStateStore(file);
    try {
      expect((await second.getProcess(key))?.activatedTools).toEqual({ weather__today: START });
      expect((await second.listToolUsage("t", "p"))[0]?.calls).toBe(2);
    } finally {
      second.close();
    }
  });
});

describe("SqliteStateStore: a record read again by its version", () => {
  it("a record removed and stored again under its id by another writer of the file is read as stored now", async () => {
    const file = join(sqliteDir, "versions.sqlite");
    const key: ProcessKey = { tenant: "t", project: "p", processId: "proc-1" };
    const reader = new SqliteStateStore(file);
    const writer = new SqliteStateStore(file);
    const db = new Database(file);
    try {
      await writer.createProcess(processRecord(key, { role: "first" }));
      expect((await reader.getProcessAndGenerations(key, [])).process?.role).toBe("first");
      await writer.touchActivatedTools(key, ["weather__today"], START);
      expect((await reader.getProcessAndGenerations(key, [])).process).toMatchObject({
        role: "first",
        activatedTools: { weather__today: START },
      });
      db.prepare("DELETE FROM processes WHERE process_id = ?").run(key.processId);
      await writer.createProcess(processRecord(key, { role: "second" }));
      expect((await reader.getProcessAndGenerations(key, [])).process?.role).toBe("second");
    } finally {
      db.close();
      reader.close();
      writer.close();
    }
  });

  it("a file made before versions gets the column; its rows are read, and a row rewritten in place is read anew", async () => {
    const file = join(sqliteDir, "before-versions.sqlite");
    const key: ProcessKey = { tenant: "t", project: "p", processId: "old-1" };
    const { activatedTools: _none, ...stored } = processRecord(key, { role: "old" });
    const db = new Database(file);
    db.exec(`CREATE TABLE processes (
      tenant TEXT NOT NULL, project TEXT NOT NULL, process_id TEXT NOT NULL, record TEXT NOT NULL,
      PRIMARY KEY (tenant, project, process_id)) WITHOUT ROWID`);
    const insert = db.prepare(
      "INSERT INTO processes (tenant, project, process_id, record) VALUES (?, ?, ?, ?)",
    );
    insert.run(key.tenant, key.project, key.processId, JSON.stringify(stored));
    db.close();
    const store = new SqliteStateStore(file);
    const edit = new Database(file);
    try {
      expect(await store.getProcess(key)).toEqual(processRecord(key, { role: "old" }));
      edit
        .prepare("UPDATE processes SET record = ? WHERE process_id = ?")
        .run(JSON.stringify({ ...stored, role: "rewritten" }), key.processId);
      const rewritten = await store.getProcessAndGenerations(key, []);
      expect(rewritten.process?.role).toBe("rewritten");
      // A row without a version has none to name its fields by: nothing is kept for it.
      expect(rewritten.version).toBeUndefined();
      const created = { ...key, processId: "new-1" };
      expect(await store.createProcess(processRecord(created))).toBe(true);
      expect(await store.getProcess(created)).toEqual(processRecord(created));
    } finally {
      edit.close();
      store.close();
    }
  });
});

/**
 * Makes every first attempt of `client`'s requests reach DynamoDB and be applied there, and
 * then fail as a client-side timeout, so the SDK retries a write whose outcome it does not
 * know.
 */
function loseFirstAnswers(client: DynamoDBClient, onLost: () => void): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const out = await next(args);
      const attempt = (args.request as { headers?: Record<string, string> }).headers?.["amz-sdk-request"];
      if (attempt?.startsWith("attempt=1;")) {
        onLost();
        throw Object.assign(new Error("injected: the answer was lost after DynamoDB applied the request"), {
          name: "TimeoutError",
        });
      }
      return out;
    },
    { step: "deserialize", name: "loseFirstAnswers" },
  );
}

describe("usage counters exact under retries", () => {
  /**
   * 50 calls (in- and out-of-order timestamps) and 50 discovery hits on one key, 10 at a time,
   * each wave through a store of its own: a client's retry quota (500 tokens, 14 per timeout
   * retry, refunded only on success) runs dry after a few dozen lost answers, and this test is
   * about doubled writes, not about the quota.
   */
  async function countConcurrently(storeForWave: () => StateStore, tenant: string): Promise<StateStore> {
    const key = { tenant, project: "p", role: "r", tool: "doc_lookup" };
    let store = storeForWave();
    for (let wave = 0; wave < 50; wave += 10) {
      if (wave > 0) store = storeForWave();
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => {
          const i = wave + j;
          return store.addToolUsage(key, { calls: 1, at: i % 2 === 0 ? START + i : START - i });
        }),
      );
      await Promise.all(
        Array.from({ length: 10 }, () => store.addToolUsage(key, { discoveryHits: 1, at: START })),
      );
    }
    return store;
  }

  it("DynamoDB: 50 concurrent calls count 50 when every first attempt's answer is lost after it was applied", async () => {
    const endpoint = inject("dynamoEndpoint");
    const tableName = `state-${randomUUID()}`;
    const clients: DynamoDBClient[] = [];
    let lost = 0;
    const storeForWave = () => {
      const client = createDynamoClient({ endpoint, deadlineMs: 10_000 });
      clients.push(client);
      loseFirstAnswers(client, () => lost++);
      return new DynamoStateStore({ client, tableName });
    };
    try {
      const setup = createDynamoClient({ endpoint });
      clients.push(setup);
      await ensureStateTable(setup, tableName);
      const store = await countConcurrently(storeForWave, "retried");
      expect(await store.listToolUsage("retried", "p")).toEqual([
        { role: "r", tool: "doc_lookup", calls: 50, discoveryHits: 50, lastUsedAt: START + 48 },
      ]);
      // Every applied write lost its first answer: the faults really happened.
      expect(lost).toBeGreaterThanOrEqual(100);
    } finally {
      for (const client of clients) client.destroy();
    }
  });

  it("DynamoDB: a create or a fire-once marker whose answer was lost still answers as applied, and only once", async () => {
    const endpoint = inject("dynamoEndpoint");
    const setup = createDynamoClient({ endpoint });
    const client = createDynamoClient({ endpoint, deadlineMs: 10_000 });
    try {
      const tableName = `state-${randomUUID()}`;
      await ensureStateTable(setup, tableName);
      let lost = 0;
      loseFirstAnswers(client, () => lost++);
      const store = new DynamoStateStore({ client, tableName });
      const key: ProcessKey = { tenant: "t", project: "p", processId: randomUUID() };
      expect(await store.createProcess(processRecord(key))).toBe(true);
      expect(await store.createProcess(processRecord(key, { role: "intruder" }))).toBe(false);
      expect(await store.getProcess(key)).toEqual(processRecord(key));
      expect(await store.markOnce("lost-answer", 60)).toBe(true);
      expect(await store.markOnce("lost-answer", 60)).toBe(false);
      expect(lost).toBeGreaterThanOrEqual(5);
    } finally {
      setup.destroy();
      client.destroy();
    }
  });

  it("DynamoDB: a count cancelled by a concurrent transaction is sent again, and counted once", async () => {
    const endpoint = inject("dynamoEndpoint");
    const client = createDynamoClient({ endpoint });
    try {
      const tableName = `state-${randomUUID()}`;
      await ensureStateTable(client, tableName);
      let cancelled = 0;
      // The first three TransactWriteItems are cancelled as DynamoDB cancels one that met another on its item.
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === "TransactWriteItemsCommand" && cancelled < 3) {
            cancelled++;
            throw Object.assign(new Error("Transaction cancelled"), {
              name: "TransactionCanceledException",
              CancellationReasons: [{ Code: "TransactionConflict" }],
            });
          }
          return next(args);
        },
        { step: "initialize", name: "conflictFirst" },
      );
      const store = new DynamoStateStore({ client, tableName });
      const key = { tenant: "t", project: "p", role: "r", tool: "x" };
      await store.addToolUsage(key, { calls: 1, at: START });
      expect(cancelled).toBe(3);
      expect(await store.listToolUsage("t", "p")).toEqual([
        { role: "r", tool: "x", calls: 1, discoveryHits: 0, lastUsedAt: START },
      ]);
    } finally {
      client.destroy();
    }
  });

  it("SQLite: 50 concurrent calls count 50 (one local statement, nothing retried)", async () => {
    const store = new SqliteStateStore(":memory:");
    try {
      await countConcurrently(() => store, "local");
      expect(await store.listToolUsage("local", "p")).toEqual([
        { role: "r", tool: "doc_lookup", calls: 50, discoveryHits: 50, lastUsedAt: START + 48 },
      ]);
    } finally {
      store.close();
    }
  });
});

describe("DynamoStateStore requests and table", () => {
  let client: DynamoDBClient;
  let tableName: string;
  let store: DynamoStateStore;

  beforeAll(async () => {
    client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
    tableName = `state-${randomUUID()}`;
    await ensureStateTable(client, tableName);
    store = new DynamoStateStore({ client, tableName, queryPageSize: 2 });
  });
  afterAll(() => client.destroy());

  /** Requests DynamoDB received for one operation. */
  async function requestsFor(operation: () => Promise<unknown>): Promise<number> {
    store.resetRequestCount();
    await operation();
    return store.requestCount;
  }

  it("sends one write per usage increment, and a second only for an out-of-order timestamp", async () => {
    const key = { tenant: "t", project: "counted", role: "r", tool: "x" };
    expect(await requestsFor(() => store.addToolUsage(key, { calls: 1, at: START }))).toBe(1);
    expect(await requestsFor(() => store.addToolUsage(key, { calls: 1, at: START + 1 }))).toBe(1);
    expect(await requestsFor(() => store.addToolUsage(key, { discoveryHits: 1, at: START + 1 }))).toBe(1);
    expect(await requestsFor(() => store.addToolUsage(key, { calls: 1, at: START - 1 }))).toBe(2);
    expect((await store.listToolUsage("t", "counted"))[0]).toMatchObject({
      calls: 3,
      discoveryHits: 1,
      lastUsedAt: START + 1,
    });
  });

  it("sends one request per process operation and per marker", async () => {
    const key: ProcessKey = { tenant: "t", project: "counted", processId: "p-1" };
    expect(await requestsFor(() => store.createProcess(processRecord(key)))).toBe(1);
    expect(await requestsFor(() => store.createProcess(processRecord(key)))).toBe(1);
    expect(await requestsFor(() => store.getProcess(key))).toBe(1);
    expect(await requestsFor(() => store.touchActivatedTools(key, ["a", "b", "c"], START))).toBe(1);
    expect(await requestsFor(() => store.removeActivatedTools(key, ["a", "b"]))).toBe(1);
    expect(await requestsFor(() => store.removeActivatedTools(key, []))).toBe(0);
    expect(await requestsFor(() => store.markOnce("counted", 60))).toBe(1);
    expect(
      await requestsFor(() =>
        store.putObservedToolLimit({ key: "*/m", model: "m/1", maxTools: 1, observedAt: 1 }),
      ),
    ).toBe(1);
  });

  it("bumps a generation with one UpdateItem and reads a process with several markers in one BatchGetItem", async () => {
    const key: ProcessKey = { tenant: "t", project: "generations", processId: "p-1" };
    await store.createProcess(processRecord(key));
    const markers = ["documents/t/generations", "documents/t/_tenant", "observed-tool-limits", "catalog"];
    expect(await requestsFor(() => store.bumpGeneration(markers[0]!))).toBe(1);
    expect(await requestsFor(() => store.getGenerations([...markers, "absent"]))).toBe(1);
    store.resetRequestCount();
    const read = await store.getProcessAndGenerations(key, markers);
    expect(store.requestCount).toBe(1);
    expect(read.process?.processId).toBe("p-1");
    expect(read.generations).toEqual([1, 0, 0, 0]);
    expect(await requestsFor(() => store.getGenerations([]))).toBe(0);
  });

  it("reads a record it read before as its version and activations, in one BatchGetItem; a record stored again under its id is read whole, anew; an item without a version is read whole every time", async () => {
    const key: ProcessKey = { tenant: "t", project: "versions", processId: "p-1" };
    await store.createProcess(processRecord(key, { role: "first" }));
    const markers = ["documents/t/versions"];
    // What each BatchGetItem asked for: the whole items, or the projection of a known version.
    const projections: (string | undefined)[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "BatchGetItemCommand") {
          const items = (args.input as { RequestItems: Record<string, { ProjectionExpression?: string }> })
            .RequestItems;
          projections.push(items[tableName]?.ProjectionExpression);
        }
        return next(args);
      },
      { step: "initialize", name: "seeProjections" },
    );
    expect(await requestsFor(() => store.getProcessAndGenerations(key, markers))).toBe(1);
    await store.touchActivatedTools(key, ["weather__today"], START);
    await store.bumpGeneration(markers[0]!);
    store.resetRequestCount();
    const again = await store.getProcessAndGenerations(key, markers);
    expect(store.requestCount).toBe(1);
    expect(again.process).toEqual(
      processRecord(key, { role: "first", activatedTools: { weather__today: START } }),
    );
    expect(again.generations).toEqual([1]);
    expect(projections).toEqual([undefined, expect.any(String)]);
    client.middlewareStack.remove("seeProjections");

    // Another writer removes the item and stores another record under the id.
    await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: "PROC#t#versions", sk: "p-1" } }));
    expect((await store.getProcessAndGenerations(key, markers)).process).toBeNull();
    await store.createProcess(processRecord(key, { role: "second" }));
    expect((await store.getProcessAndGenerations(key, markers)).process?.role).toBe("second");
    await client.send(new DeleteCommand({ TableName: tableName, Key: { pk: "PROC#t#versions", sk: "p-1" } }));
    await store.createProcess(processRecord(key, { role: "third" }));
    store.resetRequestCount();
    expect((await store.getProcessAndGenerations(key, markers)).process?.role).toBe("third");
    expect(store.requestCount).toBe(2);

    // An item stored before versions.
    const old: ProcessKey = { ...key, processId: "p-old" };
    const { activatedTools: _none, ...fields } = processRecord(old, { role: "old" });
    await client.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: "PROC#t#versions", sk: "p-old", ...fields, activatedTools: {} },
      }),
    );
    for (let i = 0; i < 2; i++) {
      store.resetRequestCount();
      expect((await store.getProcessAndGenerations(old, markers)).process).toEqual(
        processRecord(old, { role: "old" }),
      );
      expect(store.requestCount).toBe(1);
    }
  });

  it("reads observed limits with one BatchGetItem per 100 keys", async () => {
    const keys = Array.from({ length: 201 }, (_, i) => `*/batch-${i}`);
    expect(await requestsFor(() => store.getObservedToolLimits(keys))).toBe(3);
    expect(await requestsFor(() => store.getObservedToolLimits([]))).toBe(0);
  });

  it("follows query pages until the last one", async () => {
    for (const tool of ["a", "b", "c", "d", "e"]) {
      await store.addToolUsage({ tenant: "t", project: "paged", role: "r", tool }, { calls: 1, at: START });
    }
    store.resetRequestCount();
    const rows = await store.listToolUsage("t", "paged");
    expect(rows.map((r) => r.tool)).toEqual(["a", "b", "c", "d", "e"]);
    // Pages of 2: a+b, c+d, e — and DynamoDB only knows the third was the last after reading it.
    expect(store.requestCount).toBe(3);
  });

  it("creates the table with TTL on expiresAt, and a second ensure is harmless", async () => {
    await ensureStateTable(client, tableName);
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe(stateTableTtlAttribute);
    expect(ttl.TimeToLiveDescription?.TimeToLiveStatus).toBe("ENABLED");
  });
});
