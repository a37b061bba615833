import { describe, expect, it } from "vitest";
import { nearest } from "./issue-messages";

describe("nearest (the 'did you mean' of unknown fields)", () => {
  const fields = ["maxTools", "wireType", "baseUrl", "apiKey"];

  it("finds another casing, then a near miss", () => {
    expect(nearest("maxtools", fields)).toBe("maxTools");
    expect(nearest("MAXTOOLS", fields)).toBe("maxTools");
    expect(nearest("maxTool", fields)).toBe("maxTools");
    expect(nearest("wiretpye", fields)).toBe("wireType");
    expect(nearest("base_url", fields)).toBe("baseUrl");
  });

  it("suggests nothing for a word that is no near miss, or too long to compare", () => {
    expect(nearest("pricing", fields)).toBeUndefined();
    expect(nearest(`maxTools${"x".repeat(100)}`, fields)).toBeUndefined();
  });
});
