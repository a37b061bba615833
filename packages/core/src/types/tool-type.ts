import type * as v from "valibot";
import type { JsonSchema } from "../json-schema";

/**
 * A tool type (spec §3): code that knows the schema of its `parameters` and turns a validated
 * configuration into an invocable tool. Types are few and structural; tools are configuration.
 */
export interface ToolType<P extends Record<string, unknown> = Record<string, unknown>> {
  readonly typeId: string;
  readonly description: string;
  /** Validates and normalises (defaults filled) the `parameters` block. */
  readonly parametersSchema: v.GenericSchema<unknown, P>;
  /** The JSON Schema of the tool's input as the LLM sees it. */
  inputSchema(parameters: P): JsonSchema;
}

/** A tool type with its parameter type erased, as the registry holds it. */
export type AnyToolType = ToolType<Record<string, unknown>>;

/** Declares a tool type with its parameter type inferred from the schema. */
export function defineToolType<P extends Record<string, unknown>>(type: ToolType<P>): AnyToolType {
  return type as unknown as AnyToolType;
}
