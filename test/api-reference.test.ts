import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_JSON, API_REFERENCE, apiJson, apiReference, shapeOf } from "../scripts/api-reference";
import { testApp } from "./support/app";
import { apiDocument } from "./support/openapi";

async function served() {
  const { app } = await testApp();
  return apiDocument(app);
}

describe("the HTTP contract in the repository (docs/openapi.json, docs/api-reference.md)", () => {
  it("docs/openapi.json is what /openapi.json answers (npm run docs:api)", async () => {
    expect(readFileSync(API_JSON, "utf8"), "run `npm run docs:api`").toBe(apiJson(await served()));
  });

  it("docs/api-reference.md is the reference generated from it (npm run docs:api)", async () => {
    expect(readFileSync(API_REFERENCE, "utf8"), "run `npm run docs:api`").toBe(apiReference(await served()));
  });

  it("lists every operation with its problem codes, e.g. spawning a process", async () => {
    const reference = readFileSync(API_REFERENCE, "utf8");
    const document = await served();
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      for (const method of ["get", "put", "post", "delete"] as const) {
        if (item?.[method]) expect(reference).toContain(`### \`${method.toUpperCase()} ${path}\``);
      }
    }
    const spawn = reference.split("### `POST /v1/tenants/{tenant}/projects/{project}/processes`")[1]!;
    expect(spawn.split("### ")[0]).toMatch(
      /\| 422 \| `application\/problem\+json` \| [^\n]*budget_floor_exceeded/,
    );
  });

  it("writes a schema as a one-line shape", () => {
    expect(
      shapeOf({
        type: "object",
        properties: { name: { type: "string" }, labels: { type: "array", items: { type: "string" } } },
        required: ["name"],
      }),
    ).toBe("{ name: string, labels?: string[] }");
    expect(shapeOf({ type: "string", enum: ["openai", "anthropic"] })).toBe('"openai" \\| "anthropic"');
  });
});
