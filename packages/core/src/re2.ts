import type { RE2JS } from "re2js";

/**
 * RE2 (re2js, ~150 KiB of JavaScript), loaded when first needed rather than at every cold start:
 * `import()` makes it a chunk of its own in the function bundles. Every user loads it through
 * `loadRe2` on an async path, then uses `loadedRe2` synchronously.
 */
let re2: typeof RE2JS | undefined;
let loading: Promise<typeof RE2JS> | undefined;

/** Loads RE2 once; a failed load is not kept, so the next call tries again. */
export function loadRe2(): Promise<typeof RE2JS> {
  if (re2) return Promise.resolve(re2);
  loading ??= import("re2js").then(
    (module) => {
      re2 = module.RE2JS;
      return re2;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** RE2, once `loadRe2` has answered; before, a wiring mistake that throws. */
export function loadedRe2(): typeof RE2JS {
  if (!re2) throw new Error("RE2 is not loaded yet: await loadRe2() first");
  return re2;
}
