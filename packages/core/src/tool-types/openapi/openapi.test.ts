import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { jsonSchemaSizeProblem } from "../../json-schema-size";
import { createNetworkPolicy } from "../../net/network-policy";
import type { OpenApiCompileRequest } from "../../ports/tool-runtime";
import { JsonSchemaValidator } from "../../validation/json-schema-validator";
import type { SourceContext, SourceTool } from "../tool-type";
import { OpenApiType } from "./index";
import {
  OPERATION_LIST_FORMAT,
  type OperationListOptions,
  type OperationTarget,
  operationTarget,
  readOperations,
} from "./operations";
import { OpenApiParametersSchema } from "./parameters";
import { buildOperationRequest } from "./request";

const jsonSchemas = new JsonSchemaValidator();

/** `readOperations` with this file's validator. */
function operations(
  document: Readonly<Record<string, unknown>>,
  options: Omit<OperationListOptions, "jsonSchemas">,
) {
  return readOperations(document, { ...options, jsonSchemas });
}

/** A dereferenced OpenAPI 3.1 document, as the parser port answers it. */
function petstore(): Record<string, unknown> {
  const pet = {
    type: "object",
    required: ["id", "name"],
    properties: {
      id: { type: "integer", readOnly: true },
      name: { type: "string", "x-internal": true },
      tag: { type: "string", nullable: true },
    },
  };
  return {
    openapi: "3.1.0",
    info: { title: "Pets", version: "1" },
    servers: [{ url: "https://{region}.pets.example/v1", variables: { region: { default: "eu" } } }],
    paths: {
      "/pets": {
        get: {
          operationId: "listPets",
          summary: "List pets",
          description: "  Pages through every pet.  ",
          parameters: [
            {
              name: "limit",
              in: "query",
              description: "How many",
              schema: { type: "integer", maximum: 100 },
            },
            { name: "tags", in: "query", schema: { type: "array", items: { type: "string" } } },
            { name: "X-Trace", in: "header", required: true, schema: { type: "string" } },
            { name: "Accept", in: "header", schema: { type: "string" } },
            { name: "Host", in: "header", schema: { type: "string" } },
            { name: "session", in: "cookie", schema: { type: "string" } },
          ],
        },
        post: {
          operationId: "createPet",
          requestBody: { required: true, content: { "application/json": { schema: pet } } },
        },
      },
      "/pets/{id}": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
        get: { summary: "One pet" },
        delete: { operationId: "deletePet", deprecated: true },
        head: { operationId: "headPet" },
      },
      "/uploads": {
        post: {
          operationId: "upload",
          requestBody: { required: true, content: { "multipart/form-data": { schema: {} } } },
        },
      },
    },
  };
}

