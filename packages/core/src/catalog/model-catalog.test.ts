import { describe, expect, it } from "vitest";
import { VanceError } from "../errors";
import {
  type CatalogDocument,
  catalogContent,
  compileCatalog,
  maxToolsFor,
  parseModelId,
} from "./model-catalog";

const BUNDLED: CatalogDocument[] = [
  { path: "model/openai/_provider.yaml", body: "wireType: openai\nmaxTools: 128\n" },
  { path: "model/cortecs/_provider.yaml", body: "# unmeasured\nwireType: openai\n" },
  { path: "model/anthropic/_provider.yaml", body: "wireType: anthropic\n" },
];

function catalogOf(extra: CatalogDocument[] = []) {
  const { catalog, errors } = compileCatalog([...BUNDLED, ...extra], "2025-01-01T00:00:00.000Z");
  expect(errors).toEqual([]);
  return catalog;
}

describe("compileCatalog", () => {
  it("keeps maxTools and wireType per instance and models by slug, dots included", () => {
    const catalog = catalogOf([
      { path: "model/openai/gpt-4.1.yaml", body: "maxTools: 64\n" },
      { path: "model/openai/o3.yaml", body: "# nothing to override\n" },
    ]);
    expect(catalog.providers.openai).toEqual({
      maxTools: 128,
      wireType: "openai",
      models: { "gpt-4.1": { maxTools: 64 }, o3: {} },
    });
    expect(catalog.providers.cortecs).toEqual({ wireType: "openai", models: {} });
    expect(catalog).toMatchObject({ version: 1, compiledAt: "2025-01-01T00:00:00.000Z" });
  });

  it("refuses a field nothing reads, with a hint for a near miss, besides the other problems", () => {
    const { catalog, errors } = compileCatalog([
      ...BUNDLED,
      { path: "model/openai/gpt-4.1.yaml", body: "maxtools: 5\nsize: huge\npricing: { input: 2 }\n" },
    ]);
    expect(errors).toEqual([
      {
        path: "model/openai/gpt-4.1.yaml",
        message:
          "maxtools, line 1: unknown field; did you mean 'maxTools'?; size, line 2: size must be one of small, medium, large; pricing, line 3: unknown field; the fields here are maxTools, maxToolTokens, size",
      },
    ]);
    expect(catalog.providers.openai?.models).toEqual({});
  });

  it("reports a bad document with its line and still compiles the others", () => {
    const { catalog, errors } = compileCatalog([
      ...BUNDLED,
      { path: "model/openai/gpt-4.1.yaml", body: "displayName: x\nmaxTools: -1\n" },
      { path: "model/openai/o3.yaml", body: "maxTools: 12.5\n" },
      { path: "model/openai/broken.yaml", body: "maxTools: [1\n" },
      { path: "model/Bad/_provider.yaml", body: "maxTools: 1\n" },
      { path: "model/openai/_notes.yaml", body: "maxTools: 1\n" },
      { path: "model/openai/readme.md", body: "hi" },
      { path: "model/mistral/large.yaml", body: "maxTools: 32\n" },
    ]);
    expect(errors.map((error) => error.path).sort()).toEqual([
      "model/Bad/_provider.yaml",
      "model/openai/_notes.yaml",
      "model/openai/broken.yaml",
      "model/openai/gpt-4.1.yaml",
      "model/openai/o3.yaml",
      "model/openai/readme.md",
    ]);
    expect(errors.find((error) => error.path === "model/openai/gpt-4.1.yaml")?.message).toMatch(
      /maxTools, line 2: maxTools must be 0 \(no limit\) or more/,
    );
    expect(catalog.providers.openai?.models).toEqual({});
    expect(catalog.providers.mistral).toEqual({ models: { large: { maxTools: 32 } } });
  });

  it("gives the same content for the same sources in any order, whatever compiledAt says", () => {
    const docs = [...BUNDLED, { path: "model/openai/gpt-4.1.yaml", body: "maxTools: 64\n" }];
    const a = compileCatalog(docs, "2025-01-01T00:00:00.000Z").catalog;
    const b = compileCatalog([...docs].reverse(), "2026-06-01T00:00:00.000Z").catalog;
    expect(catalogContent(a)).toBe(catalogContent(b));
    const c = compileCatalog([...docs, { path: "model/openai/o3.yaml", body: "maxTools: 0\n" }]).catalog;
    expect(catalogContent(c)).not.toBe(catalogContent(a));
  });
});

describe("maxToolsFor", () => {
  const catalog = catalogOf([
    { path: "model/openai/gpt-4.1.yaml", body: "maxTools: 64\n" },
    { path: "model/openai/unlimited.yaml", body: "maxTools: 0\n" },
    { path: "model/openai/plain.yaml", body: "size: medium\n" },
    { path: "model/gateway/_provider.yaml", body: "wireType: openai\nmaxTools: 0\n" },
    { path: "model/cortecs/tuned.yaml", body: "maxTools: 40\n" },
  ]);

  it.each([
    ["openai/gpt-4.1", 64, "model"],
    ["openai/unlimited", null, "model"],
    ["openai/plain", 128, "provider"],
    ["openai/never-listed", 128, "provider"],
    ["cortecs/some-model", null, "none"],
    ["cortecs/tuned", 40, "model"],
    ["anthropic/claude-sonnet-4", null, "none"],
    ["gateway/any", null, "none"],
    ["unknown/any", null, "none"],
    ["openai/constructor", 128, "provider"],
    ["constructor/x", null, "none"],
  ] as const)("%s → %s (%s)", (model, maxTools, source) => {
    expect(maxToolsFor(catalog, model)).toEqual({ maxTools, source });
  });

  it.each([
    "gpt-4.1",
    "OpenAI/gpt-4.1",
    "openai/",
    "/gpt-4.1",
    "openai/a/b",
    "openai/../x",
    "openai/_provider",
  ])("rejects the model id %j with invalid_model 400", (model) => {
    const error = (() => {
      try {
        maxToolsFor(catalog, model);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(VanceError);
    expect(error).toMatchObject({ code: "invalid_model", status: 400 });
  });

  it("splits a valid id", () => {
    expect(parseModelId("openai/gpt-4.1")).toEqual({ instance: "openai", slug: "gpt-4.1" });
  });
});
