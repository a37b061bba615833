import type { JsonSchema } from "../json-schema";
import type { ScriptRunner, ScriptToolAnswer } from "../ports/tool-runtime";
import type { CallBudget } from "./call-budget";

/** What a tool call returns: a value, or the tool's own failure as data (spec §3.1 return convention). */
export type ToolOutcome =
  | { readonly value: unknown }
  | {
      readonly error: string;
      readonly message: string;
      readonly status?: number;
      /** `RateLimited`: how long until the tenant may run scripts again. */
      readonly retryAfterMs?: number;
      /** `tool_description`'s `UnknownTools`: the names looked at that named nothing, and those beyond its 25. */
      readonly unknown?: readonly string[];
      readonly skipped?: readonly string[];
    };

/** What a call answers: the tool's outcome, or a routing result for a client tool. */
export type CallResult =
  | ToolOutcome
  | { readonly route: "client"; readonly name: string; readonly params: unknown };

/**
 * A call nested in the running one: charged to its budget, under its caller's allow set.
 * Refusals the caller must fix throw `VanceError`s, as for a top-level call.
 */
export type NestedCall = (name: string, params: unknown) => Promise<CallResult>;

/** The discovery surface of the calling process, bound to one call, for the meta-tools (spec §13). */
export interface ProcessToolsApi {
  /** Names the process may invoke: in the manifest (`inContext`) or on request (`available`). */
  list(prefix: string | undefined): Promise<ToolOutcome>;
  /** Descriptions and schemas of up to 25 names; activates the deferred ones. */
  describe(names: readonly string[]): Promise<ToolOutcome>;
  /** The tools that best match `query` (BM25), described and activated like `describe`'s. */
  search(query: string, limit: number | undefined): Promise<ToolOutcome>;
  /** A call through the same allow-set check as a direct call, nested in the bound call. */
  invoke(name: string, params: unknown): Promise<ToolOutcome>;
  /**
   * Counts calls a script made (`execute_javascript`) as the process's usage, by tool: demand
   * for the role, like any call, but no activation. Never fails the call (a lost write is a WARN).
   */
  countCalls(calls: ReadonlyMap<string, number>): Promise<void>;
}

/** Where a running built-in sits in its call tree: what the calls it starts are charged to, and when they stop. */
export interface CallScope {
  readonly budget: CallBudget;
  readonly signal: AbortSignal;
  /** Inside a process: its discovery surface, bound to this call. Absent for a direct call. */
  readonly process?: ProcessToolsApi;
  /** The script sandbox, as `scripted` tools run in it. */
  readonly scripts: ScriptRunner;
  /**
   * A call nested in this one: the caller's allow set, one level deeper, charged to `budget`;
   * refusals come back as failures (`ToolNotAllowed`, …), as a script's sibling call sees them.
   * Calls made this way, and everything they start, activate nothing. `signal` (default: this
   * call's) aborts it.
   */
  callTool(name: string, params: unknown, signal?: AbortSignal): Promise<ScriptToolAnswer>;
}

/** A tool another tool's description may declare: what a script inside the process can call. */
export interface CallableTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /**
   * Deferred by its configuration and the recipe (not by activations, skills or the budget, which
   * change from turn to turn): such a tool is named, its parameters left to `tool_description`.
   */
  readonly deferred: boolean;
  /** The usage line of its pack (`pack__*`), for a description that groups packs. */
  readonly packHint?: string;
  /** Its family inside its pack (an OpenAPI tag), as the discovery blocks group it. */
  readonly family?: string;
}

/** Who is calling: the addressed project and, inside a process, its id and role. */
export interface CallerContext {
  readonly tenant: string;
  readonly project: string;
  readonly processId?: string;
  readonly role?: string;
}

/**
 * A built-in tool (spec §1): code only, no document, the last layer of the cascade (spec §4, §7):
 * a project or tenant document of the same name replaces or disables it — except the capability
 * floor's (spec §13.1), whose names are reserved (422 `reserved_name` on write). Built-ins may
 * carry labels so that `@label` selectors find them without a document.
 */
export interface BuiltInTool {
  readonly name: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly primary: boolean;
  readonly inputSchema: JsonSchema;
  /**
   * The description a process's manifest gives the tool when it depends on what the process may
   * call (`execute_javascript` declares them); `description` elsewhere. Called once per process
   * and listing with the process's other server tools; it must depend on nothing else, so that
   * it reads the same in every turn.
   */
  describeFor?(tools: readonly CallableTool[]): string;
  invoke(
    input: Readonly<Record<string, unknown>>,
    caller: CallerContext,
    scope: CallScope,
  ): Promise<ToolOutcome>;
}