function toolNamed(tools: readonly SourceTool[], name: string): SourceTool {
  const tool = tools.find((candidate) => candidate.sourceName === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.sourceName).join(", ")}`);
  return tool;
}

function targetOf(tool: SourceTool): OperationTarget {
  const target = operationTarget(tool);
  if (!target) throw new Error("no target");
  return target;
}

describe("readOperations", () => {
  it("offers one tool per GET/PUT/POST/DELETE/PATCH operation, named from operationId or method and path", () => {
    const { tools, notes } = operations(petstore(), { pack: "pets" });
    expect(tools.map((tool) => tool.sourceName)).toEqual([
      "list_pets",
      "create_pet",
      "get_pets_id",
      "delete_pet",
    ]);
    expect(notes).toEqual([
      "POST /uploads: left out, its request body is multipart/form-data; only JSON and form (application/x-www-form-urlencoded) bodies are sent",
    ]);
  });

  it("describes an operation by summary and description, its method and path when it has neither", () => {
    const { tools } = operations(petstore(), { pack: "pets" });
    expect(toolNamed(tools, "list_pets").description).toBe("List pets\n\nPages through every pet.");
    expect(toolNamed(tools, "delete_pet").description).toBe("Deprecated.\n\nDELETE /pets/{id}");
  });

  it("builds the input schema from path, query and header parameters; cookies, Accept and Host are not inputs", () => {
    const { tools } = operations(petstore(), { pack: "pets" });
    expect(toolNamed(tools, "list_pets").inputSchema).toEqual({
      type: "object",
      properties: {
        limit: { type: "integer", maximum: 100, description: "How many" },
        tags: { type: "array", items: { type: "string" } },
        "X-Trace": { type: "string" },
      },
      required: ["X-Trace"],
      additionalProperties: false,
    });
    expect(toolNamed(tools, "get_pets_id").inputSchema).toMatchObject({
      properties: { id: { type: "integer" } },
      required: ["id"],
    });
  });

  it("takes the JSON body as `body`: readOnly properties left out, nullable as a null type, x- keywords dropped", () => {
    const { tools } = operations(petstore(), { pack: "pets" });
    expect(toolNamed(tools, "create_pet").inputSchema).toEqual({
      type: "object",
      properties: {
        body: {
          type: "object",
          required: ["name"],
          properties: { name: { type: "string" }, tag: { type: ["string", "null"] } },
        },
      },
      required: ["body"],
      additionalProperties: false,
    });
    expect(targetOf(toolNamed(tools, "create_pet")).body).toEqual({
      property: "body",
      mediaType: "application/json",
      required: true,
    });
  });

  it("records where each input goes and resolves the server's variables", () => {
    const { tools } = operations(petstore(), { pack: "pets" });
    expect(targetOf(toolNamed(tools, "list_pets"))).toEqual({
      method: "GET",
      path: "/pets",
      serverUrl: "https://eu.pets.example/v1",
      parameters: [
        { name: "limit", in: "query", property: "limit", style: "form", explode: true, json: false },
        { name: "tags", in: "query", property: "tags", style: "form", explode: true, json: false },
        { name: "X-Trace", in: "header", property: "X-Trace", style: "simple", explode: false, json: false },
      ],
      body: null,
    });
  });

  it("keeps only the operations the allow-list names, by operationId, METHOD /path or op name", () => {
    const { tools, notes } = operations(petstore(), {
      pack: "pets",
      allow: ["listPets", "GET /pets/{id}", "delete_pet", "nothing"],
    });
    expect(tools.map((tool) => tool.sourceName)).toEqual(["list_pets", "get_pets_id", "delete_pet"]);
    expect(notes).toEqual(["operations: 'nothing' names no operation of the document"]);
  });

  it("converts OpenAPI 3.0 schema keywords to JSON Schema and replaces a ref left at a cycle by {}", () => {
    const document = {
      openapi: "3.0.3",
      paths: {
        "/n": {
          put: {
            operationId: "put_n",
            parameters: [
              {
                name: "n",
                in: "query",
                schema: {
                  type: "number",
                  minimum: 0,
                  exclusiveMinimum: true,
                  maximum: 9,
                  exclusiveMaximum: false,
                },
              },
              { name: "mode", in: "query", schema: { enum: ["a", "b"], type: "string", nullable: true } },
              { name: "any", in: "query", schema: { allOf: [{ type: "string" }], nullable: true } },
            ],
            requestBody: {
              content: {
                "application/merge-patch+json": {
                  schema: {
                    type: "object",
                    discriminator: { propertyName: "kind" },
                    examples: { one: { value: 1 } },
                    properties: { next: { $ref: "#/components/schemas/Node" } },
                  },
                },
              },
            },
          },
        },
      },
    };
    const [tool] = operations(document, { pack: "nodes" }).tools;
    expect(tool?.inputSchema).toEqual({
      type: "object",
      properties: {
        n: { type: "number", exclusiveMinimum: 0, maximum: 9 },
        mode: { type: ["string", "null"], enum: ["a", "b", null] },
        any: { anyOf: [{ allOf: [{ type: "string" }] }, { type: "null" }] },
        body: { type: "object", properties: { next: {} } },
      },
      additionalProperties: false,
    });
    expect(targetOf(tool!).body?.mediaType).toBe("application/merge-patch+json");
  });

  it("keeps a recursive schema recursive: the schemas an operation refers to are its own $defs, checked to any depth", () => {
    const document = {
      openapi: "3.1.0",
      paths: {
        "/tree": {
          post: {
            requestBody: {
              required: true,
              content: { "application/json": { schema: { $ref: "#/components/schemas/Node" } } },
            },
          },
        },
      },
      components: {
        schemas: {
          Node: {
            type: "object",
            properties: {
              value: { type: "string" },
              children: { type: "array", items: { $ref: "#/components/schemas/Node" } },
            },
          },
          Unused: { type: "object", properties: { x: { type: "string" } } },
        },
      },
    };
    const { tools, notes } = operations(document, { pack: "trees" });
    expect(notes).toEqual([]);
    const schema = tools[0]!.inputSchema;
    expect(schema).toEqual({
      type: "object",
      properties: { body: { $ref: "#/$defs/Node" } },
      required: ["body"],
      additionalProperties: false,
      $defs: {
        Node: {
          type: "object",
          properties: {
            value: { type: "string" },
            children: { type: "array", items: { $ref: "#/$defs/Node" } },
          },
        },
      },
    });
    const deep = {
      value: "a",
      children: [{ value: "b", children: [{ value: "c", children: [{ value: 5 }] }] }],
    };
    expect(jsonSchemas.validate(schema, { body: deep })).toEqual([
      { path: "body.children.0.children.0.children.0.value", message: "must be string" },
    ]);
  });

  it("offers an operation whose pattern RE2 cannot run: the pattern left to the API, told to the model, named in the notes", () => {
    const document = petstore();
    const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
    paths["/pets"]!.get!.parameters = [
      { name: "q", in: "query", schema: { type: "string", pattern: "^(?!--)[a-z-]+$", maxLength: 5 } },
    ];
    const { tools, notes } = operations(document, { pack: "pets" });
    const listPets = toolNamed(tools, "list_pets");
    expect(listPets.inputSchema.properties).toEqual({
      q: {
        type: "string",
        maxLength: 5,
        description: "Must match the pattern ^(?!--)[a-z-]+$ (checked by the API, not here).",
      },
    });
    // What can be checked still is.
    expect(jsonSchemas.validate(listPets.inputSchema, { q: "toolong" })).toHaveLength(1);
    expect(notes).toContain(
      'GET /pets: not checked here, left to the API: the pattern "^(?!--)[a-z-]+$" (RE2 cannot run it: lookaround or backreferences)',
    );
  });

  it("offers an operation whose schema expands past the limits, checked breadth-first in part, the rest named in the notes", () => {
    // 16 schemas, each referring to the previous one twice: 17 definitions, 2^16 schemas expanded.
    const schemas: Record<string, unknown> = { S0: { type: "string" } };
    for (let level = 1; level <= 16; level++) {
      schemas[`S${level}`] = {
        type: "object",
        required: ["a"],
        properties: {
          a: { $ref: `#/components/schemas/S${level - 1}` },
          b: { $ref: `#/components/schemas/S${level - 1}` },
        },
      };
    }
    const document = {
      openapi: "3.1.0",
      paths: {
        "/big": {
          post: {
            requestBody: {
              content: { "application/json": { schema: { $ref: "#/components/schemas/S16" } } },
            },
          },
        },
      },
      components: { schemas },
    };
    const { tools, notes } = operations(document, { pack: "big" });
    expect(tools).toHaveLength(1);
    const schema = tools[0]!.inputSchema;
    expect(jsonSchemaSizeProblem(schema)).toBeNull();
    expect(JSON.stringify(schema)).not.toContain("$ref");
    // Near the root it checks: body.a is required and must be an object.
    expect(jsonSchemas.validate(schema, { body: {} })).toEqual([
      { path: "body.a", message: "must have required property 'a'" },
    ]);
    expect(jsonSchemas.validate(schema, { body: { a: 5 } })).toEqual([
      { path: "body.a", message: "must be object" },
    ]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^POST \/big: checked in part \(a schema here holds at most 1000 nodes, 32 levels, combinators 4 deep\), the rest left to the API: body\.[ab]\.[ab]\.[ab]\..* and \d+ more$/,
    );
  });

  it("leaves out a keyword JSON Schema refuses (an enum with a duplicate) and keeps the operation", () => {
    const document = {
      openapi: "3.0.0",
      paths: {
        "/hooks": {
          post: {
            parameters: [{ name: "version", in: "query", schema: { type: "string", enum: ["a", "b", "b"] } }],
          },
        },
      },
    };
    const { tools, notes } = operations(document, { pack: "hooks" });
    expect(tools[0]?.inputSchema.properties).toEqual({ version: { type: "string" } });
    expect(notes).toEqual([
      expect.stringMatching(
        /^POST \/hooks: checked in part .*: \/properties\/version\/enum \(not a valid JSON Schema: .*duplicate items/,
      ),
    ]);
  });

  it("offers a schema nested deeper than it reads with {} past that depth, and says so", () => {
    let nested: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 40; level++) nested = { type: "array", items: nested };
    const document = {
      openapi: "3.1.0",
      paths: { "/deep": { post: { requestBody: { content: { "application/json": { schema: nested } } } } } },
    };
    const { tools, notes } = operations(document, { pack: "deep" });
    expect(tools).toHaveLength(1);
    expect(jsonSchemaSizeProblem(tools[0]!.inputSchema)).toBeNull();
    expect(notes.join("\n")).toMatch(/POST \/deep: .*nests deeper than 32 levels/);
  });

  it("moves a parameter aside when its name is taken or unusable as a property", () => {
    const document = {
      openapi: "3.1.0",
      paths: {
        "/items/{id}": {
          post: {
            operationId: "update",
            parameters: [
              { name: "id", in: "path", required: true, schema: { type: "string" } },
              { name: "id", in: "query", schema: { type: "string" } },
              { name: "body", in: "query", schema: { type: "string" } },
              { name: "filter[status]", in: "query", schema: { type: "string" } },
            ],
            requestBody: { content: { "application/json": { schema: { type: "object" } } } },
          },
        },
      },
    };
    const [tool] = operations(document, { pack: "items" }).tools;
    expect(Object.keys((tool?.inputSchema.properties ?? {}) as object)).toEqual([
      "id",
      "query_id",
      "query_body",
      "filter_status_",
      "body",
    ]);
    expect(targetOf(tool!).parameters.map((p) => [p.name, p.property])).toEqual([
      ["id", "id"],
      ["id", "query_id"],
      ["body", "query_body"],
      ["filter[status]", "filter_status_"],
    ]);
  });

  it("keeps names unique and within 64 characters with the pack's name", () => {
    const pack = "p".repeat(40);
    const document = {
      openapi: "3.1.0",
      paths: {
        "/a": { get: { operationId: "getAVeryLongOperationNameIndeedYes" } },
        "/b": { get: { operationId: "get_a_very_long_operation_name_indeed_no" } },
        "/c": { get: { operationId: "get-a" }, put: { operationId: "getA" } },
      },
    };
    const names = operations(document, { pack }).tools.map((tool) => tool.sourceName);
    // Shortened by leaving out words after the verb, keeping the tail that tells them apart;
    // only the two whose whole names are the same are numbered.
    expect(names).toEqual(["get_name_indeed_yes", "get_name_indeed_no", "get_a", "get_a_2"]);
    for (const name of names) expect(`${pack}__${name}`.length).toBeLessThanOrEqual(64);
  });

  it("shortens long names by rule: repeats and the pack's words, fillers, short forms, then the middle; a name that fits is kept whole", () => {
    const operation = (operationId: string, tag: string) => ({ get: { operationId, tags: [tag] } });
    const document = {
      openapi: "3.1.0",
      paths: {
        "/1": operation("actions/get-github-actions-default-workflow-permissions-repository", "actions"),
        "/2": operation("codespaces/remove-repository-for-secret-for-authenticated-user", "codespaces"),
        "/3": operation(
          "packages/get-all-package-versions-for-package-owned-by-authenticated-user",
          "packages",
        ),
        "/4": operation("actions/get-fork-pr-contributor-approval-permissions-repository", "actions"),
        "/5": operation("actions/set-fork-pr-contributor-approval-permissions-repository", "actions"),
        "/6": operation("issues/create-comment", "issues"),
      },
    };
    const names = operations(document, { pack: "github" }).tools.map((tool) => tool.sourceName);
    expect(names).toEqual([
      "actions_get_default_workflow_permissions_repository",
      "codespaces_remove_repository_secret_authenticated_user",
      "packages_get_all_package_versions_owned_auth_user",
      // The tag and its verb stay; the window of left-out words follows them.
      "actions_get_pr_contributor_approval_permissions_repo",
      "actions_set_pr_contributor_approval_permissions_repo",
      "issues_create_comment",
    ]);
    for (const name of names) expect(`github__${name}`.length).toBeLessThanOrEqual(64);
  });

  it("what readOperations answers is pinned to OPERATION_LIST_FORMAT: a change of it must raise the format (kept lists of the old one are then compiled again)", async () => {
    const answer = JSON.stringify([
      operations(petstore(), { pack: "pets" }),
      operations(
        {
          openapi: "3.1.0",
          paths: {
            "/x": {
              get: { operationId: "actions/get-github-actions-default-workflow-permissions-repository" },
            },
          },
        },
        { pack: "github" },
      ),
    ]);
    const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(answer));
    const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    expect({ format: OPERATION_LIST_FORMAT, answer: hex.slice(0, 16) }).toEqual({
      format: 2,
      answer: "e4faecd46a4f787f",
    });
  });

  it("an absurdly long operationId (100,000 one-letter words) still gets a name within 64 characters", () => {
    const operationId = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(
      "-",
    );
    const document = {
      openapi: "3.1.0",
      paths: { "/x": { get: { operationId } }, "/y": { get: { operationId } } },
    };
    const names = operations(document, { pack: "p" }).tools.map((tool) => tool.sourceName);
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    for (const name of names) expect(`p__${name}`.length).toBeLessThanOrEqual(64);
    expect(names[1]).toMatch(/_2$/);
  });

  it("names do not depend on the order of operations, nor on operations: or tags: picking some", () => {
    const paths: Record<string, unknown> = {
      "/a/{id}": { get: { operationId: "getAVeryLongOperationNameAboutThingsForTheOrganization" } },
      "/b/{id}": { get: { operationId: "getAVeryLongOperationNameAboutThingsForTheRepository" } },
      "/c": { get: { operationId: "getAVeryLongOperationNameAboutOtherThingsForTheOrganization" } },
      "/d": { get: { operationId: "get-a" }, put: { operationId: "getA" } },
    };
    const named = (document: Record<string, unknown>, allow?: string[]) =>
      Object.fromEntries(
        operations(document, { pack: "p".repeat(30), ...(allow ? { allow } : {}) }).tools.map((tool) => [
          tool.aliases?.at(-1),
          tool.sourceName,
        ]),
      );
    const forward = named({ openapi: "3.1.0", paths });
    const backward = named({ openapi: "3.1.0", paths: Object.fromEntries(Object.entries(paths).reverse()) });
    expect(backward).toEqual(forward);
    expect(new Set(Object.values(forward)).size).toBe(5);
    expect(forward["PUT /d"]).toBe("get_a_2");
    const picked = named({ openapi: "3.1.0", paths }, ["GET /c", "PUT /d"]);
    expect(picked).toEqual({ "GET /c": forward["GET /c"], "PUT /d": "get_a_2" });
  });

  it("resolves servers: relative ones against the spec's URL, none without one, operation-level first", () => {
    const document = {
      openapi: "3.1.0",
      servers: [{ url: "/api" }],
      paths: {
        "/a": { get: { operationId: "a" } },
        "/b": { get: { operationId: "b", servers: [{ url: "https://other.example/root" }] } },
      },
    };
    const withUrl = operations(document, {
      pack: "x",
      specUrl: new URL("https://specs.example/v2/spec.yaml"),
    });
    expect(withUrl.tools.map((tool) => targetOf(tool).serverUrl)).toEqual([
      "https://specs.example/api",
      "https://other.example/root",
    ]);
    const withoutUrl = operations(document, { pack: "x" });
    expect(withoutUrl.tools.map((tool) => targetOf(tool).serverUrl)).toEqual([
      null,
      "https://other.example/root",
    ]);
  });
});

