import * as v from "valibot";
import { DocumentPathSchema } from "../ids";
import { NO_INPUT_SCHEMA } from "./inputs";
import { type McpServerCaches, McpServerType, McpType, mcpToolTypes } from "./mcp";
import { OpenApiType } from "./openapi/index";
import { PromptTemplateType } from "./prompt-template/index";
import { RestType } from "./rest/index";
import { ScriptedType } from "./scripted";
import { type AnyToolType, defineToolType } from "./tool-type";

/** `doc_lookup`: exposes one document of the cascade as a tool. */
export const DocLookupType = defineToolType({
  typeId: "doc_lookup",
  description:
    "Returns the text of a document, resolved through the cascade (project → tenant → bundled) at call time.",
  parametersSchema: v.strictObject({ path: DocumentPathSchema }),
  inputSchema: () => NO_INPUT_SCHEMA,
  async invoke(_config, parameters, _input, context) {
    const text = await context.readDocument(parameters.path);
    return text === null
      ? {
          error: "DocumentNotFound",
          message: `no document at '${parameters.path}' in this project's cascade`,
        }
      : { value: text };
  },
});

/** Every type this service ships, in the order `GET /v1/types` lists them. */
export const BUILT_IN_TOOL_TYPES = [
  DocLookupType,
  McpType,
  McpServerType,
  RestType,
  PromptTemplateType,
  ScriptedType,
  OpenApiType,
];

/**
 * The same types, the `mcp` ones keeping their caches in `mcp`: the composition root's, which it
 * lists in `/v1/metrics` (`BUILT_IN_TOOL_TYPES` share one of their own, for libraries and tests).
 */
export function builtInToolTypes(mcp: McpServerCaches): readonly AnyToolType[] {
  const own = mcpToolTypes(mcp);
  return BUILT_IN_TOOL_TYPES.map((type) =>
    type === McpType ? own.McpType : type === McpServerType ? own.McpServerType : type,
  );
}
