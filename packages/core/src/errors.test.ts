import { describe, expect, it } from "vitest";
import {
  ERROR_STATUS,
  ERROR_STATUS_OVERRIDES,
  Errors,
  isErrorCode,
  StoreUnavailableError,
  toolFailureOf,
  VanceError,
} from "./errors";

describe("ERROR_STATUS: one status per code", () => {
  it("gives every code a status of the HTTP error range and names codes in snake_case", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(status, code).toBeGreaterThanOrEqual(400);
      expect(status, code).toBeLessThan(600);
    }
  });

  it("derives a failure's status from its code", () => {
    expect(new VanceError("tool_not_allowed", "no").status).toBe(403);
    expect(new VanceError("budget_floor_exceeded", "too small").status).toBe(422);
    expect(Errors.toolNotFound("x")).toMatchObject({ code: "tool_not_found", status: 404 });
    expect(Errors.pathConflict("a/b")).toMatchObject({ code: "path_conflict", status: 409 });
    expect(new StoreUnavailableError("state store", "timeout")).toMatchObject({
      code: "store_unavailable",
      status: 503,
    });
  });

  it("answers a code's second status only where ERROR_STATUS_OVERRIDES documents one", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS_OVERRIDES)) {
      expect(status).not.toBe(ERROR_STATUS[code as keyof typeof ERROR_STATUS]);
    }
    const refused = VanceError.withStatus("budget_floor_exceeded", 409, "a later limit", [], { maxTools: 1 });
    expect(refused).toBeInstanceOf(VanceError);
    expect(refused).toMatchObject({ code: "budget_floor_exceeded", status: 409, extra: { maxTools: 1 } });
    expect(toolFailureOf(refused)).toEqual({ error: "BudgetFloorExceeded", message: "a later limit" });
  });

  it("tells its codes from other strings", () => {
    expect(isErrorCode("invalid_id")).toBe(true);
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode("Invalid_Id")).toBe(false);
    expect(isErrorCode(400)).toBe(false);
  });
});
