import type { JsonSchema } from "../json-schema";

/** What a tool call returns: a value, or the tool's own failure as data (spec §3.1 return convention). */
export type ToolOutcome =
  | { readonly value: unknown }
  | { readonly error: string; readonly message: string; readonly status?: number };

/** Who is calling: the addressed project and, inside a process, its id and role. */
export interface CallerContext {
  readonly tenant: string;
  readonly project: string;
  readonly processId?: string;
  readonly role?: string;
}

/**
 * A built-in tool (spec §1): code only, no document. The last fallback layer of the cascade.
 * Built-ins may carry labels so that `@label` selectors find them without a document.
 */
export interface BuiltInTool {
  readonly name: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly primary: boolean;
  readonly inputSchema: JsonSchema;
  invoke(input: Readonly<Record<string, unknown>>, caller: CallerContext): Promise<ToolOutcome>;
}
