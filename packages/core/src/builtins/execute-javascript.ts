import type { BuiltInTool, CallableTool, ToolOutcome } from "../calls/built-in-tool";
import { DEFAULT_CALL_LIMITS } from "../calls/call-budget";
import { CAPABILITY_FLOOR } from "../calls/capability-floor";
import { META_TOOL } from "../ids";
import type { ScriptRunOutcome } from "../ports/tool-runtime";
import { MAX_SCRIPT_TIMEOUT_MS } from "../tool-types/scripted";
import { invokeTool } from "./meta-tools";
import { declareTools } from "./tool-declarations";

/** The name of the code-mode built-in. */
export const EXECUTE_JAVASCRIPT = META_TOOL.executeJavascript;

/** A program's deadline when the call names none. */
export const DEFAULT_PROGRAM_TIMEOUT_MS = 5_000;

/** Most characters of a program's result as JSON: what comes back stays small enough for a model's context. */
export const MAX_RESULT_CHARS = 32_768;

/** Most characters of a program's source. */
export const MAX_PROGRAM_CHARS = 100_000;

/** The sandbox's limits: a program they stopped is told how far it got. */
const STOPPED_BY_A_LIMIT: ReadonlySet<string> = new Set([
  "TimeoutError",
  "StatementLimitError",
  "MemoryError",
]);

/** Console lines a failure's message quotes (the last ones). */
const QUOTED_LOG_LINES = 5;

/** Calling these from a program makes no sense (they serve the conversation): callable, never declared. */
const UNDECLARED: ReadonlySet<string> = new Set([...CAPABILITY_FLOOR, invokeTool.name, EXECUTE_JAVASCRIPT]);

const DESCRIPTION = [
  "Runs a JavaScript program that calls your tools and returns the value of its last expression.",
  "Use it to chain several tool calls, or to filter and combine what they return, in one step: the tools' results stay inside the program and only its result comes back, as `{ result, logs }` with the lines it printed with console.log.",
  "",
  "- `vance.tools.call(name, params)` runs a tool and returns its result synchronously: write no `await` and no `async`.",
  "- A failed call throws an Error whose `name` (and `code`) is the tool's error code, e.g. `ToolNotAllowed` or `InvalidParams`; catch it to go on. Uncaught, the program fails with that error.",
  `- ES2023 in a sandbox: no network, files, timers, \`require\` or \`import\`. \`timeoutMs\` (default ${DEFAULT_PROGRAM_TIMEOUT_MS}, at most ${MAX_SCRIPT_TIMEOUT_MS}) bounds the whole program, tool calls included; at most ${DEFAULT_CALL_LIMITS.maxCalls} tool calls; the result at most ${MAX_RESULT_CHARS} characters of JSON.`,
].join("\n");

/**
 * `execute_javascript(code, timeoutMs?)`: code mode. The model writes one program that calls many
 * tools; it runs in the `scripted` sandbox (the same worker-thread QuickJS pool, limits and
 * per-tenant slots), and `vance.tools.call` reaches exactly the caller's allow set under the
 * call's budget and depth limit. The calls count as usage of the tools they reach and activate
 * nothing. Not in the capability floor and not primary: a recipe opts in by naming it. Inside a
 * process its description declares, as TypeScript, the tools the program can call.
 */
export const executeJavascript: BuiltInTool = {
  name: EXECUTE_JAVASCRIPT,
  description: DESCRIPTION,
  labels: [],
  primary: false,
  inputSchema: {
    type: "object",
    properties: {
      code: {
        type: "string",
        minLength: 1,
        maxLength: MAX_PROGRAM_CHARS,
        description: "The program; the value of its last expression is the result",
      },
      timeoutMs: {
        type: "integer",
        minimum: 1,
        maximum: MAX_SCRIPT_TIMEOUT_MS,
        description: `Deadline of the whole program in ms (default ${DEFAULT_PROGRAM_TIMEOUT_MS})`,
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  describeFor: (tools) => describeFor(tools),
  async invoke(input, caller, scope) {
    const code = String(input.code);
    const timeoutMs = typeof input.timeoutMs === "number" ? input.timeoutMs : DEFAULT_PROGRAM_TIMEOUT_MS;
    const calls = new Map<string, number>();
    const outcome = await scope.scripts.run({
      source: code,
      inputs: {},
      timeoutMs,
      tenant: caller.tenant,
      nested: scope.budget.depth > 0,
      signal: scope.signal,
      report: true,
      maxResultChars: MAX_RESULT_CHARS,
      callTool: async (name, params, signal) => {
        const answer = await scope.callTool(name, params, signal);
        if ("value" in answer) calls.set(name, (calls.get(name) ?? 0) + 1);
        return answer;
      },
    });
    if (calls.size > 0) await scope.process?.countCalls(calls);
    return programOutcome(outcome, code);
  },
};

/** The description with the declarations of `tools` (less those a program has no use for). */
function describeFor(tools: readonly CallableTool[]): string {
  const callable = tools.filter((tool) => !UNDECLARED.has(tool.name));
  return `${DESCRIPTION}\n\nWhat \`vance.tools.call\` can call here:\n\n\`\`\`ts\n${declareTools(callable)}\n\`\`\``;
}

/**
 * The program's result with its console lines, or its failure with its last console lines and,
 * when a limit stopped it, how far it got: the calls answered and the one still running.
 */
function programOutcome(outcome: ScriptRunOutcome, code: string): ToolOutcome {
  const logs = outcome.logs ?? { lines: [], total: 0 };
  if (outcome.ok) {
    const dropped = logs.total - logs.lines.length;
    return {
      value: {
        result: outcome.value,
        logs: logs.lines,
        ...(dropped > 0 ? { droppedLogLines: dropped } : {}),
      },
    };
  }
  const parts = [outcome.message];
  if (outcome.error === "SyntaxError" && /\bawait\b/.test(code)) {
    parts.push("vance.tools.call is synchronous: write the program without await and async");
  }
  const { calls } = outcome;
  if (calls && STOPPED_BY_A_LIMIT.has(outcome.error)) {
    const answered = `${calls.completed} tool call${calls.completed === 1 ? " had" : "s had"} answered`;
    parts.push(calls.running ? `${answered}; a call of '${calls.running}' was still running` : answered);
  }
  if (logs.lines.length > 0) {
    const last = logs.lines.slice(-QUOTED_LOG_LINES).map((line) => JSON.stringify(line));
    parts.push(`its last console lines (of ${logs.total}): ${last.join(", ")}`);
  }
  const { retryAfterMs } = outcome;
  return {
    error: outcome.error,
    message: parts.join("; "),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}
