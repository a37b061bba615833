import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { StateStore } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

/** 160 client tools in three packs and two plain families: 162 with the floor, over openai's 127. */
function clientTools() {
  const family = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(2, "0")}`);
  return [
    ...family("gmail__op", 20),
    ...family("jira__op", 15),
    ...family("slack__op", 10),
    ...family("file_op", 60),
    ...family("doc_op", 55),
  ].map((name) => ({ name, description: `The ${name} tool.`, inputSchema: { type: "object" } }));
}

/** The state store of the data dir, with its `markOnce` calls counted. */
function countingState(dataDir: string): { store: StateStore; markOnce: () => number; close: () => void } {
  const sqlite = new SqliteStateStore(join(dataDir, "state.sqlite"));
  let calls = 0;
  const store = new Proxy(sqlite, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "markOnce") calls++;
      return value.bind(target);
    },
  });
  return { store, markOnce: () => calls, close: () => sqlite.close() };
}

const opened: { close: () => void }[] = [];
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
});

/** An app over `dataDir` (a fresh one by default) that records its `budget.demoted` lines. */
async function instance(dataDir = mkdtempSync(join(tmpdir(), "vance-demotions-"))) {
  const lines: Readonly<Record<string, unknown>>[] = [];
  const logger = {
    info: (event: string, fields?: Readonly<Record<string, unknown>>) => {
      if (event === "budget.demoted") lines.push(fields ?? {});
    },
    warn: () => {},
  };
  const state = countingState(dataDir);
  opened.push(state);
  const made = await testApp({ logger, dataDir, state: state.store });
  return { ...made, lines, markOnce: state.markOnce, client: await projectClient(made.app) };
}

describe("the budget.demoted line (spec §14.3)", () => {
  it("is written once per process and outcome: three turns alike log one line, an activation that changes the cut logs a second", async () => {
    const first = await instance();
    const { processId } = await first.client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1"],
    });
    for (let turn = 0; turn < 3; turn++) await first.client.manifest(processId);
    expect(first.lines).toHaveLength(1);
    expect(first.lines[0]).toMatchObject({
      processId,
      demoted: 35,
      families: [
        { family: "gmail", triageClass: "pack", tools: 20 },
        { family: "jira", triageClass: "pack", tools: 15 },
      ],
    });
    expect(first.markOnce()).toBe(1);

    // Calling a demoted tool activates it: gmail__op03 stays, and one more pack must go instead.
    await first.client.invoke(processId, "gmail__op03", {});
    const changed = await first.client.manifest(processId);
    expect(changed.primary).toContain("gmail__op03");
    await first.client.manifest(processId);
    expect(first.lines).toHaveLength(2);
    expect(first.lines[1]).toMatchObject({
      demoted: 44,
      families: [
        { family: "gmail", triageClass: "pack", tools: 19 },
        { family: "jira", triageClass: "pack", tools: 15 },
        { family: "slack", triageClass: "pack", tools: 10 },
      ],
    });
    expect(first.markOnce()).toBe(2);
  });

  it("a second instance over the same state store logs nothing for an outcome already logged", async () => {
    const first = await instance();
    const { processId } = await first.client.spawn({
      clientTools: clientTools(),
      models: ["openai/gpt-4.1"],
    });
    await first.client.manifest(processId);
    expect(first.lines).toHaveLength(1);

    const second = await instance(first.dataDir);
    await second.client.manifest(processId);
    await second.client.manifest(processId);
    expect(second.lines).toEqual([]);
    // Asked once, then remembered: a warm instance adds no request for a known outcome.
    expect(second.markOnce()).toBe(1);
  });
});
