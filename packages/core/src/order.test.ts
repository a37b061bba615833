import { describe, expect, it } from "vitest";
import { byString, compareStrings } from "./order";

describe("compareStrings", () => {
  it("answers 0 for equal strings and orders a prefix first", () => {
    expect(compareStrings("doc", "doc")).toBe(0);
    expect(compareStrings("doc", "doc_a")).toBeLessThan(0);
    expect(compareStrings("b", "a")).toBeGreaterThan(0);
  });

  it("orders by code point, as UTF-8 bytes sort, not by UTF-16 code unit", () => {
    const astral = "\u{1F600}";
    const high = "\uFF21";
    expect(compareStrings(high, astral)).toBeLessThan(0);
    expect([astral, high, "z"].sort(compareStrings)).toEqual(["z", high, astral]);
  });

  it("sorts items by a field, keeping equal keys in their order", () => {
    const items = [
      { name: "b", n: 1 },
      { name: "a", n: 2 },
      { name: "b", n: 3 },
    ];
    expect(items.sort(byString((item) => item.name)).map((item) => item.n)).toEqual([2, 1, 3]);
  });
});
