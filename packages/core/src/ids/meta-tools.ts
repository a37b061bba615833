/**
 * The meta-tools' names (spec §13): the capability floor's `tool_list` and `tool_description`,
 * `invoke_tool`, and the optional `tool_search` and `execute_javascript` — spelled here only.
 */
export const META_TOOL = Object.freeze({
  list: "tool_list",
  describe: "tool_description",
  invoke: "invoke_tool",
  search: "tool_search",
  executeJavascript: "execute_javascript",
} as const);
