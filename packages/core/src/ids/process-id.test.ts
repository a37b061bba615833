import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { VanceError } from "../errors";
import { assertProcessId, ProcessIdSchema, processIdProblem } from "./process-id";

describe("process ids, one rule for the route, the MCP session header and the record read", () => {
  it("accepts the UUIDs a spawn mints and refuses what no spawn answers", () => {
    expect(v.is(ProcessIdSchema, globalThis.crypto.randomUUID())).toBe(true);
    expect(v.is(ProcessIdSchema, "p".repeat(64))).toBe(true);
    for (const bad of ["", "p".repeat(65), "a/b", "a_b", "a b", "ü", "../x"]) {
      expect(v.is(ProcessIdSchema, bad), bad).toBe(false);
      expect(processIdProblem(bad), bad).not.toBeNull();
    }
  });

  it("the assert throws invalid_id naming the rule, exactly where the schema refuses", () => {
    expect(() => assertProcessId("a-1")).not.toThrow();
    const refusal = (() => {
      try {
        assertProcessId("a/b");
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(VanceError);
    expect((refusal as VanceError).code).toBe("invalid_id");
    expect((refusal as VanceError).message).toBe(
      "process id 'a/b' is not a valid id: letters, digits and '-', at most 64 characters",
    );
  });

  it("the schema's issue states the rule, as path parameters report it", () => {
    const result = v.safeParse(ProcessIdSchema, "a_b");
    expect(result.success).toBe(false);
    expect(result.issues?.[0]?.message).toBe(
      "invalid process id: letters, digits and '-', at most 64 characters",
    );
  });
});
