import * as v from "valibot";
import { DocumentPathSchema, ModelIdSchema } from "../ids";
import { inputsToJsonSchema, NO_INPUT_SCHEMA, ToolInputsSchema } from "./inputs";
import { McpServerType, McpType } from "./mcp";
import { OpenApiType } from "./openapi/index";
import { RestType } from "./rest/index";
import { ScriptedType } from "./scripted";
import { defineToolType } from "./tool-type";

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

/** `prompt_template`: an LLM call with a fixed prompt prefix — a mini-agent. */
export const PromptTemplateType = defineToolType({
  typeId: "prompt_template",
  description: "Calls a model with a fixed prompt prefix followed by the caller's input.",
  parametersSchema: v.strictObject({
    promptPrefix: v.pipe(v.string(), v.minLength(1, "promptPrefix must not be empty")),
    model: v.optional(ModelIdSchema),
    modelSize: v.optional(v.picklist(["small", "medium", "large"])),
    inputs: v.optional(ToolInputsSchema, [
      { name: "input", type: "string", description: "Text appended to the prompt", required: true },
    ]),
  }),
  inputSchema: (parameters) => inputsToJsonSchema(parameters.inputs),
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
