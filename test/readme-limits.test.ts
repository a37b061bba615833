import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { limitRows, limitsSection, README, readmeSection } from "../scripts/limits";

describe("README's Limits table", () => {
  it("is the one generated from the code's constants (npm run readme:limits)", () => {
    expect(readmeSection(readFileSync(README, "utf8")), "run `npm run readme:limits`").toBe(limitsSection());
  });

  it("states the bounds the code enforces", () => {
    const rows = new Map(limitRows().map(([what, limit]) => [what, limit]));
    expect(rows.get("request body (every route but the diagnosis report)")).toBe("256 KiB");
    expect(rows.get("script deadline (`timeoutMs`)")).toBe("30 s");
  });
});
