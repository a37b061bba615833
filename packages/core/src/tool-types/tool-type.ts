import type * as v from "valibot";
import type { CallerContext, ToolOutcome } from "../calls/built-in-tool";
import type { CascadeHit, DocumentVersion, Layer } from "../cascade/document-cascade";
import type { ServerToolConfig } from "../config/schema";
import type { JsonSchema } from "../json-schema";
import type { NetworkPolicy } from "../net/network-policy";
import type { LlmModels, ScriptToolAnswer, ToolRuntime } from "../ports/tool-runtime";
import type { JsonSchemaValidator } from "../validation/json-schema-validator";

/** What validation depends on: settings (a literal private IP in a `rest` URL is refused on write) and the instance's schema compiler. */
export interface ToolTypeEnvironment {
  readonly networkPolicy: NetworkPolicy;
  /** Compiles (and caches) the schemas documents carry: `mcp`'s input schema, `rest`'s response schema. */
  readonly jsonSchemas: JsonSchemaValidator;
}

/** Everything a running tool may use: who calls, the platform, the cascade and its siblings. */
export interface InvocationContext {
  readonly caller: CallerContext;
  readonly runtime: ToolRuntime;
  readonly networkPolicy: NetworkPolicy;
  /** The instance's schema compiler (a `rest` answer is checked against its `responseSchema`). */
  readonly jsonSchemas: JsonSchemaValidator;
  /**
   * The model catalog's endpoints for the caller's tenant, read with the call's request
   * (`prompt_template`); without it those tools answer `ModelUnavailable`.
   */
  readonly models?: LlmModels;
  /**
   * Aborts when the call must stop: the caller's deadline passed, or the caller ended (timeout,
   * error, cancellation). Whatever the tool starts (HTTP calls, nested scripts) ends with it.
   */
  readonly signal: AbortSignal;
  /** 0 for a call from the API; n for a call n levels below it (its `CallBudget`'s depth). */
  readonly depth: number;
  /** A document through the caller's cascade (project → tenant → bundled), or null. */
  readDocument(path: string): Promise<string | null>;
  /** Like `readDocument`, with the layer and ETag of the hit (an MCP server document's secrets follow its layer). */
  readHit(path: string): Promise<CascadeHit | null>;
  /** `${secret:NAME}` as a document of `layer` may read it (tenant secrets; platform secrets for bundled). */
  secretsFor(layer: Layer): (name: string) => Promise<string | undefined>;
  /**
   * `${secret:NAME}`: the caller's tenant's secret for a project or tenant document, a platform
   * secret for a bundled one; undefined when there is none.
   */
  secret(name: string): Promise<string | undefined>;
  /**
   * Calls a sibling tool through the dispatcher, with the caller's allow set, one level deeper,
   * charged to this call's budget (`CallDepthExceeded`, `CallBudgetExceeded` when it is spent).
   * `signal` (default: this call's) aborts the sibling when the calling code ends. A refusal by
   * the budget itself is `final`: every later call from the same code would be refused alike.
   */
  callTool(name: string, params: unknown, signal?: AbortSignal): Promise<ScriptToolAnswer>;
}

/** One tool a remote source offers: an MCP server's tool, an OpenAPI operation. */
export interface SourceTool {
  /** The source's own name: the MCP tool's name, the operation's `operationId` made snake_case (else `get_path`). */
  readonly sourceName: string;
  /**
   * Other names the source knows the tool by, as its author writes them (an OpenAPI operation's
   * `operationId` and `METHOD /path`): `disabledSubTools` accepts them too.
   */
  readonly aliases?: readonly string[];
  /** The source's description; empty when it gave none. */
  readonly description: string;
  /** The input schema the source declares (for OpenAPI: built from parameters and body). */
  readonly inputSchema: JsonSchema;
  /**
   * `inputSchema`'s JSON text, when the source computed it as it listed the tool: the key of its
   * compiled validator, so that a call finds it without serialising the schema again.
   */
  readonly inputSchemaText?: string;
  /** What the type needs to run it (an OpenAPI operation's method, path and parameter places). */
  readonly target?: unknown;
  /**
   * The family of the tool inside its pack, as the source groups it (an OpenAPI operation's first
   * tag, snake_case): triage keeps or demotes a pack's family whole (spec §14.2).
   */
  readonly family?: string;
}

