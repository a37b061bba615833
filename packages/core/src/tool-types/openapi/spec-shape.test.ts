import { describe, expect, it } from "vitest";
import { openApiShapeProblem } from "./spec-shape";

describe("openApiShapeProblem", () => {
  it.each([
    ['{"openapi":"3.1.0","info":{"title":"x"},"paths":{}}'],
    ['\n  {"info":{"openapi":"2.0","paths":1},"paths":{"/a":{}},"openapi":"3.0.3"}'],
    ["openapi: 3.0.3\ninfo:\n  title: x\npaths:\n  /a: {}\n"],
    ["\uFEFF'openapi': '3.1.0'\nwebhooks:\n  a: {}\n"],
  ])("accepts an OpenAPI 3 top level: %s", (text) => {
    expect(openApiShapeProblem(text)).toBeNull();
  });

  it.each([
    ["# Notes\nsome markdown\n", "no top-level 'openapi'"],
    ['{"info":{"openapi":"3.0.0"},"paths":{}}', "no top-level 'openapi'"],
    ['{"swagger":"2.0","paths":{}}', "no top-level 'openapi'"],
    ['{"openapi":"2.0","paths":{}}', "not 3.x"],
    ['{"openapi":"3.0.0","info":{"paths":{}}}', "no top-level 'paths'"],
    ["openapi: 3.0.0\ninfo:\n  paths: {}\n", "no top-level 'paths'"],
    ['{"openapi":"3.0.0","x":"\\"paths\\":{}"}', "no top-level 'paths'"],
  ])("refuses %s", (text, reason) => {
    expect(openApiShapeProblem(text)).toContain(reason);
  });

  it("reads 5 MB of nesting in one pass without a stack", () => {
    const deep = `{"openapi":"3.0.0","paths":{},"x":${"[".repeat(2_500_000)}${"]".repeat(2_500_000)}}`;
    expect(openApiShapeProblem(deep)).toBeNull();
  });
});
