import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import type { CallableTool } from "../calls/built-in-tool";
import type { JsonSchema } from "../json-schema";
import { executeJavascript } from "./execute-javascript";
import { DECLARATION_LIMITS, declareTools } from "./tool-declarations";

const tool = (name: string, inputSchema: unknown, deferred = false, description = `The ${name} tool.`) =>
  ({ name, description, inputSchema: inputSchema as JsonSchema, deferred }) satisfies CallableTool;

/** The overload written for a lone tool, or undefined when it is named only. */
function overloadOf(schema: unknown): string | undefined {
  const text = declareTools([tool("t", schema)]);
  return /call\(name: "t", params: ([\s\S]*?)\): unknown;/.exec(text)?.[1];
}

describe("declareTools: TypeScript declarations from input schemas", () => {
  it("writes required and optional properties, enums, unions, arrays, nested objects and local $refs", () => {
    const params = overloadOf({
      type: "object",
      properties: {
        id: { type: "integer", description: "The record's id. More text." },
        state: { enum: ["open", "closed"] },
        labels: { type: "array", items: { type: "string" } },
        owner: { anyOf: [{ type: "string" }, { type: "null" }] },
        "x-trace": { type: "boolean" },
        since: { $ref: "#/$defs/date" },
        page: { type: "object", properties: { size: { type: "number" } }, required: ["size"] },
        extra: { type: "object", additionalProperties: { type: "number" } },
        nullable: { type: "string", nullable: true },
      },
      required: ["id"],
      $defs: { date: { type: "string", format: "date" } },
    });
    expect(params).toBe(`{
      /** The record's id. */
      id: number;
      state?: "open" | "closed";
      labels?: string[];
      owner?: string | null;
      "x-trace"?: boolean;
      since?: string;
      page?: { size: number; };
      extra?: Record<string, number>;
      nullable?: string | null;
    }`);
  });

  it("is a pure function of the tools: any order gives the same bytes, in name order", () => {
    const tools = [
      tool("b_tool", { type: "object" }),
      tool("a_tool", { type: "object" }),
      tool("c__x", {}, true),
    ];
    const text = declareTools(tools);
    expect(declareTools([...tools].reverse())).toBe(text);
    expect(text.indexOf('"a_tool"')).toBeLessThan(text.indexOf('"b_tool"'));
    expect(text).toContain("call(name: `c__${string}`, params: object): unknown;");
  });

  it("names deferred tools only, packs once each, and names the rest when the budget is spent", () => {
    const big = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 8 }, (_, i) => [
          `field_${i}`,
          { type: "string", description: "A field of the form." },
        ]),
      ),
    };
    const tools = [
      ...Array.from({ length: 40 }, (_, i) => tool(`form_${String(i).padStart(2, "0")}`, big)),
      tool("gmail__send", {}, true),
      tool("gmail__list", {}, true),
      tool("later", { type: "object" }, true),
    ];
    const text = declareTools(tools);
    const declared = [...text.matchAll(/call\(name: "(form_\d+)", params: \{/g)].map((match) => match[1]);
    expect(declared.length).toBeGreaterThan(0);
    expect(declared.length).toBeLessThan(40);
    expect(text.length).toBeLessThan(DECLARATION_LIMITS.chars + DECLARATION_LIMITS.nameChars + 500);
    const named = /call\(name: (.*), params: object\): unknown;/.exec(text)?.[1] ?? "";
    // The forms past the budget, the pack as one template and the deferred tool, by name.
    expect(named).toContain('"form_39"');
    expect(named).toContain("`gmail__${string}`");
    expect(named).toContain('"later"');
    expect(named).not.toContain(`"${declared[0]}"`);
  });

  it("stays bounded on hostile schemas: cycles, depth, width and size", () => {
    // A $ref cycle ends at the depth limit.
    const cyclic = overloadOf({
      type: "object",
      properties: { node: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } },
    });
    expect(cyclic).toContain("node?: { child?: { child?: unknown; }; };");
    // 100,000 levels of nesting: read down to the depth limit, never recursing past it.
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 100_000; i++) deep = { type: "object", properties: { d: deep } };
    expect(overloadOf(deep)).toBe("{\n      d?: { d?: { d?: { d?: { d?: unknown; }; }; }; };\n    }");
    // 10,000 properties: the first 30, then an index signature.
    const wide = overloadOf({
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`p${i}`, { type: "number" }])),
    });
    expect(wide?.match(/p\d+\?: number;/g)).toHaveLength(DECLARATION_LIMITS.properties);
    expect(wide).toContain("[key: string]: unknown;");
    // A 5,000-member union and an enum past the member limit give up their members.
    expect(overloadOf({ anyOf: Array.from({ length: 5_000 }, () => ({ type: "string" })) })).toBe("unknown");
    expect(overloadOf({ enum: Array.from({ length: 50 }, (_, i) => `v${i}`) })).toBe("unknown");
    // Nodes past the per-tool budget read as unknown, however the schema fans out.
    const fan = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 25 }, (_, i) => [
          `o${i}`,
          {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: 25 }, (_, j) => [`f${j}`, { type: "string" }]),
            ),
          },
        ]),
      ),
    };
    const fanned = declareTools([tool("t", fan)]);
    expect((fanned.match(/: string;/g) ?? []).length).toBeLessThan(DECLARATION_LIMITS.nodes);
    // A property name of 100,000 characters makes the tool too long to declare: named only.
    const named = declareTools([tool("t", { type: "object", properties: { ["k".repeat(100_000)]: {} } })]);
    expect(named).toContain('call(name: "t", params: object): unknown;');
    // Refs that resolve to nothing or do not decode, and foreign refs, are unknown.
    for (const $ref of ["#/%E0%A4%A", "#/nope/x", "https://example.com/s.json", `#/${"a/".repeat(1_000)}`]) {
      expect(overloadOf({ type: "object", properties: { r: { $ref } } })).toContain("r?: unknown;");
    }
    // Comments cannot be closed early by a description.
    const sneaky = declareTools([
      tool("t", { type: "object" }, false, "Ends here */ declare const x: 1; /*"),
    ]);
    expect(sneaky).not.toContain("here */");
  });

  it("keeps execute_javascript's description within its token budget for 300 realistic tools (o200k)", () => {
    const tools = Array.from({ length: 300 }, (_, i) =>
      tool(
        `crm_${["contacts", "deals", "notes", "tasks", "companies"][i % 5]}_${["get", "list", "create", "update", "delete", "search"][i % 6]}_${i}`,
        {
          type: "object",
          properties: {
            id: { type: "string", description: "The object's id, as the CRM shows it." },
            limit: { type: "integer", minimum: 1, maximum: 100, description: "Most results per page." },
            status: { enum: ["open", "won", "lost"] },
            fields: { type: "array", items: { type: "string" } },
          },
          required: ["id"],
        },
        i % 3 === 0,
        `Works with CRM record ${i}: reads or changes it as the name says. Needs the crm scope.`,
      ),
    );
    const description = executeJavascript.describeFor!(tools);
    const declarations = description.slice(description.indexOf("declare const vance"));
    expect(declarations.length).toBeLessThanOrEqual(
      DECLARATION_LIMITS.chars + DECLARATION_LIMITS.nameChars + 500,
    );
    expect(declarations).toContain("more names: tool_list has them all");
    // About 2,000 tokens for the declarations, as DECLARATION_LIMITS promises.
    expect(encode(declarations).length).toBeLessThanOrEqual(2_200);
  });
});
