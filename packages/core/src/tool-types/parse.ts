import * as v from "valibot";
import { type ServerToolConfig, ServerToolConfigSchema } from "../config/schema";
import { issuesToFieldErrors, type ParsedYaml, parseYamlDocument } from "../config/yaml";
import { Errors, type FieldError, type VanceError } from "../errors";
import type { ToolTypeRegistry } from "./registry";

export type ToolDocumentResult =
  | { readonly ok: true; readonly config: ServerToolConfig }
  | { readonly ok: false; readonly error: VanceError };

/**
 * Parses and fully validates a tool configuration document stored as `server-tools/{name}.yaml`:
 * YAML syntax, the common fields, the name rule, and the type's `parameters` schema.
 * Errors carry YAML line numbers where the parser knows them.
 */
export function parseToolDocument(
  text: string,
  name: string,
  registry: ToolTypeRegistry,
): ToolDocumentResult {
  const base = parseYamlDocument(text, ServerToolConfigSchema, {
    document: "a tool document",
    schema: "the tool schema",
    mapping: "expected a mapping",
  });
  if (!base.ok) return fail(Errors.validationFailed(base.message, base.errors));
  const { yaml } = base;
  if (base.value.name !== undefined && base.value.name !== name)
    return fail(Errors.nameMismatch(name, base.value.name, yaml.lineOf(["name"])));
  const type = registry.find(base.value.type);
  if (!type) return fail(Errors.unknownType(base.value.type, registry.ids(), yaml.lineOf(["type"])));
  const packOnly = packOnlyFields(base.value, type.sourcing?.kind === "pack", yaml);
  if (packOnly.length > 0) {
    return fail(
      Errors.validationFailed(`'${type.typeId}' is no pack: its tools have no sub-tools`, packOnly),
    );
  }
  const parameters = v.safeParse(type.parametersSchema, base.value.parameters ?? {});
  if (!parameters.success) {
    return fail(
      Errors.validationFailed(
        `the parameters do not match the '${type.typeId}' type`,
        issuesToFieldErrors(parameters.issues, yaml, ["parameters"], type.parametersSchema),
      ),
    );
  }
  const problems = type.check?.(parameters.output, registry.environment) ?? [];
  if (problems.length > 0) {
    const errors = problems.map((problem) => {
      const keys = ["parameters", ...problem.path.split(".").filter(Boolean)];
      const line =
        problem.textLine === undefined ? yaml.lineOf(keys) : yaml.lineWithin(keys, problem.textLine);
      return { path: keys.join("."), message: problem.message, ...(line === undefined ? {} : { line }) };
    });
    return fail(
      Errors.validationFailed(`the parameters do not pass the '${type.typeId}' type's checks`, errors),
    );
  }
  const { name: _ignored, ...fields } = base.value;
  return { ok: true, config: { name, ...fields, parameters: parameters.output } };
}

/** `disabledSubTools` and `defaultDeferred` set on a tool that is no pack: they would do nothing. */
function packOnlyFields(
  fields: { readonly disabledSubTools: readonly string[]; readonly defaultDeferred: boolean },
  isPack: boolean,
  yaml: ParsedYaml,
): FieldError[] {
  if (isPack) return [];
  const errors: FieldError[] = [];
  const refuse = (path: "disabledSubTools" | "defaultDeferred") => {
    const line = yaml.lineOf([path]);
    errors.push({
      path,
      message: `${path} applies to packs (mcp_server, openapi) only; remove it`,
      ...(line === undefined ? {} : { line }),
    });
  };
  if (fields.disabledSubTools.length > 0) refuse("disabledSubTools");
  if (fields.defaultDeferred) refuse("defaultDeferred");
  return errors;
}

function fail(error: VanceError): ToolDocumentResult {
  return { ok: false, error };
}
