/** Store call counting shared by the benches. */
import type { StateStore } from "@vance/core";

/**
 * Wraps a state store and counts calls per method (a proxy, so new port methods are counted
 * too). Methods run on the wrapped store itself, so adapters with private fields work.
 */
export function countingStateStore(inner: StateStore): { store: StateStore; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  const store = new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        counts[property] = (counts[property] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, counts };
}
