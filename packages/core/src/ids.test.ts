import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { maxToolsFor, parseModelId } from "./catalog/model-catalog";
import {
  assertDocumentPath,
  assertProcessId,
  assertProjectId,
  assertTenantId,
  assertToolName,
  commaList,
  DocumentPathSchema,
  InvocableToolNameSchema,
  layerDocumentKey,
  layerKeyPrefix,
  layerProjectOf,
  layerProjectsOf,
  ModelIdSchema,
  operationOf,
  ProcessIdSchema,
  ProjectIdSchema,
  parseLayerDocumentKey,
  SubToolNameSchema,
  TenantIdSchema,
  ToolNameSchema,
} from "./ids";
import { HintEntrySchema, RecipeEntrySchema } from "./recipes/recipe-resolver";
import { SpawnRequestSchema } from "./surface/process-records";

const name64 = `a${"b".repeat(63)}`;
const name65 = `a${"b".repeat(64)}`;

/** Inputs around every edge of the rules: lengths, characters, separators, reserved forms. */
const SAMPLES = [
  "",
  "a",
  "acme",
  "Acme",
  "0acme",
  "-acme",
  "_tenant",
  "_other",
  "a-b_c",
  "a b",
  "ü",
  name64,
  name65,
  `x${"y".repeat(62)}`,
  `x${"y".repeat(63)}`,
  "add_numbers",
  "gm__create_issue",
  "gm__",
  "__op",
  "a___b",
  "tool@x",
  "@web",
  "doc_*",
  "openai/gpt-4.1",
  "openai/gpt:4o",
  "OpenAI/gpt-4o",
  "openai/",
  "/gpt",
  "openai/a/b",
  "openai/_provider",
  `openai/${"g".repeat(128)}`,
  `openai/${"g".repeat(129)}`,
  "documents/guide.md",
  "a//b",
  "a/",
  "/a",
  "../a",
  "a/../b",
  "a/./b",
  ".hidden",
  "a\\b",
  `${"s".repeat(100)}/${"t".repeat(100)}`,
  `${"s".repeat(129)}`,
  `${"seg/".repeat(128)}x`,
];

function throws(assert: (value: string) => unknown, value: string): boolean {
  try {
    assert(value);
    return false;
  } catch {
    return true;
  }
}

describe("one rule per id: each schema agrees with its assert function", () => {
  const pairs: [string, v.GenericSchema, (value: string) => unknown][] = [
    ["tenant id", TenantIdSchema, assertTenantId],
    ["project id", ProjectIdSchema, assertProjectId],
    ["tool name", ToolNameSchema, assertToolName],
    ["document path", DocumentPathSchema, assertDocumentPath],
    ["model id", ModelIdSchema, parseModelId],
    ["process id", ProcessIdSchema, assertProcessId],
  ];
  it.each(pairs)("%s", (_what, schema, assert) => {
    for (const sample of SAMPLES) {
      expect(v.is(schema, sample), JSON.stringify(sample)).toBe(!throws(assert, sample));
    }
  });

  it("accepts and refuses what API.md names", () => {
    expect(v.is(TenantIdSchema, "acme")).toBe(true);
    expect(v.is(ProjectIdSchema, "_tenant")).toBe(true);
    expect(v.is(TenantIdSchema, "_tenant")).toBe(false);
    expect(v.is(ToolNameSchema, name64)).toBe(true);
    expect(v.is(ToolNameSchema, name65)).toBe(false);
    expect(v.is(ToolNameSchema, "gm__op")).toBe(false);
    expect(v.is(SubToolNameSchema, "gm__op")).toBe(true);
    expect(v.is(SubToolNameSchema, "gm__")).toBe(false);
    expect(v.is(SubToolNameSchema, `gm__${"o".repeat(61)}`)).toBe(false);
    expect(v.is(DocumentPathSchema, "a//b")).toBe(false);
    expect(v.is(ModelIdSchema, "openai/gpt:4o")).toBe(false);
  });
});

describe("names in recipes, hints and spawn requests follow the tool-name rule", () => {
  it("a tool name or sub-tool name is a recipe entry, hint and client tool name exactly when it is invocable", () => {
    for (const sample of SAMPLES.filter((s) => !s.startsWith("@") && !s.endsWith("*"))) {
      const invocable = v.is(InvocableToolNameSchema, sample);
      expect(v.is(RecipeEntrySchema, sample), sample).toBe(invocable);
      expect(v.is(HintEntrySchema, sample), sample).toBe(invocable);
      const spawn = v.safeParse(SpawnRequestSchema, {
        models: [],
        clientTools: [{ name: sample, description: "d", inputSchema: { type: "object" } }],
      });
      expect(spawn.success, sample).toBe(invocable);
    }
    expect(v.is(RecipeEntrySchema, "@web")).toBe(true);
    expect(v.is(HintEntrySchema, "doc_*")).toBe(true);
  });

  it("every model id a spawn accepts is one the catalog resolves", () => {
    const catalog = { version: 1 as const, compiledAt: "", providers: {} };
    for (const sample of SAMPLES) {
      const spawn = v.safeParse(SpawnRequestSchema, { models: [sample] });
      expect(spawn.success, sample).toBe(!throws((model) => maxToolsFor(catalog, model), sample));
    }
  });
});

describe("commaList, the one reading of a comma-separated list", () => {
  it("trims entries and drops empty ones, as ?with=, ?chain= and the list settings read", () => {
    expect(commaList(" a , b,,c ")).toEqual(["a", "b", "c"]);
    expect(commaList(undefined)).toEqual([]);
    expect(commaList("")).toEqual([]);
  });

  it("names the operation of a sub-tool after its pack", () => {
    expect(operationOf("jira__search_issues", "jira")).toBe("search_issues");
  });
});

describe("layer document keys, built and parsed in one place", () => {
  it("builds {tenant}/{layerProject}/{path} and parses it back", () => {
    expect(layerKeyPrefix("acme", "_tenant")).toBe("acme/_tenant/");
    const key = layerDocumentKey("acme", "shop", "server-tools/a.yaml");
    expect(key).toBe("acme/shop/server-tools/a.yaml");
    expect(parseLayerDocumentKey(key)).toEqual({
      tenant: "acme",
      layerProject: "shop",
      path: "server-tools/a.yaml",
    });
    for (const odd of ["acme", "acme/shop", "acme/shop/", ""])
      expect(parseLayerDocumentKey(odd), odd).toBeNull();
  });

  it("answers which project folder a layer reads: bundled and built-in read none", () => {
    expect(layerProjectOf("project", "shop")).toBe("shop");
    expect(layerProjectOf("tenant", "shop")).toBe("_tenant");
    expect(layerProjectOf("bundled", "shop")).toBeNull();
    expect(layerProjectOf("builtin", "shop")).toBeNull();
    expect(layerProjectsOf("shop")).toEqual(["shop", "_tenant"]);
    expect(layerProjectsOf("_tenant")).toEqual(["_tenant"]);
  });
});
