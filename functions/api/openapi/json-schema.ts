import { type ConversionConfig, type JsonSchema, toJsonSchema } from "@valibot/to-json-schema";
import {
  DocumentPathSchema,
  HintEntrySchema,
  ID_PATTERN,
  INSTANCE_PATTERN,
  InvocableToolNameSchema,
  LabelSchema,
  MAX_PATH_LENGTH,
  ModelIdSchema,
  ProjectIdSchema,
  RecipeEntrySchema,
  SLUG_PATTERN,
  SubToolNameSchema,
  TENANT_PROJECT,
  TenantIdSchema,
  TOOL_NAME_PATTERN,
  ToolNameSchema,
} from "@vance/core";
import type * as v from "valibot";

/** A regular expression's body without its anchors, to compose a larger pattern. */
const body = (pattern: RegExp) => pattern.source.replace(/^\^/, "").replace(/\$$/, "");

/**
 * A string matching `pattern`. Every branch of a composed rule says `type: "string"` too, so
 * generated client types read `string`, not `unknown`.
 */
const text = (pattern: string): JsonSchema => ({ type: "string", pattern });

/** Names that contain `__` have a pack operation after it (`pack__op`); plain names have none. */
const PACK_SPLIT: JsonSchema = { anyOf: [{ type: "string", not: { pattern: "__" } }, text("__.")] };

const INVOCABLE_TOOL_NAME: JsonSchema = {
  pattern: TOOL_NAME_PATTERN.source,
  ...PACK_SPLIT,
  description: "a tool name, or a pack sub-tool named pack__op",
};

type RuleSchema = v.GenericSchema & { readonly pipe: readonly unknown[] };

/**
 * The id and name rules of `ids.ts` are `check`s the converter cannot read; these are the same
 * rules in JSON Schema, composed from the patterns `ids.ts` exports, each shown once as a
 * component of the document. A test holds each one to its valibot rule.
 */
export const RULES: Readonly<Record<string, readonly [RuleSchema, JsonSchema]>> = {
  TenantId: [TenantIdSchema, { pattern: ID_PATTERN.source }],
  ProjectId: [
    ProjectIdSchema,
    {
      anyOf: [{ const: TENANT_PROJECT }, text(ID_PATTERN.source)],
      description: "a project id, or `_tenant` for the tenant layer",
    },
  ],
  Label: [LabelSchema, { pattern: ID_PATTERN.source }],
  ToolName: [
    ToolNameSchema,
    {
      pattern: TOOL_NAME_PATTERN.source,
      not: { pattern: "__" },
      description: "a configured tool's name; `__` is reserved for pack sub-tools",
    },
  ],
  SubToolName: [
    SubToolNameSchema,
    { pattern: TOOL_NAME_PATTERN.source, allOf: [text("__.")], description: "pack__op" },
  ],
  InvocableToolName: [InvocableToolNameSchema, INVOCABLE_TOOL_NAME],
  ModelId: [
    ModelIdSchema,
    { pattern: `^${body(INSTANCE_PATTERN)}/${body(SLUG_PATTERN)}$`, description: "instance/slug" },
  ],
  DocumentPath: [
    DocumentPathSchema,
    {
      minLength: 1,
      maxLength: MAX_PATH_LENGTH,
      description: "a relative path such as documents/guide.md: plain names joined by '/', no '..'",
    },
  ],
  RecipeEntry: [
    RecipeEntrySchema,
    {
      anyOf: [text(`^@${body(ID_PATTERN)}$`), { type: "string", ...INVOCABLE_TOOL_NAME }],
      description: "a tool name (pack sub-tools included) or an @label selector",
    },
  ],
  HintEntry: [
    HintEntrySchema,
    {
      anyOf: [text(`^${body(TOOL_NAME_PATTERN)}\\*$`), { type: "string", ...INVOCABLE_TOOL_NAME }],
      description: "a tool name or a prefix pattern such as doc_*",
    },
  ],
};

/** The rules as the document's components, by name. */
export const RULE_COMPONENTS: Record<string, JsonSchema> = Object.fromEntries(
  Object.entries(RULES).map(([name, [, json]]) => [name, { type: "string", ...json }]),
);

/** The reference to each rule's component, by the rule's `check` action (what `overrideAction` is handed). */
const REF_BY_ACTION = new Map<unknown, JsonSchema>(
  Object.entries(RULES).map(([name, [schema]]) => [
    schema.pipe.find((item) => (item as { type?: string }).type === "check"),
    { $ref: `#/components/schemas/${name}` },
  ]),
);

/** The one conversion every schema of the document goes through: JSON Schema 2020-12 (OpenAPI 3.1). */
export const CONVERSION: ConversionConfig = {
  target: "draft-2020-12",
  // Transformations (`trim`, defaults) have no JSON Schema; the value's shape is still described.
  errorMode: "ignore",
  overrideAction: ({ valibotAction }) => REF_BY_ACTION.get(valibotAction),
};

/** A valibot schema as JSON Schema, converted like every schema of the document. */
export function jsonSchemaOf(schema: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, ...json } = toJsonSchema(schema, CONVERSION);
  return json;
}
