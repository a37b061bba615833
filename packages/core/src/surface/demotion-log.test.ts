import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../errors";
import type { FireOnceStore } from "../ports/fire-once-store";
import { DemotionLog, type DemotionOutcome, demotedFamiliesLine, demotionOutcomeKey } from "./demotion-log";

const PROCESS = { tenant: "acme", project: "web", processId: "p1" };

const outcome = (tools: number): DemotionOutcome => ({
  maxTools: 128,
  limit: 127,
  demoted: tools + 15,
  families: [
    { family: "gmail", triageClass: "pack", tools },
    { family: "jira", triageClass: "pack", tools: 15 },
  ],
  tools: [
    ...Array.from({ length: tools }, (_, i) => `gmail__op${i}`),
    ...Array.from({ length: 15 }, (_, i) => `jira__op${i}`),
  ],
});

/** `markOnce` as the stores answer it (first caller of a marker wins), with the calls counted. */
function markers(): FireOnceStore & { calls: number } {
  const held = new Set<string>();
  return {
    calls: 0,
    async markOnce(marker) {
      this.calls++;
      if (held.has(marker)) return false;
      held.add(marker);
      return true;
    },
  };
}

function recorder() {
  const lines: { event: string; fields?: Readonly<Record<string, unknown>> }[] = [];
  const logger = {
    info: (event: string, fields?: Readonly<Record<string, unknown>>) => lines.push({ event, fields }),
    warn: () => {},
  };
  return { lines, logger };
}

describe("DemotionLog", () => {
  it("writes a TRACE line with every demoted tool's name in demotion order, gated like the INFO line", async () => {
    const lines: { level: string; event: string; fields?: Readonly<Record<string, unknown>> }[] = [];
    const logger = {
      info: (event: string, fields?: Readonly<Record<string, unknown>>) =>
        lines.push({ level: "info", event, fields }),
      warn: () => {},
      trace: (event: string, fields?: Readonly<Record<string, unknown>>) =>
        lines.push({ level: "trace", event, fields }),
    };
    const log = new DemotionLog({ logger, state: markers() });
    await log.record(PROCESS, outcome(2));
    await log.record(PROCESS, outcome(2));
    expect(lines.map((line) => `${line.level} ${line.event}`)).toEqual([
      "info budget.demoted",
      "trace budget.demoted.tools",
    ]);
    expect(lines[1]?.fields).toEqual({
      processId: "p1",
      tools: ["gmail__op0", "gmail__op1", ...Array.from({ length: 15 }, (_, i) => `jira__op${i}`)],
    });
  });

  it("logs an outcome once per process, and again when it changes", async () => {
    const { lines, logger } = recorder();
    const state = markers();
    const log = new DemotionLog({ logger, state });
    for (let turn = 0; turn < 3; turn++) await log.record(PROCESS, outcome(20));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      event: "budget.demoted",
      fields: { processId: "p1", maxTools: 128, limit: 127, demoted: 35, families: outcome(20).families },
    });
    await log.record(PROCESS, outcome(19));
    await log.record({ ...PROCESS, processId: "p2" }, outcome(20));
    expect(lines).toHaveLength(3);
    // A known outcome costs no request: only the three new ones asked the state store.
    expect(state.calls).toBe(3);
  });

  it("keeps no line by the families object: a list changed in place is a new outcome", async () => {
    const { lines, logger } = recorder();
    const log = new DemotionLog({ logger, state: markers() });
    const changing = outcome(20);
    await log.record(PROCESS, changing);
    changing.families[0]!.tools = 19;
    await log.record(PROCESS, changing);
    expect(lines).toHaveLength(2);
  });

  it("knows an outcome by the caller's key when it keeps one (the surface, once per classification)", async () => {
    const { lines, logger } = recorder();
    const state = markers();
    const log = new DemotionLog({ logger, state });
    expect(demotedFamiliesLine(outcome(20).families)).toBe("pack gmail 20, pack jira 15");
    const key = demotionOutcomeKey(outcome(20));
    expect(demotionOutcomeKey(outcome(19))).not.toBe(key);
    expect(demotionOutcomeKey({ ...outcome(20), limit: 126 })).not.toBe(key);
    await log.record(PROCESS, { ...outcome(20), key });
    // A fresh-but-equal outcome is the same outcome, with or without the caller's key.
    await log.record(PROCESS, outcome(20));
    await log.record(PROCESS, { ...outcome(20), key });
    expect(lines).toHaveLength(1);
    expect(state.calls).toBe(1);
    await log.record(PROCESS, { ...outcome(19), key: demotionOutcomeKey(outcome(19)) });
    expect(lines).toHaveLength(2);
  });

  it("a second instance over the same state store stays silent for a logged outcome", async () => {
    const state = markers();
    const first = recorder();
    const second = recorder();
    await new DemotionLog({ logger: first.logger, state }).record(PROCESS, outcome(20));
    const other = new DemotionLog({ logger: second.logger, state });
    await other.record(PROCESS, outcome(20));
    await other.record(PROCESS, outcome(20));
    expect(first.lines).toHaveLength(1);
    expect(second.lines).toEqual([]);
    expect(state.calls).toBe(2);
  });

  it("without a state store each instance logs once on its own", async () => {
    const { lines, logger } = recorder();
    const log = new DemotionLog({ logger });
    await log.record(PROCESS, outcome(20));
    await log.record(PROCESS, outcome(20));
    expect(lines).toHaveLength(1);
  });

  it("logs when the state store is unavailable, and asks again next time", async () => {
    const { lines, logger } = recorder();
    let calls = 0;
    const state = {
      markOnce: async () => {
        calls++;
        throw new StoreUnavailableError("state store", "timeout");
      },
    };
    const log = new DemotionLog({ logger, state });
    await log.record(PROCESS, outcome(20));
    await log.record(PROCESS, outcome(20));
    expect(lines).toHaveLength(2);
    expect(calls).toBe(2);
  });

  it("lets an unexpected error through", async () => {
    const { logger } = recorder();
    const state = {
      markOnce: async (): Promise<boolean> => {
        throw new TypeError("a bug");
      },
    };
    await expect(new DemotionLog({ logger, state }).record(PROCESS, outcome(20))).rejects.toThrow("a bug");
  });
});
