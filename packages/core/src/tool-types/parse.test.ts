import { describe, expect, it } from "vitest";
import { ADD_NUMBERS } from "../../../../test/support/spec-examples";
import { builtInToolTypes } from "./builtin-types";
import { parseToolDocument } from "./parse";
import { ToolTypeRegistry } from "./registry";

const registry = new ToolTypeRegistry(builtInToolTypes());

function errorOf(text: string, name = "t") {
  const result = parseToolDocument(text, name, registry);
  if (result.ok) throw new Error("expected a failure");
  return result.error;
}

describe("parseToolDocument", () => {
  it("normalises the spec's add_numbers example with defaults filled", () => {
    const result = parseToolDocument(ADD_NUMBERS, "add_numbers", registry);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config).toMatchObject({
      name: "add_numbers",
      type: "scripted",
      primary: false,
      labels: [],
      defaultDeferred: false,
      disabledSubTools: [],
      parameters: { engine: "javascript", timeoutMs: 1000, source: "a + b\n" },
    });
    expect(result.config.parameters.inputs).toEqual([
      { name: "a", type: "number", description: "First operand", required: true },
      { name: "b", type: "number", description: "Second operand", required: true },
    ]);
  });

  it("derives the name from the file name when the document has none", () => {
    const result = parseToolDocument(
      "type: doc_lookup\ndescription: d\nparameters: { path: documents/a.md }\n",
      "doc_a",
      registry,
    );
    expect(result.ok && result.config.name).toBe("doc_a");
  });

  it("reports malformed YAML with its line", () => {
    const error = errorOf("type: doc_lookup\ndescription: [unclosed\n");
    expect(error.code).toBe("validation_failed");
    expect(error.errors[0]?.line).toBeGreaterThanOrEqual(2);
  });

  it("requires type and description", () => {
    const error = errorOf("enabled: true\n");
    expect(error.code).toBe("validation_failed");
    expect(error.errors.map((e) => e.path).sort()).toEqual(["description", "type"]);
  });

  it("rejects an unknown type naming the known ones, at the line of `type`", () => {
    const error = errorOf("description: d\ntype: teleport\n");
    expect(error.code).toBe("unknown_type");
    expect(error.message).toContain("scripted");
    expect(error.errors).toEqual([expect.objectContaining({ path: "type", line: 2 })]);
  });

  it("rejects a name that disagrees with the file name, at the line of `name`", () => {
    const error = errorOf(
      "type: doc_lookup\nname: other\ndescription: d\nparameters: {path: a.md}\n",
      "mine",
    );
    expect(error.code).toBe("name_mismatch");
    expect(error.errors).toEqual([expect.objectContaining({ path: "name", line: 2 })]);
  });

  it.each([["Upper"], ["with@at"], ["pack__op"], ["9lives"], ["a".repeat(65)]])(
    "rejects the name %s",
    (name) => {
      const error = errorOf(`name: ${name}\ntype: doc_lookup\ndescription: d\n`, name);
      expect(error.code).toBe("validation_failed");
      expect(error.errors[0]?.path).toBe("name");
    },
  );

  it("rejects unknown top-level fields (typos do not pass silently)", () => {
    const error = errorOf("type: doc_lookup\ndescription: d\nprimay: true\nparameters: {path: a.md}\n");
    expect(error.errors[0]).toMatchObject({ path: "primay", line: 3 });
  });

  it("says what is wrong in words: an unknown field with the nearest known one, a missing one, a wrong type", () => {
    const error = errorOf("type: doc_lookup\ndescripton: d\nenabled: yes\nparameters: {path: a.md}\n");
    expect(error.errors).toEqual([
      { path: "description", message: "missing required field", line: 1 },
      { path: "descripton", message: "unknown field; did you mean 'description'?", line: 2 },
      { path: "enabled", message: 'expected true or false, got the text "yes"', line: 3 },
    ]);
    const far = errorOf("type: doc_lookup\ndescription: d\ncolour: red\nparameters: {path: a.md}\n");
    expect(far.errors[0]?.message).toBe(
      "unknown field; the fields here are name, type, description, enabled, primary, labels, disabledSubTools, defaultDeferred, parameters",
    );
    const typed = errorOf("type: 5\ndescription: [d]\nparameters: {path: a.md}\n");
    expect(typed.errors.map((e) => e.message)).toEqual([
      "expected a string, got the number 5",
      "expected a string, got a list",
    ]);
  });

  it("names the nearest known parameter of the type, under parameters", () => {
    const error = errorOf(ADD_NUMBERS.replace("timeoutMs: 1000", "timeoutMS: 1000"), "add_numbers");
    expect(error.errors).toEqual([
      { path: "parameters.timeoutMS", message: "unknown field; did you mean 'timeoutMs'?", line: 7 },
    ]);
  });

  it("says a quoted string is never closed, without the parser's dangling position", () => {
    const error = errorOf('type: doc_lookup\ndescription: "Greets\nparameters: {path: a.md}\n');
    expect(error.errors).toHaveLength(1);
    expect(error.errors[0]?.message).toBe(
      "a quoted string is never closed: a closing quote is missing above this line",
    );
    expect(error.errors[0]?.message).not.toMatch(/:$/);
  });

  it("points parameter errors at their YAML line", () => {
    const error = errorOf(ADD_NUMBERS.replace("timeoutMs: 1000", "timeoutMs: 60000"), "add_numbers");
    expect(error.code).toBe("validation_failed");
    expect(error.errors[0]).toMatchObject({ path: "parameters.timeoutMs", line: 7 });
    expect(error.errors[0]?.message).toContain("30000");
  });

  it("rejects an engine other than javascript", () => {
    const error = errorOf(ADD_NUMBERS.replace("engine: javascript", "engine: python"), "add_numbers");
    expect(error.errors[0]).toMatchObject({ path: "parameters.engine", line: 6 });
  });

  it("reserves the input name vance", () => {
    const error = errorOf(ADD_NUMBERS.replace("- name: a", "- name: vance"), "add_numbers");
    expect(error.errors[0]?.path).toBe("parameters.inputs.0.name");
    expect(error.errors[0]?.message).toContain("reserved");
  });

  it("requires exactly one of source and scriptPath", () => {
    const both = ADD_NUMBERS.replace("  source: |", "  scriptPath: scripts/add.js\n  source: |");
    expect(errorOf(both, "add_numbers").errors[0]?.message).toContain("exactly one");
    const neither = ADD_NUMBERS.replace(/ {2}source: \|\n {4}a \+ b\n/, "");
    expect(errorOf(neither, "add_numbers").errors[0]?.message).toContain("exactly one");
  });
});
