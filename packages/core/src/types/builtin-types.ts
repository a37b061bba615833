import * as v from "valibot";
import { DocumentPathSchema, ModelIdSchema } from "../ids";
import { toolInputSchemaProblem } from "../json-schema-validator";
import { OpenJsonSchema, ServerNameSchema } from "./common";
import { inputsToJsonSchema, NO_INPUT_SCHEMA, ToolInputsSchema } from "./inputs";
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

/** `mcp`: one tool of a server-side MCP server. */
export const McpType = defineToolType({
  typeId: "mcp",
  description: "Calls one tool of a server-side MCP server configured in mcp-servers/{server}.yaml.",
  parametersSchema: v.strictObject({
    server: ServerNameSchema,
    toolName: v.pipe(v.string(), v.minLength(1)),
    inputSchema: v.optional(OpenJsonSchema),
  }),
  inputSchema: (parameters) => parameters.inputSchema ?? { type: "object" },
  check: (parameters) => {
    if (!parameters.inputSchema) return [];
    const problem = toolInputSchemaProblem(parameters.inputSchema);
    return problem ? [{ path: "inputSchema", message: `inputSchema: ${problem}` }] : [];
  },
});

/** `mcp_server`: a pack of all tools of a server-side MCP server, named `{tool}__{op}`. */
export const McpServerType = defineToolType({
  typeId: "mcp_server",
  description:
    "A pack: every tool of a server-side MCP server becomes a sub-tool named {name}__{tool}. disabledSubTools and defaultDeferred apply.",
  parametersSchema: v.strictObject({
    server: ServerNameSchema,
    promptHint: v.optional(v.string()),
  }),
  inputSchema: () => ({ type: "object" }),
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
];
