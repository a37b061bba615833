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

describe("SecretScrubber: the forms an upstream may echo", () => {
  const secret = "sk-Live-7d9f2a81c4e6";
  const scrubber = new SecretScrubber([secret]);

  it("replaces the value in any letter case", () => {
    expect(scrubber.text(`key ${secret.toUpperCase()} and ${secret.toLowerCase()}`)).toBe("key *** and ***");
  });

  it("replaces its base64, alone and inside a longer base64 text at every alignment", () => {
    for (const prefix of ["", "u:", "us:", "use:"]) {
      const encoded = btoa(`${prefix}${secret}`);
      const shown = scrubber.text(`Authorization: Basic ${encoded}`);
      expect(shown).toContain("***");
      // What is left of the encoding no longer decodes to the secret.
      expect(shown.replace("***", "")).not.toContain(btoa(secret).slice(0, 8));
    }
    const urlSafe = btoa(`??${secret}`).replaceAll("+", "-").replaceAll("/", "_");
    expect(scrubber.text(urlSafe)).toContain("***");
  });

  it("replaces a value cut to its first or last half", () => {
    expect(scrubber.text(`invalid key ${secret.slice(0, 10)}…`)).toBe("invalid key ***…");
    expect(scrubber.text(`key ending …${secret.slice(-10)}`)).toBe("key ending …***");
  });

  it("leaves a fragment shorter than half the value alone (documented)", () => {
    expect(scrubber.text(`prefix ${secret.slice(0, 6)}`)).toBe(`prefix ${secret.slice(0, 6)}`);
  });
});
