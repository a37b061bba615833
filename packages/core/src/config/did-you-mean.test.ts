import { describe, expect, it } from "vitest";
import { closestName, unknownFieldMessage } from "./did-you-mean";

describe("closestName", () => {
  const fields = ["maxTools", "wireType", "baseUrl", "apiKey"];

  it("finds another casing, then a near miss", () => {
    expect(closestName("maxtools", fields)).toBe("maxTools");
    expect(closestName("MAXTOOLS", fields)).toBe("maxTools");
    expect(closestName("maxTool", fields)).toBe("maxTools");
    expect(closestName("wiretpye", fields)).toBe("wireType");
    expect(closestName("base_url", fields)).toBe("baseUrl");
  });

  it("suggests nothing for a word that is no near miss, or too long to compare", () => {
    expect(closestName("pricing", fields)).toBeNull();
    expect(closestName(`maxTools${"x".repeat(100)}`, fields)).toBeNull();
  });

  it("words the message with the hint, or with the known fields", () => {
    expect(unknownFieldMessage("maxtools", fields)).toBe(
      "unknown field 'maxtools'; did you mean 'maxTools'?",
    );
    expect(unknownFieldMessage("pricing", fields)).toBe(
      "unknown field 'pricing'; known fields: maxTools, wireType, baseUrl, apiKey",
    );
  });
});
