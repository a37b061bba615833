import * as v from "valibot";
import { Errors, type VanceError } from "../errors";
import type { ToolTypeRegistry } from "../types/registry";
import { type ServerToolConfig, ServerToolConfigSchema } from "./schema";
import { issuesToFieldErrors, parseYaml } from "./yaml";

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
  const parsed = parseYaml(text);
  if (!parsed.ok) return fail(Errors.validationFailed("the document is not valid YAML", parsed.errors));
  const { yaml } = parsed;
  if (typeof yaml.data !== "object" || yaml.data === null || Array.isArray(yaml.data)) {
    return fail(
      Errors.validationFailed("a tool document is a YAML mapping", [
        { path: "", message: "expected a mapping" },
      ]),
    );
  }
  const base = v.safeParse(ServerToolConfigSchema, yaml.data);
  if (!base.success) {
    return fail(
      Errors.validationFailed(
        "the document does not match the tool schema",
        issuesToFieldErrors(base.issues, yaml, [], ServerToolConfigSchema),
      ),
    );
  }
  if (base.output.name !== undefined && base.output.name !== name)
    return fail(Errors.nameMismatch(name, base.output.name, yaml.lineOf(["name"])));
  const type = registry.find(base.output.type);
  if (!type) return fail(Errors.unknownType(base.output.type, registry.ids(), yaml.lineOf(["type"])));
  const parameters = v.safeParse(type.parametersSchema, base.output.parameters ?? {});
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
  const { name: _ignored, ...fields } = base.output;
  return { ok: true, config: { name, ...fields, parameters: parameters.output } };
}

function fail(error: VanceError): ToolDocumentResult {
  return { ok: false, error };
}
