import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten";
import { Scope } from "quickjs-emscripten";

/** `vance` and `console` are installed only for scripts whose source names them: it keeps the common run cheap. */
export function mentions(source: string, global: "vance" | "console"): boolean {
  return source.includes(global);
}

/** A thrown `Error` with the given class name, as a host function's result. */
export function vmError(context: QuickJSContext, name: string, message: string): VmCallResult<QuickJSHandle> {
  return { error: context.newError({ name, message }) };
}

/** Installs the host object `vance` with `tools.call` = `call` (borrowed: the run's context keeps it across runs). */
export function installVance(context: QuickJSContext, call: QuickJSHandle): void {
  Scope.withScope((scope) => {
    const vance = scope.manage(context.newObject());
    const tools = scope.manage(context.newObject());
    context.setProp(tools, "call", call);
    context.setProp(vance, "tools", tools);
    context.defineProp(context.global, "vance", { value: vance, configurable: false, enumerable: false });
  });
}

/**
 * A sibling tool's failure as the script sees it: an `Error` whose `name` and `code` are the
 * tool's error code and whose `tool` is the name it called, so a script can catch and tell them apart.
 */
export function toolError(
  context: QuickJSContext,
  tool: string,
  code: string,
  message: string,
): VmCallResult<QuickJSHandle> {
  const error = context.newError({ name: code, message });
  Scope.withScope((scope) => {
    context.setProp(error, "code", scope.manage(context.newString(code)));
    context.setProp(error, "tool", scope.manage(context.newString(tool)));
  });
  return { error };
}

/**
 * Installs `console`, each method `log` (borrowed: the run's context keeps it across runs). What
 * a call does is the run's: nothing (scripts may log, the host never prints), or hand its sink
 * the line {@link consoleLine} makes.
 */
export function installConsole(context: QuickJSContext, log: QuickJSHandle): void {
  Scope.withScope((scope) => {
    const console = scope.manage(context.newObject());
    for (const name of ["log", "info", "warn", "error", "debug"]) context.setProp(console, name, log);
    context.setProp(context.global, "console", console);
  });
}

/**
 * One `console` call as a line: the arguments joined by spaces, strings as they are and other
 * values as JSON (what `JSON.stringify` cannot write, as QuickJS prints it).
 */
export function consoleLine(context: QuickJSContext, args: readonly QuickJSHandle[]): string {
  return args.map((arg) => printed(context, arg)).join(" ");
}

/** One `console` argument as text. */
function printed(context: QuickJSContext, arg: QuickJSHandle): string {
  if (context.typeof(arg) === "string") return context.getString(arg);
  // dump disposes a promise handle it is given, so it gets a duplicate the scope can still own.
  const dumped: unknown = Scope.withScope((scope) => context.dump(scope.manage(arg.dup())));
  if (typeof dumped === "string") return dumped;
  return JSON.stringify(dumped) ?? String(dumped);
}
