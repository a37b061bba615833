import { MAX_DESCRIBE } from "../builtins/meta-tools";
import type { NestedCall, ProcessToolsApi, ToolOutcome } from "../calls/built-in-tool";
import type { CascadeRead } from "../cascade/cascade-read";
import { toolFailureOf, VanceError } from "../errors";
import type { JsonSchema } from "../json-schema";
import type { ProcessRecord } from "../ports/state-store";
import type { ProcessBookkeeping } from "../surface/process-bookkeeping";
import { isPackTool, toolFamily } from "../surface/tool-family";
import type { ToolSurface } from "../surface/tool-surface";
import type { SearchIndex } from "./search-index";
import type { SearchIndexCache } from "./search-index-cache";
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS } from "./tool-search";

export interface DiscoveryApiOptions {
  readonly surface: Pick<ToolSurface, "classify" | "wasDeferred">;
  readonly bookkeeping: Pick<ProcessBookkeeping, "called" | "described" | "countCalls">;
  /** `tool_search`'s indexes, one per project and generation, built off the serving thread. */
  readonly searchIndexes: Pick<SearchIndexCache, "index">;
}

/** How the bound call's uses count: `activates: false` inside a model's script (they count, but activate nothing). */
export interface ProcessToolsOptions {
  readonly activates: boolean;
  /** The call's read of the generations: the surface answers from it. */
  readonly read: CascadeRead;
}

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
    const { activates, read } = options;
    return {
      list: (prefix) => this.list(record, read, prefix, skillTools),
      describe: (names) => this.describe(record, read, names, skillTools, activates),
      search: (query, limit) => this.search(record, read, query, limit, skillTools, activates),
      invoke: (name, params) => this.invoke(record, read, call, name, params, skillTools, activates),
      countCalls: (calls) => this.options.bookkeeping.countCalls(record, calls),
    };
  }

  /**
   * `tool_list`: every name the process may call — in this turn's tools array (`inContext`, the
   * floor pair and the turn's skill tools included) or on request (`available`) — with pack
   * hints, and the process's packs whose source is not current (`stalePacks`).
   */
  async list(
    record: ProcessRecord,
    read: CascadeRead,
    prefix: string | undefined,
    skillTools: readonly string[] = [],
  ): Promise<ToolOutcome> {
    const { classification, tools, stalePacks } = await this.options.surface.classify(
      record,
      read,
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
    return {
      value: {
        inContext: filter(classification.primary),
        available: filter(classification.deferred),
        packHints,
        stalePacks: lower
          ? stalePacks.filter(
              (pack) => `${pack.pack}__`.startsWith(lower) || lower.startsWith(`${pack.pack}__`),
            )
          : stalePacks,
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
    read: CascadeRead,
    names: readonly string[],
    skillTools: readonly string[] = [],
    activates = true,
  ): Promise<ToolOutcome> {
    const unique = [...new Set(names)];
    const asked = unique.slice(0, MAX_DESCRIBE);
    const skipped = unique.slice(MAX_DESCRIBE);
    const { tools, classification } = await this.options.surface.classify(record, read, skillTools);
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
    const deferred = new Set(classification.deferred);
    const describedNames = described.map((tool) => tool.name);
    const activate = activates ? describedNames.filter((name) => deferred.has(name)) : [];
    await this.options.bookkeeping.described(record, describedNames, activate);
    return { value: { tools: described, unknown, skipped, activated: activate } };
  }

  /**
   * `tool_search`: the `limit` tools (5 by default, at most 25) that best match `query`, as
   * `tool_description` answers them — and activated like them. The floor's tools and
   * `tool_search` itself are never results.
   */
  async search(
    record: ProcessRecord,
    read: CascadeRead,
    query: string,
    limit: number | undefined,
    skillTools: readonly string[] = [],
    activates = true,
  ): Promise<ToolOutcome> {
    const { tools } = await this.options.surface.classify(record, read, skillTools);
    let index: SearchIndex;
    try {
      index = await this.options.searchIndexes.index(record.tenant, record.project, read);
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
      read,
      hits.map((hit) => hit.name),
      skillTools,
      activates,
    );
    if ("error" in described) return described;
    const value = described.value as { tools: unknown[]; activated: string[] };
    return { value: { tools: value.tools, activated: value.activated } };
  }

  /**
   * `invoke_tool`: the named call, nested in the calling one. Refusals come back as the tool's
   * error in the style of every tool failure (`ToolNotAllowed`), as a script's sibling call sees them.
   */
  async invoke(
    record: ProcessRecord,
    read: CascadeRead,
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
        () => this.options.surface.wasDeferred(record, read, name, skillTools),
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
