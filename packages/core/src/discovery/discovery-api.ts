import { MAX_DESCRIBE } from "../builtins/meta-tools";
import type { NestedCall, ProcessToolsApi, ToolOutcome } from "../calls/built-in-tool";
import { toolFailureOf, VanceError } from "../errors";
import type { JsonSchema } from "../json-schema";
import type { ProcessRecord } from "../ports/state-store";
import { isDeferred } from "../surface/classify";
import {
  COLLAPSED_LIST_NOTE,
  collapsedNameLists,
  DISCOVERY_BLOCK_TOKENS,
  estimateTokens,
} from "../surface/discovery";
import type { ProcessBookkeeping } from "../surface/process-bookkeeping";
import { DEFAULT_ACTIVATION_SETTINGS } from "../surface/process-records";
import { isPackTool, toolFamily } from "../surface/tool-family";
import type { ToolSurface } from "../surface/tool-surface";
import type { SnapshotView, ToolSnapshot } from "../tools/tool-snapshot";
import type { SearchIndex } from "./search-index";
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS } from "./tool-search";

/**
 * How many of `tool_search`'s best results it activates: the model calls one of the first few,
 * and activating everything a search answers filled the tools array (20 searches put 43 tools on
 * the wire, issue 36). The rest are described; `tool_description` or a call activates them.
 */
export const SEARCH_ACTIVATES = 3;

export interface DiscoveryApiOptions {
  readonly surface: Pick<ToolSurface, "classify" | "wasDeferred">;
  readonly bookkeeping: Pick<ProcessBookkeeping, "called" | "described" | "countCalls">;
  /** The process's activation cap (`ActivationSettings.maxActivated`): one call activates no more. */
  readonly maxActivated?: number;
  /** `tool_search`'s index, a view of the tool snapshot (`searchIndexView`): built off the serving thread. */
  readonly searchIndex: SnapshotView<Promise<SearchIndex>>;
}

/** How the bound call's uses count: `activates: false` inside a model's script (they count, but activate nothing). */
export interface ProcessToolsOptions {
  readonly activates: boolean;
  /** The call's snapshot of the project's tools: the surface answers from it. */
  readonly snapshot: ToolSnapshot;
  /** Whether the caller may call `invoke_tool` (its allow set, or a served surface, has it). */
  readonly invokeTool?: boolean;
}

/** What `tool_description` and `tool_search` answer about calling what they described. */
const CALL_NEXT = "Call these tools by name in your next step: they are in your tools array now.";
const CALL_THROUGH_INVOKE_TOOL =
  'Call these tools by name in your next step: they are in your tools array now. If your tool list does not show them (it was fetched before this call), call invoke_tool with {"name": "<tool name>", "params": {…}} instead.';

/**
 * The discovery API (spec §13): what the meta-tools `tool_list`, `tool_description` and
 * `invoke_tool` do inside a process. The `ToolDispatcher` binds it to the process, the running
 * call and the turn's skill tools (`forProcess`); `invoke_tool`'s call goes back through that
 * call's `NestedCall`, charged to its budget.
 */
export class DiscoveryApi {
  constructor(private readonly options: DiscoveryApiOptions) {}

  /** The meta-tools' view of `record` for one call; `call` starts calls nested in it. */
  forProcess(
    record: ProcessRecord,
    call: NestedCall,
    skillTools: readonly string[] = [],
    options: ProcessToolsOptions,
  ): ProcessToolsApi {
    const { activates, snapshot } = options;
    const howToCall = options.invokeTool ? CALL_THROUGH_INVOKE_TOOL : CALL_NEXT;
    return {
      list: (prefix) => this.list(record, snapshot, prefix, skillTools),
      describe: (names) =>
        this.describe(record, snapshot, names, skillTools, activates, MAX_DESCRIBE, howToCall),
      search: (query, limit) => this.search(record, snapshot, query, limit, skillTools, activates, howToCall),
      invoke: (name, params) => this.invoke(record, snapshot, call, name, params, skillTools, activates),
      countCalls: (calls) => this.options.bookkeeping.countCalls(record, calls),
    };
  }

  /**
   * `tool_list`: every name the process may call — in this turn's tools array (`inContext`, the
   * floor pair and the turn's skill tools included) or on request (`available`) — with pack
   * hints, and the process's packs whose source is not current (`stalePacks`). Without a prefix
   * the lists collapse by family when they would pass the discovery block's token budget.
   */
  async list(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    prefix: string | undefined,
    skillTools: readonly string[] = [],
  ): Promise<ToolOutcome> {
    const { classification, tools, stalePacks } = await this.options.surface.classify(
      record,
      snapshot,
      skillTools,
    );
    const lower = prefix?.toLowerCase();
    const filter = (names: readonly string[]) =>
      lower ? names.filter((name) => name.toLowerCase().startsWith(lower)) : [...names];
    const packHints: Record<string, string> = {};
    for (const tool of tools.values()) {
      if (!isPackTool(tool.name) || !tool.packHint) continue;
      const pack = toolFamily(tool.name);
      if (!packHints[pack]) packHints[pack] = tool.packHint;
    }
    if (lower) {
      return {
        value: {
          inContext: filter(classification.primary),
          available: filter(classification.deferred),
          packHints,
          stalePacks: stalePacks.filter(
            (pack) => `${pack.pack}__`.startsWith(lower) || lower.startsWith(`${pack.pack}__`),
          ),
        },
      };
    }
    // Without a prefix the answer stays within the static discovery block's budget (issue 36:
    // GitHub's pack answered 11,335 tokens of names), its families collapsed as the block's are.
    const rest = { packHints, stalePacks, note: COLLAPSED_LIST_NOTE };
    const fitted = collapsedNameLists(
      [classification.primary, classification.deferred],
      DISCOVERY_BLOCK_TOKENS - estimateTokens(JSON.stringify(rest)),
    );
    const [inContext, available] = fitted.lists as [string[], string[]];
    return {
      value: {
        inContext,
        available,
        packHints,
        stalePacks,
        ...(fitted.collapsed ? { note: COLLAPSED_LIST_NOTE } : {}),
      },
    };
  }

