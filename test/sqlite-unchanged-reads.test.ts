import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { ProcessKey, ProcessRecord } from "@vance/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

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
    return {
      ...key,
      createdAt: "2025-01-01T12:00:00.000Z",
      recipe: "research",
      engine: null,
      role: "research",
      allowedTools: ["whoami"],
      allowedPacks: [],
      excludedTools: [],
      allowedToolsAdd: [],
      allowedToolsKeep: [],
      allowedToolsDefer: [],
      allowedToolsDropFirst: [],
      models: ["openai/gpt-4.1"],
      clientTools: [],
      activatedTools: {},
      ...overrides,
    };
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
});
