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

/** Installs the host object `vance` with `tools.call` = `call` (consumed). */
export function installVance(context: QuickJSContext, call: QuickJSHandle): void {
  Scope.withScope((scope) => {
    scope.manage(call);
    const vance = scope.manage(context.newObject());
    const tools = scope.manage(context.newObject());
    context.setProp(tools, "call", call);
    context.setProp(vance, "tools", tools);
    context.defineProp(context.global, "vance", { value: vance, configurable: false, enumerable: false });
  });
}

/** Installs a `console` whose methods do nothing: scripts may log, the host never prints. */
export function installConsole(context: QuickJSContext): void {
  Scope.withScope((scope) => {
    const console = scope.manage(context.newObject());
    const noop = scope.manage(context.newFunction("log", () => undefined));
    for (const method of ["log", "info", "warn", "error", "debug"]) context.setProp(console, method, noop);
    context.setProp(context.global, "console", console);
  });
}
