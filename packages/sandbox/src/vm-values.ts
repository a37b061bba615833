import { JSON_SHAPE_LIMITS, jsonShapeProblem } from "@vance/core/json-shape";
import { type QuickJSContext, type QuickJSHandle, Scope } from "quickjs-emscripten";

/** What reading from the VM produced: a host value, or a handle to what the script threw. */
export type VmRead = { value: unknown } | { thrown: QuickJSHandle };

/** What copying into the VM produced: the new handle, or a handle to what was thrown. */
export type VmWrite = { handle: QuickJSHandle } | { thrown: QuickJSHandle };

/**
 * Copies a JSON value into the VM. Primitives are created directly (the common case for tool
 * inputs); objects and arrays go through the VM's JSON.parse, so a `__proto__` key stays an own
 * property. `parse` must be JSON.parse as captured before any user code ran.
 */
export function toHandle(context: QuickJSContext, value: unknown, parse: () => QuickJSHandle): VmWrite {
  switch (typeof value) {
    case "number":
      return { handle: context.newNumber(value) };
    case "string":
      return { handle: context.newString(value) };
    case "boolean":
      return { handle: value ? context.true : context.false };
    case "undefined":
      return { handle: context.undefined };
  }
  if (value === null) return { handle: context.null };
  const text = JSON.stringify(value);
  if (text === undefined) return { handle: context.undefined };
  const result = Scope.withScope((scope) =>
    context.callFunction(parse(), context.undefined, scope.manage(context.newString(text))),
  );
  return result.error ? { thrown: result.error } : { handle: result.value };
}

/**
 * Reads a script value with JSON.stringify semantics (what a tool result must be): `toJSON`
 * applies, non-finite numbers become `null`, and a value JSON cannot represent at all
 * (`undefined`, a function, a symbol) becomes `null`. `stringify` (the VM's JSON.stringify) runs
 * user code (`toJSON`, getters), so the caller keeps limits in force. A value deeper or larger in
 * values than `JSON_SHAPE_LIMITS` is thrown as `ValueTooComplex`.
 */
export function readJson(
  context: QuickJSContext,
  handle: QuickJSHandle,
  stringify: () => QuickJSHandle,
): VmRead {
  switch (context.typeof(handle)) {
    case "number": {
      const number = context.getNumber(handle);
      return { value: Number.isFinite(number) ? number : null };
    }
    case "string":
      return { value: context.getString(handle) };
    case "boolean":
      return { value: context.eq(handle, context.true) };
    case "undefined":
    case "function":
    case "symbol":
      return { value: null };
  }
  return Scope.withScope((scope) => {
    const result = context.callFunction(stringify(), context.undefined, handle);
    if (result.error) return { thrown: result.error };
    const text = scope.manage(result.value);
    if (context.typeof(text) !== "string") return { value: null };
    const json = context.getString(text);
    // What leaves the VM is walked, cloned and encoded by code that recurses: bounded first.
    const problem = jsonShapeProblem(json, JSON_SHAPE_LIMITS);
    if (problem)
      return {
        thrown: context.newError({
          name: "ValueTooComplex",
          message: `the value is too complex: ${problem}`,
        }),
      };
    return { value: JSON.parse(json) };
  });
}

/**
 * Class name and message of whatever the script threw: an Error, an object with `name` and
 * `message`, or a primitive (class `Error`, the value as message).
 */
export function describeThrown(
  context: QuickJSContext,
  thrown: QuickJSHandle,
): { name: string; message: string } {
  // dump disposes a promise handle it is given, so it gets a duplicate the scope can still own.
  const dumped: unknown = Scope.withScope((scope) => context.dump(scope.manage(thrown.dup())));
  if (dumped !== null && typeof dumped === "object") {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    if (typeof message === "string") {
      return { name: typeof name === "string" ? name : "Error", message };
    }
    return { name: typeof name === "string" ? name : "Error", message: JSON.stringify(dumped) };
  }
  return { name: "Error", message: String(dumped) };
}
