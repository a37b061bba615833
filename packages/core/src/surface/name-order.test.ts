import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortByName } from "./name-order";

describe("sortByName", () => {
  it("orders as Array#sort orders the names, keeping equal names in their order", () => {
    const names = fc.string({ unit: fc.constantFrom("a", "b", "_", "0", "é", "\u{1f600}"), maxLength: 4 });
    fc.assert(
      fc.property(fc.array(names, { maxLength: 60 }), (list) => {
        const items = list.map((name, index) => ({ name, index }));
        const expected = [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        expect(sortByName(items)).toEqual(expected);
        expect(sortByName(items).map((item) => item.name)).toEqual([...list].sort());
      }),
    );
  });

  it("returns a list in order as it is, and never reorders its input", () => {
    const ordered = [{ name: "a" }, { name: "b__x" }, { name: "b_x" }];
    expect(sortByName(ordered)).toBe(ordered);
    const unordered = [{ name: "b" }, { name: "a" }];
    expect(sortByName(unordered).map((item) => item.name)).toEqual(["a", "b"]);
    expect(unordered.map((item) => item.name)).toEqual(["b", "a"]);
  });
});
