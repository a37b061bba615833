import type { CallBudget } from "../dispatch/call-budget";
import type { JsonSchema } from "../json-schema";

/** What a tool call returns: a value, or the tool's own failure as data (spec §3.1 return convention). */
export type ToolOutcome =
  | { readonly value: unknown }
  | { readonly error: string; readonly message: string; readonly status?: number };

/** The discovery surface of the calling process, for the meta-tools (spec §13). */
export interface ProcessToolsApi {
  /** Names the process may invoke: in the manifest (`inContext`) or on request (`available`). */
  list(prefix: string | undefined): Promise<ToolOutcome>;
  /** Descriptions and schemas of up to 25 names; activates the deferred ones. */
  describe(names: readonly string[]): Promise<ToolOutcome>;
  /** A call through the same allow-set check as a direct call, nested in `scope`'s call. */
  invoke(name: string, params: unknown, scope: CallScope): Promise<ToolOutcome>;
}

/** Where a running built-in sits in its call tree: what the calls it starts are charged to, and when they stop. */
export interface CallScope {
  readonly budget: CallBudget;
  readonly signal: AbortSignal;
}

/** Who is calling: the addressed project and, inside a process, its id, role and surface. */
export interface CallerContext {
  readonly tenant: string;
  readonly project: string;
  readonly processId?: string;
  readonly role?: string;
  readonly process?: ProcessToolsApi;
}

/**
 * A built-in tool (spec §1): code only, no document. Its name is reserved: no document can
 * replace or disable it (422 `reserved_name` on write). Built-ins may carry labels so that
 * `@label` selectors find them without a document.
 */
export interface BuiltInTool {
  readonly name: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly primary: boolean;
  readonly inputSchema: JsonSchema;
  invoke(
    input: Readonly<Record<string, unknown>>,
    caller: CallerContext,
    scope: CallScope,
  ): Promise<ToolOutcome>;
}
