import * as v from "valibot";
import { LabelSchema, ToolNameSchema } from "../ids";
import { PlainText } from "../text";

/**
 * A server tool configuration document (spec §2), before its type's `parameters` schema
 * applies. Unknown top-level fields are rejected so that typos do not pass silently.
 */
export const ServerToolConfigSchema = v.strictObject({
  name: v.optional(ToolNameSchema),
  type: v.pipe(v.string(), v.minLength(1, "type must not be empty")),
  description: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, "description must not be empty"),
    PlainText("description"),
  ),
  enabled: v.optional(v.boolean(), true),
  primary: v.optional(v.boolean(), false),
  labels: v.optional(v.array(LabelSchema), []),
  disabledSubTools: v.optional(v.array(v.string()), []),
  defaultDeferred: v.optional(v.boolean(), false),
  parameters: v.optional(v.nullable(v.record(v.string(), v.unknown())), {}),
});

/** A normalised configuration: defaults filled, `name` set, `parameters` as its type's schema returns them. */
export interface ServerToolConfig {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly primary: boolean;
  readonly labels: readonly string[];
  readonly disabledSubTools: readonly string[];
  readonly defaultDeferred: boolean;
  readonly parameters: Readonly<Record<string, unknown>>;
}
