import { META_TOOL } from "../ids";
/**
 * The capability floor (spec §13.1, `MANDATORY_TOOLS`): the exit from a lean manifest. These
 * built-ins are always primary, added even to an allow set that lacks them, and no document can
 * replace or disable them (422 `reserved_name`); every other built-in is configurable like any
 * tool. Extending it is a policy decision: `capability-floor.test.ts` pins its membership.
 */
export const CAPABILITY_FLOOR: readonly string[] = Object.freeze([META_TOOL.describe, META_TOOL.list]);

const FLOOR = new Set(CAPABILITY_FLOOR);

/** Whether `name` is one of the capability floor's tools. */
export function inCapabilityFloor(name: string): boolean {
  return FLOOR.has(name);
}