  /**
   * `tool_description`: descriptions and schemas of up to `MAX_DESCRIBE` names (the rest in
   * `skipped`), activating the deferred ones for the next turn unless `activates` is false (a
   * script's call); an error when none is a tool.
   */
  async describe(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    names: readonly string[],
    skillTools: readonly string[] = [],
    activates = true,
    activateAtMost = MAX_DESCRIBE,
    howToCall = CALL_NEXT,
  ): Promise<ToolOutcome> {
    const unique = [...new Set(names)];
    const asked = unique.slice(0, MAX_DESCRIBE);
    const skipped = unique.slice(MAX_DESCRIBE);
    const { tools, classification } = await this.options.surface.classify(record, snapshot, skillTools);
    const described: { name: string; description: string; paramsSchema: JsonSchema }[] = [];
    const unknown: string[] = [];
    for (const name of asked) {
      const tool = tools.get(name);
      if (tool) described.push({ name, description: tool.description, paramsSchema: tool.inputSchema });
      else unknown.push(name);
    }
    if (described.length === 0) {
      const rest =
        skipped.length === 0
          ? ""
          : `; ${skipped.length} more names were not looked at (at most ${MAX_DESCRIBE} per call): ${skipped.join(", ")} — ask for them in another call`;
      return {
        error: "UnknownTools",
        message: `none of these names is a tool this process can use: ${asked.join(", ")}; call tool_list to see them${rest}`,
        unknown,
        skipped,
      };
    }
    const describedNames = described.map((tool) => tool.name);
    const cap = this.options.maxActivated ?? DEFAULT_ACTIVATION_SETTINGS.maxActivated;
    const candidates = activates
      ? describedNames.slice(0, activateAtMost).filter((name) => isDeferred(classification, tools, name))
      : [];
    // Past the cap the first names' activations would push this very call's out: say so instead.
    const activate = candidates.slice(0, cap);
    await this.options.bookkeeping.described(record, describedNames, activate);
    const overCap =
      candidates.length > cap
        ? {
            note: `only the first ${cap} were added to your tools array (a process keeps at most ${cap} activated tools): describe ${candidates.slice(cap).join(", ")} again when you need them`,
          }
        : {};
    return { value: { tools: described, unknown, skipped, activated: activate, howToCall, ...overCap } };
  }

  /**
   * `tool_search`: the `limit` tools (5 by default, at most 25) that best match `query`, as
   * `tool_description` answers them; the first `SEARCH_ACTIVATES` are activated like them. The
   * floor's tools and `tool_search` itself are never results.
   */
  async search(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    query: string,
    limit: number | undefined,
    skillTools: readonly string[] = [],
    activates = true,
    howToCall = CALL_NEXT,
  ): Promise<ToolOutcome> {
    const { tools } = await this.options.surface.classify(record, snapshot, skillTools);
    let index: SearchIndex;
    try {
      index = await snapshot.view(this.options.searchIndex);
    } catch (error) {
      return { error: "SearchUnavailable", message: error instanceof Error ? error.message : String(error) };
    }
    const count = Math.min(MAX_SEARCH_RESULTS, Math.max(1, Math.floor(limit ?? DEFAULT_SEARCH_RESULTS)));
    // The project's index, narrowed to what this process may call.
    const hits = index.search(query, count, (name) => tools.has(name));
    if (hits.length === 0) {
      return {
        value: {
          tools: [],
          activated: [],
          note: "no tool matches these words; call tool_list to see every name",
        },
      };
    }
    const described = await this.describe(
      record,
      snapshot,
      hits.map((hit) => hit.name),
      skillTools,
      activates,
      SEARCH_ACTIVATES,
      howToCall,
    );
    if ("error" in described) return described;
    const value = described.value as { tools: unknown[]; activated: string[] };
    return { value: { tools: value.tools, activated: value.activated, howToCall } };
  }

  /**
   * `invoke_tool`: the named call, nested in the calling one. Refusals come back as the tool's
   * error in the style of every tool failure (`ToolNotAllowed`), as a script's sibling call sees them.
   */
  async invoke(
    record: ProcessRecord,
    snapshot: ToolSnapshot,
    call: NestedCall,
    name: string,
    params: unknown,
    skillTools: readonly string[] = [],
    activates = true,
  ): Promise<ToolOutcome> {
    try {
      const result = await call(name, params);
      await this.options.bookkeeping.called(
        record,
        name,
        result,
        () => this.options.surface.wasDeferred(record, snapshot, name, skillTools),
        activates,
      );
      return "route" in result
        ? { error: "ClientToolNotCallable", message: `'${name}' runs on the client; call it directly` }
        : result;
    } catch (error) {
      if (error instanceof VanceError) return toolFailureOf(error);
      throw error;
    }
  }
}
