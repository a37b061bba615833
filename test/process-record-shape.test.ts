import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { type ProcessRecord, readProcessRecord, storedProcessRecord } from "@vance/core";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";
import { processRecordOf } from "./support/process-record";

/**
 * Issue 24: a process record stores its allow set's names once. Names added one by one (an MCP
 * `?add=` list, a recipe's names) are stored as their positions in `allowedTools`; a record of the
 * shape before is read as it was stored.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const names = Array.from({ length: 3000 }, (_, i) => `tool_${String(i).padStart(4, "0")}`);

function record(overrides: Partial<ProcessRecord> = {}): ProcessRecord {
  return processRecordOf(
    { tenant: "acme", project: "shop", processId: "p-1" },
    { allowedTools: names, allowedToolsAdd: names, ...overrides },
  );
}

describe("process record: the allow set's names stored once", () => {
  it("names added by name that the allow set holds become positions; the rest stay names; reading gives the whole list back", () => {
    const whole = record({ allowedToolsAdd: [...names.slice(0, 1000), ...names.slice(1500), "gone_tool"] });
    const stored = storedProcessRecord(whole);
    expect(stored.allowedToolsAddAt).toBe("0-999,1500-2999");
    expect(stored.allowedToolsAdd).toEqual(["gone_tool"]);
    expect(JSON.stringify(stored).split('"tool_0001"').length - 1).toBe(1);
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(whole).length / 1.8);
    expect(readProcessRecord(stored)).toEqual({
      ...whole,
      allowedToolsAdd: [...whole.allowedToolsAdd].sort(),
    });
  });

  it("a record of the shape before (no allowedToolsAddAt) is read as stored", () => {
    const old = record({ allowedToolsAdd: ["tool_0007", "not_allowed"] });
    expect(readProcessRecord(old)).toBe(old);
    expect(storedProcessRecord(record({ allowedToolsAdd: [] }))).not.toHaveProperty("allowedToolsAddAt");
  });

  it("through SQLite: a spawn adding 100 names one by one stores each name once, and its manifest promotes them; an old-shape row still serves", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-record-"));
    dirs.push(dataDir);
    const { app } = await testApp({ dataDir });
    const client = await projectClient(app);
    const added = Array.from({ length: 100 }, (_, i) => `t${String(i).padStart(3, "0")}`);
    for (const name of added) await client.putTool(name, docTool(name, "primary: false\n"));
    const { processId } = await client.spawn({ allowedToolsAdd: added, models: ["openai/gpt-4.1"] });
    const manifest = await client.manifest(processId);
    // Added by name: promoted to primary though their documents say `primary: false`.
    expect(manifest.primary).toEqual(expect.arrayContaining(added.slice(0, 10)));

    const db = new Database(join(dataDir, "state.sqlite"), { readonly: true });
    const row = db.prepare("SELECT record FROM processes WHERE process_id = ?").get(processId) as {
      record: string;
    };
    db.close();
    expect(row.record.split('"t042"').length - 1).toBe(1);
    expect(JSON.parse(row.record)).toMatchObject({ allowedToolsAdd: [], allowedToolsAddAt: "0-99" });

    // A record stored before issue 24: the whole list by name, no positions.
    const state = new SqliteStateStore(join(dataDir, "state.sqlite"));
    const old = { ...(JSON.parse(row.record) as ProcessRecord), processId: "old-shape", activatedTools: {} };
    const { allowedToolsAddAt: _dropped, ...oldShape } = { ...old, allowedToolsAdd: added };
    expect(await state.createProcess(oldShape)).toBe(true);
    state.close();
    expect(await client.manifest("old-shape")).toEqual(manifest);
  });
  it("through SQLite: a record stored anew under its id (another version) gets a manifest of its own tools, not the memo of the one before", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-record-"));
    dirs.push(dataDir);
    const { app } = await testApp({ dataDir });
    const client = await projectClient(app);
    for (const name of ["tool_a", "tool_b"]) await client.putTool(name, docTool(name, "primary: true\n"));
    const { processId } = await client.spawn({
      allowedToolsAdd: ["tool_a", "tool_b"],
      models: ["openai/gpt-4.1"],
    });
    expect((await client.manifest(processId)).primary).toEqual(expect.arrayContaining(["tool_a", "tool_b"]));

    const file = join(dataDir, "state.sqlite");
    const db = new Database(file);
    const row = db.prepare("SELECT record FROM processes WHERE process_id = ?").get(processId) as {
      record: string;
    };
    db.prepare("DELETE FROM processes WHERE process_id = ?").run(processId);
    db.close();
    const stored = JSON.parse(row.record) as ProcessRecord;
    const state = new SqliteStateStore(file);
    const { allowedToolsAddAt: _dropped, ...without } = {
      ...stored,
      allowedTools: stored.allowedTools.filter((name) => name !== "tool_b"),
      allowedToolsAdd: ["tool_a"],
      activatedTools: {},
    };
    expect(await state.createProcess(without)).toBe(true);
    state.close();
    const after = await client.manifest(processId);
    expect(after.primary).toContain("tool_a");
    expect([...after.primary, ...after.deferred, ...after.demoted]).not.toContain("tool_b");
  });
});
