import * as v from "valibot";
import { DocumentPathSchema } from "../ids";
import { endedWith, inSpan } from "../telemetry/telemetry";
import { inputsToJsonSchema, ToolInputsSchema } from "./inputs";
import { scriptSyntaxMessage, scriptSyntaxProblem } from "./script-syntax";
import { defineToolType } from "./tool-type";

/** The longest deadline a script may ask for (`timeoutMs`). */
export const MAX_SCRIPT_TIMEOUT_MS = 30_000;

/**
 * Names a script cannot be given as inputs, though they are identifiers in form: reserved words
 * (no script can refer to a variable `class`), the global values a script cannot rebind
 * (`undefined`, `NaN`, `Infinity`: the input would silently read as the global's value), the
 * names strict code cannot bind, and `__proto__` (`vance` is refused by the input schema).
 */
export const UNBINDABLE_INPUT_NAMES: ReadonlySet<string> = new Set([
  ...["await", "break", "case", "catch", "class", "const", "continue", "debugger", "default"],
  ...["delete", "do", "else", "enum", "export", "extends", "false", "finally", "for", "function"],
  ...["if", "implements", "import", "in", "instanceof", "interface", "let", "new", "null"],
  ...["package", "private", "protected", "public", "return", "static", "super", "switch", "this"],
  ...["throw", "true", "try", "typeof", "var", "void", "while", "with", "yield"],
  ...["undefined", "NaN", "Infinity", "arguments", "eval", "__proto__"],
]);

/** `scripted`: a JavaScript body run in the QuickJS sandbox (spec §3.1). */
export const ScriptedType = defineToolType({
  typeId: "scripted",
  description:
    "Runs a JavaScript snippet in a QuickJS sandbox. Inputs are top-level variables, the last expression is the result, and vance.tools.call(name, params) calls sibling tools.",
  parametersSchema: v.pipe(
    v.strictObject({
      engine: v.optional(
        v.literal("javascript", "engine must be 'javascript' (the only engine)"),
        "javascript",
      ),
      timeoutMs: v.optional(
        v.pipe(
          v.number(),
          v.integer("timeoutMs must be an integer"),
          v.minValue(1, "timeoutMs must be at least 1"),
          v.maxValue(MAX_SCRIPT_TIMEOUT_MS, `timeoutMs must be at most ${MAX_SCRIPT_TIMEOUT_MS}`),
        ),
        5000,
      ),
      inputs: ToolInputsSchema,
      source: v.optional(v.pipe(v.string(), v.minLength(1, "source must not be empty"))),
      scriptPath: v.optional(DocumentPathSchema),
    }),
    v.check(
      (parameters) => (parameters.source === undefined) !== (parameters.scriptPath === undefined),
      "exactly one of source and scriptPath is required",
    ),
  ),
  inputSchema: (parameters) => inputsToJsonSchema(parameters.inputs),
  // Compiled on write and by `lint`, never run: `a +` is refused here, not at its first call.
  check: (parameters) => {
    const unbindable = parameters.inputs.flatMap((input, index) =>
      UNBINDABLE_INPUT_NAMES.has(input.name)
        ? [
            {
              path: `inputs.${index}.name`,
              message: `'${input.name}' cannot be a script's input: it is a reserved word or a global the script cannot rebind; choose another name`,
            },
          ]
        : [],
    );
    const problem = parameters.source === undefined ? null : scriptSyntaxProblem(parameters.source);
    return problem
      ? [...unbindable, { path: "source", message: scriptSyntaxMessage(problem), textLine: problem.line }]
      : unbindable;
  },
  async invoke(_config, parameters, input, context) {
    const source =
      parameters.source ??
      (parameters.scriptPath === undefined ? null : await context.readDocument(parameters.scriptPath));
    if (source === null) {
      return { error: "ScriptNotFound", message: `no script document at '${parameters.scriptPath}'` };
    }
    const inputs: Record<string, unknown> = {};
    for (const declared of parameters.inputs) inputs[declared.name] = input[declared.name] ?? null;
    const outcome = await inSpan("script.run", {}, async (span) => {
      const ran = await context.runtime.scripts.run({
        source,
        inputs,
        timeoutMs: parameters.timeoutMs,
        tenant: context.caller.tenant,
        nested: context.depth > 0,
        signal: context.signal,
        ...(source.includes("vance")
          ? { callTool: (name, params, signal) => context.callTool(name, params, signal) }
          : {}),
      });
      endedWith(span, ran.ok ? "ok" : ran.error);
      return ran;
    });
    if (outcome.ok) return { value: outcome.value };
    const { error, message, retryAfterMs } = outcome;
    return { error, message, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  },
});
