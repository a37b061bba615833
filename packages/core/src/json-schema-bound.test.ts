import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./json-schema";
import { boundJsonSchema } from "./json-schema-bound";
import { JSON_SCHEMA_LIMITS, jsonSchemaSizeProblem } from "./json-schema-size";

describe("boundJsonSchema", () => {
  it("answers a schema within the limits as it is, its refs inlined", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { a: { $ref: "#/$defs/A" } },
      $defs: { A: { type: "string", enum: ["x", "y"] } },
    };
    expect(boundJsonSchema(schema)).toEqual({
      schema: { type: "object", properties: { a: { type: "string", enum: ["x", "y"] } } },
      cut: [],
    });
  });

  it("cuts a ref DAG that expands past the nodes breadth-first: the levels near the root are kept whole", () => {
    const $defs: Record<string, JsonSchema> = { S0: { type: "string" } };
    for (let level = 1; level <= 30; level++) {
      $defs[`S${level}`] = {
        type: "object",
        properties: { a: { $ref: `#/$defs/S${level - 1}` }, b: { $ref: `#/$defs/S${level - 1}` } },
      };
    }
    const { schema, cut } = boundJsonSchema({ $ref: "#/$defs/S30", $defs });
    expect(jsonSchemaSizeProblem(schema)).toBeNull();
    // Every path of four levels is there whole before any fifth-level schema is.
    let level: JsonSchema = schema;
    for (let depth = 0; depth < 4; depth++) {
      expect(level.type).toBe("object");
      level = (level.properties as Record<string, JsonSchema>).b!;
    }
    expect(cut.length).toBeGreaterThan(0);
    expect(cut[0]).toMatch(/^(a|b)(\.(a|b))+/);
  });

  it("leaves out combinators nested past the limit, a recursive ref at its recurrence, and characters past the limit", () => {
    let nested: JsonSchema = { type: "string" };
    for (let level = 0; level < 8; level++) nested = { anyOf: [nested, { type: "null" }] };
    const combinators = boundJsonSchema(nested);
    expect(jsonSchemaSizeProblem(combinators.schema)).toBeNull();
    expect(combinators.cut).toEqual([
      expect.stringMatching(`anyOf nested more than ${JSON_SCHEMA_LIMITS.maxCombinatorNesting} deep`),
    ]);

    const recursive = boundJsonSchema({
      $ref: "#/$defs/Node",
      $defs: { Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" } } } },
    });
    expect(recursive.schema).toEqual({ type: "object", properties: { next: {} } });
    expect(recursive.cut).toEqual(["next (recursive #/$defs/Node)"]);

    const wide: JsonSchema = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(1_000) }]),
      ),
    };
    const bounded = boundJsonSchema(wide);
    expect(jsonSchemaSizeProblem(bounded.schema, JSON.stringify(bounded.schema).length)).toBeNull();
    // Every property is still there; the descriptions past the characters are what went.
    expect(Object.keys(bounded.schema.properties as object)).toHaveLength(200);
  });
});
