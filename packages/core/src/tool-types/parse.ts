import * as v from "valibot";
import { type ServerToolConfig, ServerToolConfigSchema } from "../config/schema";
import { issuesToFieldErrors, type ParsedYaml, parseYamlDocument } from "../config/yaml";
import { Errors, type FieldError, VanceError } from "../errors";
import type { ToolTypeRegistry } from "./registry";
import type { ToolType } from "./tool-type";

export type ToolDocumentResult =
  | { readonly ok: true; readonly config: ServerToolConfig }
  | { readonly ok: false; readonly error: VanceError };

/**
 * Parses and fully validates a tool configuration document stored as `server-tools/{name}.yaml`:
 * YAML syntax, the common fields, the name rule, and the type's `parameters` schema.
 * Errors carry YAML line numbers where the parser knows them. Every check runs on what it can
 * read, so one answer lists every problem of the document in line order (a refused
 * `description` does not hide the parameters' problems until the next try); a single problem
 * keeps its own code (`name_mismatch`, `unknown_type`), several are one `validation_failed`.
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
  if (!base.ok && !base.yaml) return fail(Errors.validationFailed(base.message, base.errors));
  const yaml = base.ok ? base.yaml : (base.yaml as ParsedYaml);
  const fields = yaml.data as Readonly<Record<string, unknown>>;
  const problems: VanceError[] = base.ok ? [] : [Errors.validationFailed(base.message, base.errors)];
  // A field the schema already refused is not judged again by the later checks.
  const refused = (field: string) =>
    !base.ok && base.errors.some((error) => error.path === field || error.path.startsWith(`${field}.`));
  if (typeof fields.name === "string" && fields.name !== name && !refused("name")) {
    problems.push(Errors.nameMismatch(name, fields.name, yaml.lineOf(["name"])));
  }
  const typeId = typeof fields.type === "string" && !refused("type") ? fields.type : undefined;
  const type = typeId === undefined ? undefined : registry.find(typeId);
  if (typeId !== undefined && !type) {
    problems.push(Errors.unknownType(typeId, registry.ids(), yaml.lineOf(["type"])));
  }
  let parameters: Readonly<Record<string, unknown>> | undefined;
  if (type) {
    const packOnly = packOnlyFields(fields, type.sourcing?.kind === "pack", yaml);
    if (packOnly.length > 0) {
      problems.push(
        Errors.validationFailed(`'${type.typeId}' is no pack: its tools have no sub-tools`, packOnly),
      );
    }
    if (!refused("parameters")) {
      const checked = checkParameters(type, fields.parameters ?? {}, registry, yaml);
      if (checked.ok) parameters = checked.parameters;
      else problems.push(checked.error);
    }
  }
  if (problems.length > 0) return fail(allOf(problems));
  if (!base.ok || parameters === undefined) {
    // Unreachable: a refused schema is a problem, and a valid `type` names a known one.
    return fail(Errors.validationFailed("the document does not match the tool schema", []));
  }
  const { name: _ignored, ...rest } = base.value;
  return { ok: true, config: { name, ...rest, parameters } };
}

/** A type's `parameters` schema, then its own checks (which see only parameters the schema accepted). */
function checkParameters(
  type: ToolType,
  raw: unknown,
  registry: ToolTypeRegistry,
  yaml: ParsedYaml,
):
  | { readonly ok: true; readonly parameters: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: VanceError } {
  const parameters = v.safeParse(type.parametersSchema, raw);
  if (!parameters.success) {
    return {
      ok: false,
      error: Errors.validationFailed(
        `the parameters do not match the '${type.typeId}' type`,
        issuesToFieldErrors(parameters.issues, yaml, ["parameters"], type.parametersSchema),
      ),
    };
  }
  const problems = type.check?.(parameters.output, registry.environment) ?? [];
  if (problems.length === 0) return { ok: true, parameters: parameters.output };
  const errors = problems.map((problem) => {
    const keys = ["parameters", ...problem.path.split(".").filter(Boolean)];
    const line = problem.textLine === undefined ? yaml.lineOf(keys) : yaml.lineWithin(keys, problem.textLine);
    return { path: keys.join("."), message: problem.message, ...(line === undefined ? {} : { line }) };
  });
  return {
    ok: false,
    error: Errors.validationFailed(`the parameters do not pass the '${type.typeId}' type's checks`, errors),
  };
}

/** One error for a document's problems: a single one as it is, several as one list in line order. */
function allOf(problems: readonly VanceError[]): VanceError {
  const [only] = problems;
  if (only && problems.length === 1) {
    return new VanceError(only.code, only.message, inLineOrder(only.errors), only.extra);
  }
  return Errors.validationFailed(
    problems.map((problem) => problem.message).join("; "),
    inLineOrder(problems.flatMap((problem) => problem.errors)),
  );
}

/** Field errors by line (those without one last), otherwise in the order they were found. */
function inLineOrder(errors: readonly FieldError[]): FieldError[] {
  return [...errors].sort(
    (a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER),
  );
}

/** `disabledSubTools` and `defaultDeferred` set on a tool that is no pack: they would do nothing. */
function packOnlyFields(
  fields: Readonly<Record<string, unknown>>,
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
  if (Array.isArray(fields.disabledSubTools) && fields.disabledSubTools.length > 0)
    refuse("disabledSubTools");
  if (fields.defaultDeferred === true) refuse("defaultDeferred");
  return errors;
}

function fail(error: VanceError): ToolDocumentResult {
  return { ok: false, error };
}
