import * as v from "valibot";
import { DocumentPathSchema } from "../ids";
import { NO_INPUT_SCHEMA } from "./inputs";
import { McpServerCaches, mcpToolTypes } from "./mcp";
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

/**
 * Every type this service ships, in the order `GET /v1/types` lists them; the `mcp` ones keep
 * their caches in `mcp` — the composition root's, which it lists in `/v1/metrics`; without one,
 * these types share a new one (a library's or a test's registry).
 */
export function builtInToolTypes(mcp: McpServerCaches = new McpServerCaches()): readonly AnyToolType[] {
  const { McpType, McpServerType } = mcpToolTypes(mcp);
  return [DocLookupType, McpType, McpServerType, RestType, PromptTemplateType, ScriptedType, OpenApiType];
}
