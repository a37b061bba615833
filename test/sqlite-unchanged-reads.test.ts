import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  openStateDatabase,
  SqliteGenerationStore,
  SqliteProcessStore,
  SqliteStateStore,
  SqliteUsageStore,
} from "@vance/adapters/sqlite";
import type { ProcessKey, ProcessRecord } from "@vance/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { processRecordOf } from "./support/process-record";

/**
 * The SQLite store answers a repeated read (a process's turn, a request's generation markers)
 * without running it again while the database has not changed (issue 39). Two instances on one
 * file stand for two servers: whatever one writes, the other's next read sees — an ended
 * process is refused, a bumped marker is read — and so does the writer's own.
 */
describe("SQLite reads answered again while the database is unchanged", () => {
  let dir: string;
  let one: SqliteStateStore;
  let other: SqliteStateStore;
  const key: ProcessKey = { tenant: "acme", project: "web", processId: "p-1" };
  const markers = ["documents/acme/web", "documents/acme/_tenant", "secrets/acme", "catalog"];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "vance-unchanged-"));
    one = new SqliteStateStore(join(dir, "state.db"));
    other = new SqliteStateStore(join(dir, "state.db"));
  });
  afterEach(() => {
    one.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function record(overrides: Partial<ProcessRecord> = {}): ProcessRecord {
    return processRecordOf(key, {
      createdAt: "2025-01-01T12:00:00.000Z",
      recipe: "research",
      role: "research",
      allowedTools: ["whoami"],
      ...overrides,
    });
  }

  it("refuses a process another instance ended, and one this instance ended", async () => {
    await one.createProcess(record());
    for (let i = 0; i < 3; i++) {
      expect((await one.getProcessAndGenerations(key, markers)).process?.role).toBe("research");
    }
    expect(await other.deleteProcess(key)).toBe(true);
    expect((await one.getProcessAndGenerations(key, markers)).process).toBeNull();

    await one.createProcess(record({ role: "again" }));
    expect((await one.getProcessAndGenerations(key, markers)).process?.role).toBe("again");
    expect((await other.getProcessAndGenerations(key, markers)).process?.role).toBe("again");
    expect(await one.deleteProcess(key)).toBe(true);
    expect((await one.getProcessAndGenerations(key, markers)).process).toBeNull();
    expect((await other.getProcessAndGenerations(key, markers)).process).toBeNull();
  });

  it("reads the generations and activations either instance wrote since the last read", async () => {
    await one.createProcess(record());
    expect(await one.getGenerations(markers)).toEqual([0, 0, 0, 0]);
    expect((await one.getProcessAndGenerations(key, markers)).generations).toEqual([0, 0, 0, 0]);

    await other.bumpGeneration("secrets/acme");
    expect(await one.getGenerations(markers)).toEqual([0, 0, 1, 0]);
    expect((await one.getProcessAndGenerations(key, markers)).generations).toEqual([0, 0, 1, 0]);

    await one.bumpGeneration("catalog");
    expect(await one.getGenerations(markers)).toEqual([0, 0, 1, 1]);
    expect(await other.getGenerations(markers)).toEqual([0, 0, 1, 1]);
    expect((await one.getProcessAndGenerations(key, markers)).generations).toEqual([0, 0, 1, 1]);

    expect(await other.touchActivatedTools(key, ["weather__today"], 1_000)).toBe(true);
    const seen = await one.getProcessAndGenerations(key, markers);
    expect(seen.process?.activatedTools).toEqual({ weather__today: 1_000 });
  });

  it("answers each caller its own copy of the generations", async () => {
    const first = await one.getGenerations(markers);
    first[0] = 99;
    expect(await one.getGenerations(markers)).toEqual([0, 0, 0, 0]);
  });

  it("keeps repeating a turn's read over this instance's usage counts, not over another instance's", async () => {
    // The turn's statement, counted as it runs, on a connection of its own beside `one` and `other`.
    const db = openStateDatabase(join(dir, "state.db"));
    let turnReads = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (!sql.includes("LEFT JOIN processes")) return statement;
      const get = statement.get.bind(statement);
      statement.get = ((...params: unknown[]) => {
        turnReads++;
        return get(...params);
      }) as typeof statement.get;
      return statement;
    }) as typeof db.prepare;
    try {
      const processes = new SqliteProcessStore(db, new SqliteGenerationStore(db));
      const usage = new SqliteUsageStore(db);
      await processes.createProcess(record());
      const turn = async () => (await processes.getProcessAndGenerations(key, markers)).process?.role;
      // The first read answers the record's text, the second asks with the version parsed; then repeats.
      for (let i = 0; i < 3; i++) expect(await turn()).toBe("research");
      expect(turnReads).toBe(2);

      const counted = { tenant: "acme", project: "web", role: "research", tool: "whoami" };
      await usage.addToolUsage(counted, { calls: 1, at: 1_000 });
      await usage.addToolUsage(counted, { calls: 1, at: 1_001, token: "t-1" });
      expect(await turn()).toBe("research");
      expect(turnReads).toBe(2);
      expect(await usage.listToolUsage("acme", "web")).toEqual([
        { role: "research", tool: "whoami", calls: 2, discoveryHits: 0, lastUsedAt: 1_001 },
      ]);

      // Another instance's count is a commit this connection cannot tell apart: the read runs again.
      await other.addToolUsage(counted, { calls: 1, at: 1_002 });
      expect(await turn()).toBe("research");
      expect(turnReads).toBe(3);
      // And a process that instance ended is refused at once.
      expect(await other.deleteProcess(key)).toBe(true);
      expect((await processes.getProcessAndGenerations(key, markers)).process).toBeNull();
    } finally {
      db.close();
    }
  });
});
