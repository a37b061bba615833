import { describe, expect, it } from "vitest";
import { parseToolLimitFromError } from "./observed-tool-limits";

describe("parseToolLimitFromError", () => {
  it.each([
    [
      "OpenAI",
      "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead.",
      128,
    ],
    [
      "OpenAI, wrapped as the JSON body",
      `400 {"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}`,
      128,
    ],
    [
      "OpenAI, spec's line-broken form",
      "Invalid 'tools': array too long. Expected an array with maximum length 128,\nbut got an array with length 163 instead.   (code=array_above_max_length)",
      128,
    ],
    [
      "OpenAI legacy functions",
      "Invalid 'functions': array too long. Expected an array with maximum length 64, but got an array with length 90 instead.",
      64,
    ],
    ["Anthropic / pydantic", "tools: List should have at most 128 items after validation, not 163", 128],
    [
      "pydantic with a body path",
      "body.tools: List should have at most 100 items after validation, not 101",
      100,
    ],
    ["Anthropic-style too many", "too many tools: maximum is 64", 64],
    ["gateway too many, sent > limit", "Too many tools provided: 163 > 128", 128],
    ["gateway must contain", "'tools' must contain at most 128 items", 128],
    ["too many, maximum allowed", "Too many tools (163); the maximum allowed is 96", 96],
    [
      "exceeds the maximum of N tools",
      "Request contains 163 tools, which exceeds the maximum of 128 tools.",
      128,
    ],
    ["maximum number of tools is", "Bad request: maximum number of tools is 256 (got 300)", 256],
  ])("%s → %s", (_name, text, limit) => {
    expect(parseToolLimitFromError(text)).toBe(limit);
  });

  it.each([
    [
      "another array's limit",
      "Invalid 'messages': array too long. Expected an array with maximum length 2048, but got an array with length 3000 instead.",
    ],
    [
      "a field inside one tool",
      "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string with length 70 instead.",
    ],
    [
      "an array inside one tool",
      "Invalid 'tools[3].function.parameters.required': array too long. Expected an array with maximum length 10, but got an array with length 12 instead.",
    ],
    [
      "a nested pydantic list",
      "tools.0.input_schema.enum: List should have at most 5 items after validation, not 9",
    ],
    ["only the sent length", "got an array with length 163 instead"],
    ["too many tools without a number", "Too many tools provided: 163"],
    [
      "context length",
      "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens.",
    ],
    ["rate limit", "Rate limit reached for gpt-4.1: limit 500 requests per minute, used 500"],
    ["empty", ""],
    ["upstream outage", "502 Bad Gateway"],
  ])("%s → null", (_name, text) => {
    expect(parseToolLimitFromError(text)).toBeNull();
  });
});
