import * as v from "valibot";
import { DocumentPathSchema } from "../ids";
import { NO_INPUT_SCHEMA } from "./inputs";
import { McpServerCaches, mcpToolTypes } from "./mcp";
import { OpenApiType } from "./openapi/index";
import { PromptTemplateType } from "./prompt-template/index";
import { RestType } from "./rest/index";
import { ScriptedType } from "./scripted";
import { type AnyToolType, defineToolType } from "./tool-type";

/**
 * The longest `doc_lookup` answer, in characters: the ordinary document limit. Only a spec
 * (`specs/`, up to 32 MiB) is longer; a model gets its start and a line saying it was cut.
 */
export const MAX_DOC_LOOKUP_CHARS = 256 * 1024;

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
      : { value: capped(text) };
  },
});

/** `text`, or its first {@link MAX_DOC_LOOKUP_CHARS} characters and a line that says so. */
function capped(text: string): string {
  if (text.length <= MAX_DOC_LOOKUP_CHARS) return text;
  // Never half a surrogate pair.
  const end = MAX_DOC_LOOKUP_CHARS - (/[\uD800-\uDBFF]/.test(text.charAt(MAX_DOC_LOOKUP_CHARS - 1)) ? 1 : 0);
  return `${text.slice(0, end)}\n\n[doc_lookup: cut at ${MAX_DOC_LOOKUP_CHARS} of ${text.length} characters]`;
}

/**
 * Every type this service ships, in the order `GET /v1/types` lists them; the `mcp` ones keep
 * their caches in `mcp` — the composition root's, which it lists in `/v1/metrics`; without one,
 * these types share a new one (a library's or a test's registry).
 */
export function builtInToolTypes(mcp: McpServerCaches = new McpServerCaches()): readonly AnyToolType[] {
  const { McpType, McpServerType } = mcpToolTypes(mcp);
  return [DocLookupType, McpType, McpServerType, RestType, PromptTemplateType, ScriptedType, OpenApiType];
}
