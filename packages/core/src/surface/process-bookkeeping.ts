import type { CallResult } from "../calls/built-in-tool";
import { inCapabilityFloor } from "../calls/capability-floor";
import { META_TOOL } from "../ids";
import type { Logger } from "../ports/logger";
import type { ProcessRecord } from "../ports/state-store";
import type { ToolUsage } from "../usage/tool-usage";
import type { ProcessRecords } from "./process-records";

export interface ProcessBookkeepingOptions {
  readonly records: Pick<ProcessRecords, "touch" | "keptAliveRecently">;
  readonly usage: Pick<ToolUsage, "countCall" | "countDiscoveryHit">;
  readonly logger: Logger;
  /** Epoch milliseconds. */
  readonly now?: () => number;
}

/**
 * What a process's calls leave behind (spec §13, §14.2, §14.4): a used tool is counted for the
 * process's role, and a deferred or demoted one is activated (`activatedDeferredTools`). The writes never fail the call — the tool has already run, so a state
 * store that refuses them costs a count, not the caller's result; each lost write is a WARN
 * `process.bookkeeping_failed`.
 */
export class ProcessBookkeeping {
  private readonly now: () => number;

  constructor(private readonly options: ProcessBookkeepingOptions) {
    this.now = options.now ?? (() => Date.now());
  }

  /**
   * After a call in the process. Every successful use counts as demand; it activates the tool
   * only when the tool was outside this turn's tools array (deferred, or demoted by the budget) —
   * or keeps an activated one alive. A primary tool's call stamps nothing: the activated class
   * outranks the recipe's `allowedToolsKeep`, and stamps of tools the model could see anyway
   * would crowd the 15 activations out. The invocation says whether the tool was outside the
   * turn's array (`deferred`, asked only when it matters: the caller knows the turn — its skill
   * tools, its classification). The floor pair are not counted, nor is `invoke_tool`: a wrapper
   * call counts its target once, when the target's own call comes back through here.
   * `activates: false` (a call from a model's script) counts and activates nothing.
   */
  async called(
    record: ProcessRecord,
    name: string,
    result: CallResult,
    deferred: () => Promise<boolean>,
    activates = true,
  ): Promise<void> {
    if ("error" in result || !counted(name)) return;
    const at = this.now();
    await this.settle(record, name, [
      activates ? this.activateIfOutside(record, name, deferred, at) : null,
      this.options.usage.countCall(record, name, at),
    ]);
  }

  /**
   * After a script (`execute_javascript`): its successful calls, by tool, count as the role's
   * demand — one write per tool — and activate nothing: the model never saw those tools' results.
   */
  async countCalls(record: ProcessRecord, calls: ReadonlyMap<string, number>): Promise<void> {
    const at = this.now();
    const writes = [...calls]
      .filter(([name, count]) => count > 0 && counted(name))
      .map(([name, count]) => this.options.usage.countCall(record, name, at, count));
    if (writes.length > 0) await this.settle(record, META_TOOL.executeJavascript, writes);
  }

  /** After `tool_description`: each described tool counts a discovery hit; the deferred ones (`activate`) are activated. */
  async described(
    record: ProcessRecord,
    described: readonly string[],
    activate: readonly string[],
  ): Promise<void> {
    const at = this.now();
    await this.settle(record, META_TOOL.describe, [
      activate.length > 0 ? this.options.records.touch(record, activate, at) : null,
      ...described.map((name) => this.options.usage.countDiscoveryHit(record, name, at)),
    ]);
  }

  /**
   * Touches `name` when it is activated already (unless it was kept alive moments ago: nothing a
   * turn sees would change), or was not in this turn's tools array.
   */
  private async activateIfOutside(
    record: ProcessRecord,
    name: string,
    deferred: () => Promise<boolean>,
    at: number,
  ): Promise<void> {
    if (Object.hasOwn(record.activatedTools, name)) {
      if (this.options.records.keptAliveRecently(record, name, at)) return;
    } else if (!(await deferred())) return;
    await this.options.records.touch(record, [name], at);
  }

  private async settle(record: ProcessRecord, tool: string, writes: readonly (Promise<unknown> | null)[]) {
    const results = await Promise.allSettled(writes);
    for (const result of results) {
      if (result.status === "fulfilled") continue;
      const error = result.reason;
      this.options.logger.warn("process.bookkeeping_failed", {
        tenant: record.tenant,
        project: record.project,
        processId: record.processId,
        tool,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** The floor pair and `invoke_tool` are not counted: a wrapper call counts its target once. */
function counted(name: string): boolean {
  return !inCapabilityFloor(name) && name !== META_TOOL.invoke;
}
