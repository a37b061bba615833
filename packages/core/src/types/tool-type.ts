import type * as v from "valibot";
import type { CallerContext, ToolOutcome } from "../builtins/built-in-tool";
import type { ServerToolConfig } from "../config/schema";
import type { FieldError } from "../errors";
import type { JsonSchema } from "../json-schema";
import type { ToolRuntime } from "../ports/tool-runtime";

/** Decides which network addresses tenant-controlled URLs (`rest`, `mcp`) may reach. */
export interface NetworkPolicy {
  /** Why this IP address (v4 or v6 literal) must not be reached, or null when it may. */
  addressProblem(address: string): string | null;
}

/** Settings that validation depends on (a literal private IP in a `rest` URL is refused on write). */
export interface ToolTypeEnvironment {
  readonly networkPolicy: NetworkPolicy;
}

/** Everything a running tool may use: who calls, the platform, the cascade and its siblings. */
export interface InvocationContext {
  readonly caller: CallerContext;
  readonly runtime: ToolRuntime;
  readonly networkPolicy: NetworkPolicy;
  /**
   * Aborts when the call must stop: the caller's deadline passed, or the caller ended (timeout,
   * error, cancellation). Whatever the tool starts (HTTP calls, nested scripts) ends with it.
   */
  readonly signal: AbortSignal;
  /** 0 for a call from the API; n for a call n levels below it (its `CallBudget`'s depth). */
  readonly depth: number;
  /** A document through the caller's cascade (project → tenant → bundled), or null. */
  readDocument(path: string): Promise<string | null>;
  /**
   * `${secret:NAME}`: the caller's tenant's secret for a project or tenant document, a platform
   * secret for a bundled one; undefined when there is none.
   */
  secret(name: string): Promise<string | undefined>;
  /**
   * Calls a sibling tool through the dispatcher, with the caller's allow set, one level deeper,
   * charged to this call's budget (`CallDepthExceeded`, `CallBudgetExceeded` when it is spent).
   * `signal` (default: this call's) aborts the sibling when the calling code ends.
   */
  callTool(name: string, params: unknown, signal?: AbortSignal): Promise<ToolOutcome>;
}

/**
 * A tool type (spec §3): code that knows the schema of its `parameters` and runs configured
 * tools. Types are few and structural; tools are configuration.
 */
export interface ToolType<P extends Record<string, unknown> = Record<string, unknown>> {
  readonly typeId: string;
  readonly description: string;
  /** Validates and normalises (defaults filled) the `parameters` block. */
  readonly parametersSchema: v.GenericSchema<unknown, P>;
  /** The JSON Schema of the tool's input as the LLM sees it. */
  inputSchema(parameters: P): JsonSchema;
  /** Checks beyond the schema that depend on settings; paths are relative to `parameters`. */
  check?(parameters: P, environment: ToolTypeEnvironment): FieldError[];
  /** Runs a configured tool; absent for types this service can configure but not yet run. */
  invoke?(
    config: ServerToolConfig,
    parameters: P,
    input: Readonly<Record<string, unknown>>,
    context: InvocationContext,
  ): Promise<ToolOutcome>;
}

/** A tool type with its parameter type erased, as the registry holds it. */
export type AnyToolType = ToolType<Record<string, unknown>>;

/** Declares a tool type with its parameter type inferred from the schema. */
export function defineToolType<P extends Record<string, unknown>>(type: ToolType<P>): AnyToolType {
  return type as unknown as AnyToolType;
}
