import { afterEach, describe, expect, it, vi } from "vitest";
import { failEveryEvent, startFunction } from "./start";

afterEach(() => vi.restoreAllMocks());

describe("startFunction: a Lambda entry's start", () => {
  it("serves the started handler", async () => {
    const handler = await startFunction(
      "test",
      async () => async (event: number) => event * 2,
      failEveryEvent,
    );
    expect(await handler(21)).toBe(42);
  });

  it("after a failed start, logs one JSON line with the cause and serves the stand-in, which logs it per event", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const handler = await startFunction(
      "test",
      (): ((event: unknown) => Promise<string>) => {
        throw new Error("invalid configuration:\n- VANCE_STATE_TABLE: required");
      },
      failEveryEvent,
    );
    expect(errors).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(errors.mock.calls[0]?.[0]))).toEqual({
      level: "ERROR",
      event: "function.start_failed",
      function: "test",
      error: "invalid configuration:\n- VANCE_STATE_TABLE: required",
    });
    await expect(handler({})).rejects.toThrow(/VANCE_STATE_TABLE: required/);
    expect(errors).toHaveBeenCalledTimes(2);
  });
});
