import { describe, expect, it } from "vitest";
import { BUILT_IN_TOOLS } from "../builtins/index";
import { CAPABILITY_FLOOR, inCapabilityFloor } from "./capability-floor";

describe("the capability floor (spec §13.1)", () => {
  it("is exactly tool_list and tool_description: extending it is a policy decision, not a drift", () => {
    expect([...CAPABILITY_FLOOR].sort()).toEqual(["tool_description", "tool_list"]);
    expect(Object.isFrozen(CAPABILITY_FLOOR)).toBe(true);
  });

  it("leaves invoke_tool and whoami out on purpose (spec: consciously not in the floor)", () => {
    expect(inCapabilityFloor("invoke_tool")).toBe(false);
    expect(inCapabilityFloor("whoami")).toBe(false);
  });

  it("holds only built-in tools, each primary", () => {
    for (const name of CAPABILITY_FLOOR) {
      expect(BUILT_IN_TOOLS.find((tool) => tool.name === name)).toMatchObject({ primary: true });
    }
  });
});
