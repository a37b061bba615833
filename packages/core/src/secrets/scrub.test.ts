import { describe, expect, it } from "vitest";
import { SecretScrubber } from "./scrub";

describe("SecretScrubber", () => {
  const scrubber = new SecretScrubber(["s3cr/t+1", 'q"uote']);

  it("replaces the plain, URL-encoded and JSON-escaped forms", () => {
    expect(scrubber.text('a s3cr/t+1 b s3cr%2Ft%2B1 c q\\"uote d q"uote')).toBe("a *** b *** c *** d ***");
  });

  it("replaces a secret that contains another whole", () => {
    expect(new SecretScrubber(["abc", "abcdef"]).text("xabcdefx abc")).toBe("x***x ***");
  });

  it("scrubs every string and key of a JSON value, leaving the input untouched", () => {
    const input = { "s3cr/t+1": ["ok", { deep: "see s3cr/t+1", n: 1, b: null }], plain: true };
    const copy = structuredClone(input);
    expect(scrubber.value(input)).toEqual({ "***": ["ok", { deep: "see ***", n: 1, b: null }], plain: true });
    expect(input).toEqual(copy);
  });

  it("keeps a __proto__ key an own property, as JSON.parse made it", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": "s3cr/t+1"}}') as object;
    const scrubbed = scrubber.value(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(scrubbed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(scrubbed, "__proto__")?.value).toEqual({ polluted: "***" });
  });

  it("walks a deeply nested value without exhausting the stack", () => {
    const depth = 200_000;
    const parsed = JSON.parse(`${"[".repeat(depth)}"s3cr/t+1"${"]".repeat(depth)}`) as unknown;
    let node = scrubber.value(parsed);
    for (let i = 0; i < depth; i++) node = (node as unknown[])[0];
    expect(node).toBe("***");
  });

  it("with no secrets, answers the value itself", () => {
    const value = { a: "b" };
    expect(new SecretScrubber([]).value(value)).toBe(value);
  });
});