/** A source's tools as one load read them. */
export interface SourceList {
  readonly tools: readonly SourceTool[];
  /**
   * False once the source said its list changed (MCP `notifications/tools/list_changed`): the
   * next listing loads it again. Absent: current until the time-to-live passes.
   */
  readonly current?: () => boolean;
  /**
   * What the load left out and why (an OpenAPI operation whose schema is unusable, an unknown
   * name in `operations`): for the pack's author and the logs, never for a model.
   */
  readonly notes?: readonly string[];
  /**
   * What the list weighs in memory, when its loader knows (an OpenAPI list: its spec's or its
   * compiled list's length); estimated from its tools' text otherwise. Source caches are bounded by it.
   */
  readonly bytes?: number;
}

/** A remote-backed tool's source, opened from its tool document and the documents it names. */
export interface ToolSource {
  /**
   * What the list depends on beyond the tool document (the server document's layer and ETag, a
   * spec URL): lists are cached by the tool document and this key.
   */
  readonly key: string;
  /**
   * True when `key` names one immutable version (a spec document's ETag): its list never expires
   * while the key holds, so a document is parsed once per ETag, however often the TTL passes.
   */
  readonly versioned?: boolean;
  /** Reads the list from the remote, bounded by the source's own timeout and `signal`. */
  load(signal: AbortSignal): Promise<SourceList>;
}

/** What opening a source may use: the tool document's tenant and project, their cascade and the platform. */
export interface SourceContext {
  readonly tenant: string;
  readonly project: string;
  readonly runtime: ToolRuntime;
  readonly networkPolicy: NetworkPolicy;
  /** A document through the cascade (project → tenant → bundled) with its layer and ETag, or null. */
  readHit(path: string): Promise<CascadeHit | null>;
  /**
   * The layer and ETag `readHit` would answer, without the body where the cascade knows them;
   * absent: `readHit` serves.
   */
  readVersion?(path: string): Promise<DocumentVersion | null>;
  /** `${secret:NAME}` as a document of `layer` may read it (tenant secrets; platform secrets for bundled). */
  secretsFor(layer: Layer): (name: string) => Promise<string | undefined>;
}

/**
 * How a remote-backed type gets its tools: a pack (`mcp_server`, `openapi`) offers one sub-tool
 * `{doc}__{op}` per source tool; a `schema` type (`mcp`) is one tool whose input schema comes
 * from the source. Listings never wait long on a remote: `ToolSources` caches what loaded.
 */
export interface ToolSourcing<P extends Record<string, unknown> = Record<string, unknown>> {
  readonly kind: "pack" | "schema";
  /** `schema`: the source tool whose input schema the tool takes, or null when the document fixes it. */
  schemaTool?(parameters: P): string | null;
  /** `pack`: the pack's line in discovery blocks and `tool_list.packHints`. */
  promptHint?(parameters: P): string | undefined;
  /** Resolves the source: reads and validates the documents it names; throws `VanceError` when they are missing or invalid. */
  open(config: ServerToolConfig, parameters: P, context: SourceContext): Promise<ToolSource>;
  /** `pack`: runs one sub-tool; `tool` is the source tool it was listed from. */
  invokeSubTool?(
    config: ServerToolConfig,
    parameters: P,
    tool: SourceTool,
    input: Readonly<Record<string, unknown>>,
    context: InvocationContext,
  ): Promise<ToolOutcome>;
}

/** What a type's `check` refuses: `textLine` is the line within the text at `path` (a script's), when known. */
export interface ParameterProblem {
  readonly path: string;
  readonly message: string;
  readonly textLine?: number;
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
  /** Checks beyond the schema (some depend on settings); paths are relative to `parameters`. */
  check?(parameters: P, environment: ToolTypeEnvironment): ParameterProblem[];
  /** Remote-backed types: where their tools (packs) or input schema (`mcp`) come from. */
  readonly sourcing?: ToolSourcing<P>;
  /**
   * Runs a configured tool; absent for types this service can configure but not yet run. A
   * `schema` type's tool that took its input schema from its source gets that source tool
   * (`source`), from the listing the call's lookup found: the source needs no second look-up.
   */
  invoke?(
    config: ServerToolConfig,
    parameters: P,
    input: Readonly<Record<string, unknown>>,
    context: InvocationContext,
    source?: SourceTool,
  ): Promise<ToolOutcome>;
}

/** A tool type with its parameter type erased, as the registry holds it. */
export type AnyToolType = ToolType<Record<string, unknown>>;

/** Declares a tool type with its parameter type inferred from the schema. */
export function defineToolType<P extends Record<string, unknown>>(type: ToolType<P>): AnyToolType {
  return type as unknown as AnyToolType;
}