describe("request bodies that are not JSON", () => {
  const document = (content: Record<string, unknown>, required: boolean) => ({
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    servers: [{ url: "https://api.example" }],
    paths: {
      "/token": { post: { operationId: "token", requestBody: { required, content } } },
    },
  });

  it("offers a form body as `body`, its schema the form's", () => {
    const schema = { type: "object", properties: { grant_type: { type: "string" } } };
    const { tools, notes } = operations(document({ "application/x-www-form-urlencoded": { schema } }, true), {
      pack: "auth",
    });
    expect(notes).toEqual([]);
    expect(tools[0]?.inputSchema).toMatchObject({ properties: { body: schema }, required: ["body"] });
    expect(operationTarget(tools[0]!)?.body?.mediaType).toBe("application/x-www-form-urlencoded");
  });

  it("never offers an operation without a body it needs, and names an optional body it cannot send", () => {
    const multipart = { "multipart/form-data": { schema: { type: "object" } } };
    expect(operations(document(multipart, true), { pack: "auth" })).toMatchObject({
      tools: [],
      notes: [expect.stringContaining("POST /token: left out, its request body is multipart/form-data")],
    });
    const optional = operations(document(multipart, false), { pack: "auth" });
    expect(optional.tools.map((tool) => tool.sourceName)).toEqual(["token"]);
    expect(optional.notes).toEqual([
      expect.stringContaining(
        "POST /token: offered without its optional request body: its request body is multipart/form-data",
      ),
    ]);
  });
});

