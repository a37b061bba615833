import type { BuiltInTool, CallScope, ProcessToolsApi, ToolOutcome } from "../calls/built-in-tool";
import { META_TOOL } from "../ids";
import { discoverySummary } from "../surface/discovery";

/** Most names `tool_description` describes per call; the rest come back in `skipped`. */
export const MAX_DESCRIBE = 25;

const needsProcess: ToolOutcome = {
  error: "ProcessRequired",
  message: "this meta-tool works inside a process: POST …/processes/{id}/invoke",
};

function withProcess(
  scope: CallScope,
  run: (api: ProcessToolsApi) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  return scope.process ? run(scope.process) : Promise.resolve(needsProcess);
}

/** `tool_list(prefix?)`: names of every tool the process may invoke, with pack hints. */
export const toolList: BuiltInTool = {
  name: META_TOOL.list,
  description:
    "Lists the names of all tools you can use: `inContext` are in your tools array, `available` can be described with tool_description and then called. Optional `prefix` filters names (case-insensitive).",
  labels: ["discovery"],
  primary: true,
  inputSchema: {
    type: "object",
    properties: {
      prefix: { type: "string", description: "Only names starting with this (case-insensitive)" },
    },
    additionalProperties: false,
  },
  invoke: (input, _caller, scope) =>
    withProcess(scope, (api) => api.list(typeof input.prefix === "string" ? input.prefix : undefined)),
};

const DESCRIBE_DESCRIPTION = `Returns the description and parameter schema of up to ${MAX_DESCRIBE} tools by name, and adds them to your tools array so you can call them next.`;

/**
 * `tool_description(names)`: descriptions and schemas; activates deferred tools for the next turn.
 * Inside a process its description ends with the discovery summary (the tools deferred by
 * configuration and the recipe), so a client that drops `initialize`'s instructions still shows
 * the model what it can ask for; it is in the capability floor, so every surface carries it.
 */
export const toolDescription: BuiltInTool = {
  name: META_TOOL.describe,
  description: DESCRIBE_DESCRIPTION,
  describeFor: (tools) => {
    const summary = discoverySummary(tools.filter((tool) => tool.deferred));
    return summary === "" ? DESCRIBE_DESCRIPTION : `${DESCRIBE_DESCRIPTION}\n\n${summary}`;
  },
  labels: ["discovery"],
  primary: true,
  inputSchema: {
    type: "object",
    properties: {
      names: { type: "array", items: { type: "string" }, minItems: 1, description: "Tool names" },
    },
    required: ["names"],
    additionalProperties: false,
  },
  invoke: (input, _caller, scope) => withProcess(scope, (api) => api.describe(input.names as string[])),
};

/**
 * `tool_search(query, limit?)`: the process's tools that best match a description of the task
 * (ranked as docs/finding-tools.md *How search ranks* says), described and activated like
 * `tool_description`'s. Not in the capability floor: a recipe adds it (`allowedToolsAdd`), and a
 * spawn adds it by itself when the allow set is larger than `TOOL_SEARCH_AUTO_SIZE`.
 */
export const toolSearch: BuiltInTool = {
  name: META_TOOL.search,
  description:
    "Finds the tools that fit a task described in words (e.g. 'create an issue comment') and returns their descriptions and parameter schemas, best first; they are added to your tools array so you can call them next.",
  labels: ["discovery"],
  primary: true,
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", minLength: 1, description: "What the tool should do, in words" },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: 25,
        description: "How many tools to return (default 5)",
      },
    },
    required: ["query"],
    additionalProperties: false,
  },
  invoke: (input, _caller, scope) =>
    withProcess(scope, (api) =>
      api.search(String(input.query), typeof input.limit === "number" ? input.limit : undefined),
    ),
};

/** `invoke_tool(name, params)`: a named call through the same allow-set check; primary like the other two (spec §13). */
export const invokeTool: BuiltInTool = {
  name: META_TOOL.invoke,
  description: "Calls a tool by name with params, under the same rules as calling it directly.",
  labels: ["discovery"],
  primary: true,
  inputSchema: {
    type: "object",
    properties: { name: { type: "string" }, params: { type: "object" } },
    required: ["name"],
    additionalProperties: false,
  },
  invoke: (input, _caller, scope) =>
    withProcess(scope, (api) => api.invoke(String(input.name), input.params ?? {})),
};

/** The meta-tools, registered as built-ins. */
export const META_TOOLS: readonly BuiltInTool[] = [toolList, toolDescription, invokeTool, toolSearch];
