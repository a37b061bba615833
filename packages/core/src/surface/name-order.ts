/** Below this length a run is sorted by insertion; longer runs are merged. */
const RUN = 8;

/**
 * `items` in name order, stable: UTF-16 code-unit order, the order `Array#sort()` gives strings
 * (for tool names, `[a-z0-9_]`, the same as `compareStrings`). Returns `items` itself when it is
 * in order already.
 *
 * Classification sorts a process's tools once per manifest and builds every list in that order
 * instead of sorting each again. A merge sort comparing names inline takes about half the time of
 * `sort` with a comparator, which calls back into JavaScript for every comparison.
 *
 * @example sortByName([{ name: "b" }, { name: "a" }]) // [{ name: "a" }, { name: "b" }]
 */
export function sortByName<T extends { readonly name: string }>(items: readonly T[]): readonly T[] {
  const n = items.length;
  let ordered = 1;
  while (ordered < n && items[ordered]!.name >= items[ordered - 1]!.name) ordered++;
  if (ordered >= n) return items;

  let from = items.slice();
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let k = start + 1; k < end; k++) {
      const item = from[k]!;
      let j = k - 1;
      while (j >= start && from[j]!.name > item.name) {
        from[j + 1] = from[j]!;
        j--;
      }
      from[j + 1] = item;
    }
  }
  let to = new Array<T>(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let a = lo;
      let b = mid;
      let k = lo;
      // Only a strictly smaller right-hand name goes first: equal names keep their order.
      while (a < mid && b < hi) to[k++] = from[b]!.name < from[a]!.name ? from[b++]! : from[a++]!;
      while (a < mid) to[k++] = from[a++]!;
      while (b < hi) to[k++] = from[b++]!;
    }
    const swap = from;
    from = to;
    to = swap;
  }
  return from;
}
