import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

// What a user writes and expects to work is answered: refused with the reason, or accepted with a
// warning — never accepted and quietly ignored.

const PETS = `openapi: 3.1.0
info: { title: Pets, version: "1.0" }
servers: [{ url: "https://pets.invalid/v1" }]
paths:
  /pets:
    get: { operationId: listPets, summary: List pets }
    post: { operationId: addPet, summary: Add a pet }
  /pets/{petId}:
    parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
    get: { operationId: getPetById, summary: One pet }
    delete: { summary: Remove a pet }
`;

const scripted = (inputs: string) =>
  `type: scripted\ndescription: Adds.\nparameters:\n  inputs: ${inputs}\n  source: "1"\n`;

describe("answers instead of silent acceptance", () => {
  it("a spawn warns about names, labels and model instances that name nothing, and hints outside its allow set", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const spawned = await client.spawn({
      engineDefault: ["doc_getting_started"],
      allowedToolsAdd: ["doc_getting_startd", "@doks"],
      allowedToolsRemove: ["doc_tools_overveiw"],
      allowedToolsKeep: ["whoami", "doc_*"],
      allowedToolsDefer: ["zz_*"],
      clientTools: [{ name: "open_file", description: "Opens a file", inputSchema: { type: "object" } }],
      models: ["openai/gpt-4.1", "openia/gpt-4.1"],
    });
    expect(spawned.allowedTools).toEqual(["doc_getting_startd", "doc_getting_started", "open_file"]);
    expect(spawned.warnings.map(({ code, list, entry }) => ({ code, list, entry }))).toEqual([
      { code: "unknown_tool", list: "allowedToolsAdd", entry: "doc_getting_startd" },
      { code: "unknown_label", list: "allowedToolsAdd", entry: "@doks" },
      { code: "unknown_tool", list: "allowedToolsRemove", entry: "doc_tools_overveiw" },
      { code: "not_allowed", list: "allowedToolsKeep", entry: "whoami" },
      { code: "matches_nothing", list: "allowedToolsDefer", entry: "zz_*" },
      { code: "unknown_model_instance", list: "models", entry: "openia/gpt-4.1" },
    ]);
    expect(spawned.warnings.at(-1)?.message).toContain("known: anthropic, cortecs, openai");
    // A clean spawn has none.
    expect((await client.spawn({ allowedToolsAdd: ["@docs"], models: ["openai/gpt-4.1"] })).warnings).toEqual(
      [],
    );
  });

  it.each([
    ["undefined", "a global the script cannot rebind"],
    ["class", "a reserved word"],
    ["NaN", "a global"],
    ["__proto__", "reserved"],
  ])("a scripted input named %s is refused at write (%s)", async (name) => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const res = await client.call(
      "PUT",
      "/tools/bad_inputs",
      scripted(`[{ name: a, type: number }, { name: ${JSON.stringify(name)}, type: number }]`),
      "application/yaml",
    );
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "parameters.inputs.1.name", message: expect.stringContaining(`'${name}' cannot be`) }],
    });
    const fine = await client.call(
      "PUT",
      "/tools/good_inputs",
      scripted("[{ name: a, type: number }, { name: $b, type: number }]"),
      "application/yaml",
    );
    expect(fine.status).toBe(201);
  });

  it("pack-only fields on a tool that is no pack are refused with their lines", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const res = await client.call(
      "PUT",
      "/tools/plain_doc",
      "type: doc_lookup\ndescription: A document.\ndisabledSubTools: [x]\ndefaultDeferred: true\nparameters:\n  path: documents/x.md\n",
      "application/yaml",
    );
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      {
        path: "disabledSubTools",
        message: expect.stringContaining("packs (mcp_server, openapi) only"),
        line: 3,
      },
      {
        path: "defaultDeferred",
        message: expect.stringContaining("packs (mcp_server, openapi) only"),
        line: 4,
      },
    ]);
  });

  it("disabledSubTools takes an OpenAPI pack's operationIds and METHOD /path as well as its sub-tool names", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    expect((await client.call("PUT", "/documents/specs/pets.yaml", PETS, "application/yaml")).status).toBe(
      201,
    );
    await client.putTool(
      "pets",
      'type: openapi\ndescription: Pets\ndisabledSubTools: [addPet, "DELETE /pets/{petId}", pets__get_pet_by_id]\nparameters:\n  spec: specs/pets.yaml\n',
    );
    const names = ((await client.currentListing()).tools as { name: string; pack?: string }[])
      .filter((tool) => tool.pack === "pets")
      .map((tool) => tool.name);
    expect(names).toEqual(["pets__list_pets"]);
  });
});