describe("buildOperationRequest", () => {
  const target: OperationTarget = {
    method: "POST",
    path: "/files/{dir}/{name}.json",
    serverUrl: null,
    parameters: [
      { name: "dir", in: "path", property: "dir", style: "simple", explode: false, json: false },
      { name: "name", in: "path", property: "name", style: "simple", explode: false, json: false },
      { name: "tags", in: "query", property: "tags", style: "form", explode: true, json: false },
      { name: "ids", in: "query", property: "ids", style: "form", explode: false, json: false },
      { name: "pipes", in: "query", property: "pipes", style: "pipeDelimited", explode: false, json: false },
      { name: "filter", in: "query", property: "filter", style: "deepObject", explode: true, json: false },
      { name: "where", in: "query", property: "where", style: "form", explode: false, json: true },
      { name: "X-Ids", in: "header", property: "xIds", style: "simple", explode: false, json: false },
      { name: "X-Key", in: "header", property: "xKey", style: "simple", explode: false, json: false },
    ],
    body: { property: "body", mediaType: "application/json", required: false },
  };

  it("encodes path values, serialises query and header parameters by style and sends the body as JSON", async () => {
    const built = buildOperationRequest(
      target,
      "https://api.example/v1/",
      {
        dir: "a b/c",
        name: "x?y",
        tags: ["red", "blue"],
        ids: [1, 2],
        pipes: ["a", "b"],
        filter: { status: "open", owner: "me" },
        where: { a: 1 },
        xIds: [3, 4],
        xKey: "from-input",
        body: { hello: "world" },
      },
      [["X-Key", "configured"]],
    );
    if ("error" in built) throw new Error(built.message);
    expect(built.url.href).toBe(
      "https://api.example/v1/files/a%20b%2Fc/x%3Fy.json?tags=red&tags=blue&ids=1%2C2&pipes=a%7Cb&filter%5Bstatus%5D=open&filter%5Bowner%5D=me&where=%7B%22a%22%3A1%7D",
    );
    const headers = built.init.headers as Headers;
    expect(headers.get("x-ids")).toBe("3,4");
    expect(headers.get("x-key")).toBe("configured");
    expect(headers.get("content-type")).toBe("application/json");
    expect(built.init.method).toBe("POST");
    expect(built.init.body).toBe('{"hello":"world"}');
  });

  it("sends a form body URL-encoded from the body's top-level properties (arrays repeated, objects as JSON)", () => {
    const form: OperationTarget = {
      ...target,
      body: { property: "body", mediaType: "application/x-www-form-urlencoded", required: true },
    };
    const built = buildOperationRequest(
      form,
      "https://api.example",
      {
        dir: "d",
        name: "n",
        body: { grant_type: "client credentials", scope: ["a", "b"], meta: { x: 1 }, gone: null },
      },
      [],
    );
    if ("error" in built) throw new Error(built.message);
    expect((built.init.headers as Headers).get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(built.init.body).toBe("grant_type=client+credentials&scope=a&scope=b&meta=%7B%22x%22%3A1%7D");
  });

  it("leaves absent inputs out and sends no body without one", () => {
    const built = buildOperationRequest(target, "https://api.example", { dir: "d", name: "n" }, []);
    if ("error" in built) throw new Error(built.message);
    expect(built.url.href).toBe("https://api.example/files/d/n.json");
    expect(built.init.body).toBeUndefined();
    expect((built.init.headers as Headers).has("content-type")).toBe(false);
  });

  it.each(["..", "."])("refuses a path value that makes the segment %s", (value) => {
    const dots: OperationTarget = { ...target, path: "/files/{dir}" };
    const built = buildOperationRequest(dots, "https://api.example", { dir: value }, []);
    expect(built).toMatchObject({ error: "InvalidRequest" });
  });

  it("refuses a header value the platform cannot send, without quoting it", () => {
    const built = buildOperationRequest(target, "https://api.example", { dir: "d", name: "n" }, [
      ["X-Key", "bad\nvalue-SECRET"],
    ]);
    expect(built).toEqual({
      error: "InvalidRequest",
      message: "header 'X-Key' has an invalid name or value",
    });
  });
});

describe("the openapi type", () => {
  const parse = (parameters: unknown) => v.safeParse(OpenApiParametersSchema, parameters);

  it("takes a document path or an https URL as spec, and an http(s) baseUrl", () => {
    expect(parse({ spec: "specs/pets.yaml" }).success).toBe(true);
    expect(parse({ spec: "https://specs.example/pets.yaml", baseUrl: "http://api.example" }).success).toBe(
      true,
    );
    expect(parse({ spec: "http://specs.example/pets.yaml" }).issues?.[0]?.message).toBe(
      "a spec URL must be an absolute https URL",
    );
    expect(parse({ spec: "../secret.yaml" }).issues?.[0]?.message).toMatch(
      /^spec is neither an https URL nor a document path/,
    );
    expect(parse({ spec: "file:///etc/passwd" }).success).toBe(false);
    expect(parse({ spec: "specs/pets.yaml", baseUrl: "ftp://x" }).success).toBe(false);
    expect(parse({ spec: "specs/pets.yaml", headers: { "Bad Header": "x" } }).success).toBe(false);
    expect(parse({ spec: "specs/pets.yaml" }).output).toEqual({
      spec: "specs/pets.yaml",
      headers: {},
      timeoutMs: 10_000,
    });
  });

  it("refuses on write a spec URL or baseUrl at a literal address the network policy refuses", () => {
    const environment = { networkPolicy: createNetworkPolicy([]), jsonSchemas };
    const parameters = v.parse(OpenApiParametersSchema, {
      spec: "https://169.254.169.254/spec.json",
      baseUrl: "http://[::1]:8080/api",
    });
    const problems = OpenApiType.check?.(parameters, environment) ?? [];
    expect(problems.map((problem) => problem.path)).toEqual(["spec", "baseUrl"]);
    expect(problems[0]?.message).toMatch(/metadata/);
    const allowed = { networkPolicy: createNetworkPolicy(["169.254.169.254", "::1"]), jsonSchemas };
    expect(OpenApiType.check?.(parameters, allowed)).toEqual([]);
  });

  it("opens a cascade document as its source, keyed by layer and ETag, and lists its operations", async () => {
    const context = sourceContext({
      "specs/pets.json": JSON.stringify(petstore()),
    });
    const parameters = v.parse(OpenApiParametersSchema, {
      spec: "specs/pets.json",
      operations: ["listPets"],
    });
    const source = await OpenApiType.sourcing!.open(config("pets", parameters), parameters, context);
    expect(source.key).toBe("document tenant specs/pets.json etag-1");
    const list = await source.load(new AbortController().signal);
    expect(list.tools.map((tool) => tool.sourceName)).toEqual(["list_pets"]);
  });

  it("cannot open a spec that is not in the cascade, and cannot load one without a parser", async () => {
    const parameters = v.parse(OpenApiParametersSchema, { spec: "specs/none.yaml" });
    await expect(
      OpenApiType.sourcing!.open(config("pets", parameters), parameters, sourceContext({})),
    ).rejects.toMatchObject({ code: "document_not_found" });
    const present = v.parse(OpenApiParametersSchema, { spec: "specs/pets.json" });
    const context = { ...sourceContext({ "specs/pets.json": "{}" }), runtime: runtime(undefined) };
    const source = await OpenApiType.sourcing!.open(config("pets", present), present, context);
    await expect(source.load(new AbortController().signal)).rejects.toThrow(/no OpenAPI parser/);
  });

  it("answers a call without a server URL with what to set", async () => {
    const parameters = v.parse(OpenApiParametersSchema, { spec: "specs/pets.json" });
    const [tool] = operations(
      { openapi: "3.1.0", paths: { "/a": { get: { operationId: "a" } } } },
      { pack: "x" },
    ).tools;
    const outcome = await OpenApiType.sourcing!.invokeSubTool!(
      config("x", parameters),
      parameters,
      tool!,
      {},
      {} as never,
    );
    expect(outcome).toMatchObject({ error: "InvalidRequest", message: expect.stringMatching(/set baseUrl/) });
  });
});

function config(name: string, parameters: Record<string, unknown>) {
  return {
    name,
    type: "openapi",
    description: "d",
    enabled: true,
    primary: false,
    labels: [],
    disabledSubTools: [],
    defaultDeferred: false,
    parameters,
  };
}

function runtime(parse: ((text: string) => Promise<Record<string, unknown>>) | undefined) {
  return {
    fetch: async () => {
      throw new Error("no network in unit tests");
    },
    resolveHost: async () => [],
    scripts: { run: async () => ({ ok: false as const, error: "NoScripts", message: "none" }) },
    now: () => 0,
    ...(parse
      ? {
          openApi: async (request: OpenApiCompileRequest) =>
            operations(await parse(request.text), {
              pack: request.pack,
              ...(request.allow ? { allow: request.allow } : {}),
            }),
        }
      : {}),
  };
}

function sourceContext(documents: Record<string, string>): SourceContext {
  return {
    tenant: "acme",
    project: "shop",
    runtime: runtime(async (text) => JSON.parse(text) as Record<string, unknown>),
    networkPolicy: createNetworkPolicy([]),
    readHit: async (path) => {
      const body = documents[path];
      return body === undefined
        ? null
        : {
            layer: "tenant",
            path,
            key: null,
            body,
            etag: "etag-1",
            contentType: "application/json",
            audit: null,
          };
    },
    secretsFor: () => async () => undefined,
  };
}
