import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createGuardedFetch, createOpenApiParser } from "@vance/adapters";
import { inProcessOpenApiCompiler } from "@vance/adapters/testing";
import {
  createNetworkPolicy,
  type HttpFetch,
  type NetworkPolicy,
  OpenApiParametersSchema,
  OpenApiType,
  type SourceContext,
  type SourceList,
} from "@vance/core";
import * as v from "valibot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";

const T = "/v1/tenants/acme/projects/shop";
const TOKEN = "pets-T0ken-4f3e2d1c";

/** A small OpenAPI 3.1 document: parameters, bodies and schemas through `components`. */
const PETS_SPEC = `openapi: 3.1.0
info:
  title: Pets
  version: "1.0"
servers:
  - url: https://pets.invalid/v1
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      parameters:
        - $ref: "#/components/parameters/Limit"
        - name: tags
          in: query
          description: Only pets with all these tags
          schema: { type: array, items: { type: string } }
        - name: X-Request-Id
          in: header
          schema: { type: string }
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/NewPet" }
  /pets/{petId}:
    parameters:
      - name: petId
        in: path
        required: true
        description: The pet's id
        schema: { type: string }
    get:
      operationId: getPetById
      summary: One pet
    put:
      summary: Replace a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/Pet" }
    delete:
      operationId: deletePet
      parameters:
        - name: hard
          in: query
          schema: { type: boolean }
  /pets/{petId}/tags/{tag}:
    patch:
      operationId: patchTag
      parameters:
        - { name: petId, in: path, required: true, schema: { type: integer } }
        - { name: tag, in: path, required: true, schema: { type: string } }
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: { note: { type: string } } }
components:
  parameters:
    Limit:
      name: limit
      in: query
      description: At most this many
      schema: { type: integer, minimum: 1, maximum: 100 }
  schemas:
    NewPet:
      type: object
      required: [name]
      additionalProperties: false
      properties:
        name: { type: string, minLength: 1 }
        tag: { type: string }
        owner: { $ref: "#/components/schemas/Owner" }
    Pet:
      allOf:
        - $ref: "#/components/schemas/NewPet"
        - type: object
          properties:
            id: { type: string, readOnly: true }
    Owner:
      type: object
      properties:
        name: { type: string }
        friend: { $ref: "#/components/schemas/Owner" }
`;

interface Echo {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: unknown;
}

let upstream: Server;
let base: string;

function echo(req: IncomingMessage, body: string) {
  const url = new URL(req.url ?? "/", "http://x");
  return {
    method: req.method,
    path: url.pathname,
    query: [...url.searchParams],
    headers: req.headers,
    body: body === "" ? null : JSON.parse(body),
  };
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (req.url?.startsWith("/v1/pets/missing")) {
        res
          .writeHead(404, { "content-type": "text/plain" })
          .end(`no pet; you sent ${req.headers.authorization}`);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(echo(req, body)));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

describe("the OpenAPI parser adapter", () => {
  const parse = createOpenApiParser();

  it("answers the document as a tree with its refs in place (each operation resolves what it reaches)", async () => {
    const document = await parse(PETS_SPEC);
    const paths = document.paths as Record<string, Record<string, { parameters?: unknown[] }>>;
    expect(paths["/pets"]?.get?.parameters?.[0]).toEqual({ $ref: "#/components/parameters/Limit" });
    const owner = (
      document.components as { schemas: Record<string, { properties: Record<string, unknown> }> }
    ).schemas.Owner;
    expect(owner?.properties.friend).toEqual({ $ref: "#/components/schemas/Owner" });
  });

  it.each([
    ["https://evil.example/pet.json", "a URL"],
    ["./pet.yaml", "a file"],
    ["/etc/passwd#/x", "an absolute path"],
  ])("refuses a $ref to %s (%s), never reading it", async (ref) => {
    const spec = PETS_SPEC.replace('$ref: "#/components/schemas/NewPet"', `$ref: "${ref}"`);
    await expect(parse(spec)).rejects.toThrow(/leaves the document; only refs within it/);
  });

  it("refuses Swagger 2.0, documents that are not OpenAPI, invalid ones, oversized and self-containing YAML", async () => {
    await expect(parse('swagger: "2.0"\ninfo: {title: t, version: "1"}\npaths: {}\n')).rejects.toThrow(
      /Swagger 2.0 documents are not supported/,
    );
    await expect(parse("- a\n- b\n")).rejects.toThrow(/not an object/);
    await expect(parse("openapi: 3.1.0\npaths: {}\n")).rejects.toThrow(/info/);
    await expect(parse("openapi: [\n")).rejects.toThrow(/not valid YAML or JSON/);
    await expect(createOpenApiParser({ maxBytes: 100 })(PETS_SPEC)).rejects.toThrow(
      /at most 100 are accepted/,
    );
    await expect(
      parse("openapi: 3.1.0\ninfo: &i {title: t, version: '1', x-self: *i}\npaths: {}\n"),
    ).rejects.toThrow(/contains itself/);
  });
});

describe("an openapi pack's source", () => {
  function context(options: {
    policy: NetworkPolicy;
    fetch?: HttpFetch;
    addresses?: string[];
  }): SourceContext {
    return {
      tenant: "acme",
      project: "shop",
      networkPolicy: options.policy,
      runtime: {
        fetch: options.fetch ?? createGuardedFetch(options.policy),
        resolveHost: async (host) => options.addresses ?? [host],
        scripts: { run: async () => ({ ok: false, error: "NoScripts", message: "none" }) },
        now: () => Date.now(),
        openApi: inProcessOpenApiCompiler(),
      },
      readHit: async () => null,
      secretsFor: () => async () => undefined,
    };
  }

  async function load(spec: string, ctx: SourceContext): Promise<SourceList> {
    const parameters = v.parse(OpenApiParametersSchema, { spec });
    const config = {
      name: "pets",
      type: "openapi",
      description: "d",
      enabled: true,
      primary: false,
      labels: [],
      disabledSubTools: [],
      defaultDeferred: false,
      parameters,
    };
    const source = await OpenApiType.sourcing!.open(config, parameters, ctx);
    return source.load(AbortSignal.timeout(5_000));
  }

  it("fetches a spec URL and resolves the document's relative server URL against it", async () => {
    const seen: string[] = [];
    const fetch: HttpFetch = async (url) => {
      seen.push(url);
      return new Response(PETS_SPEC.replace("https://pets.invalid/v1", "/api/v1"), {
        headers: { "content-type": "application/yaml" },
      });
    };
    const list = await load(
      "https://specs.example/pets/openapi.yaml",
      context({ policy: createNetworkPolicy([]), fetch, addresses: ["93.184.215.14"] }),
    );
    expect(seen).toEqual(["https://specs.example/pets/openapi.yaml"]);
    expect(list.tools.map((tool) => tool.sourceName)).toContain("list_pets");
    expect(list.tools[0]?.target).toMatchObject({ serverUrl: "https://specs.example/api/v1" });
  });

  it("refuses a spec URL whose host resolves to a refused address, and one answering an error", async () => {
    const policy = createNetworkPolicy([]);
    await expect(load(`https://127.0.0.1:1/spec.yaml`, context({ policy }))).rejects.toThrow(
      /BlockedAddress: refusing to call 127.0.0.1: 127.0.0.1 is a loopback address/,
    );
    await expect(
      load("https://specs.example/spec.yaml", context({ policy, addresses: ["10.1.2.3"] })),
    ).rejects.toThrow(/BlockedAddress: .*private address/);
    const failing: HttpFetch = async () => new Response("gone", { status: 410, statusText: "Gone" });
    await expect(
      load(
        "https://specs.example/spec.yaml",
        context({ policy, fetch: failing, addresses: ["93.184.215.14"] }),
      ),
    ).rejects.toThrow(/HTTP 410 Gone: gone/);
  });
});

describe("an openapi pack over HTTP", () => {
  type App = Awaited<ReturnType<typeof testApp>>["app"];
  let app: App;
  let headers: Record<string, string>;

  async function request(method: string, path: string, body?: unknown, contentType = "application/json") {
    const res = await app.request(`${T}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": contentType }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function invoke(name: string, params: unknown) {
    return request("POST", `/tools/${name}/invoke`, { params });
  }

  async function echoed(name: string, params: unknown): Promise<Echo> {
    const { status, body } = await invoke(name, params);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.error, JSON.stringify(body)).toBeUndefined();
    return body.value as Echo;
  }

  beforeAll(async () => {
    ({ app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } }));
    headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
    const secret = await app.request("/v1/tenants/acme/secrets/PETS_TOKEN", {
      method: "PUT",
      headers: {
        ...(await bearer({ tenant: "acme", roles: ["admin"] })),
        "content-type": "application/json",
      },
      body: JSON.stringify({ value: TOKEN }),
    });
    expect(secret.status).toBeLessThan(300);
    const spec = await request("PUT", "/documents/specs/pets.yaml", PETS_SPEC, "application/yaml");
    expect(spec.status, JSON.stringify(spec.body)).toBeLessThan(300);
    const tool = await request(
      "PUT",
      "/tools/pets",
      [
        "type: openapi",
        "description: The pet store",
        "parameters:",
        "  spec: specs/pets.yaml",
        `  baseUrl: ${base}/v1`,
        "  headers:",
        "    Authorization: Bearer ${secret:PETS_TOKEN}",
        "  promptHint: Pets - list, add, change and remove pets",
        "",
      ].join("\n"),
      "application/yaml",
    );
    expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  });

  it("lists one sub-tool per operation with its pack, and not the pack document itself", async () => {
    const { status, body } = await request("GET", "/tools");
    expect(status).toBe(200);
    const tools = body.tools as { name: string; pack?: string; description: string; stale?: boolean }[];
    const pets = tools.filter((tool) => tool.pack === "pets");
    expect(pets.map((tool) => tool.name)).toEqual([
      "pets__create_pet",
      "pets__delete_pet",
      "pets__get_pet_by_id",
      "pets__list_pets",
      "pets__patch_tag",
      "pets__put_pets_pet_id",
    ]);
    expect(pets.find((tool) => tool.name === "pets__list_pets")?.description).toBe("List pets");
    expect(pets.every((tool) => tool.stale === undefined)).toBe(true);
    expect(tools.map((tool) => tool.name)).not.toContain("pets");
  });

  it("shows the input schema built from parameters and the body, the schemas it refers to as its own $defs", async () => {
    const list = await request("GET", "/tools/pets__list_pets");
    expect(list.status).toBe(200);
    expect(list.body.pack).toEqual({ name: "pets", sourceName: "list_pets" });
    expect(list.body.inputSchema).toEqual({
      type: "object",
      properties: {
        limit: { type: "integer", minimum: 1, maximum: 100, description: "At most this many" },
        tags: { type: "array", items: { type: "string" }, description: "Only pets with all these tags" },
        "X-Request-Id": { type: "string" },
      },
      additionalProperties: false,
    });
    const create = await request("GET", "/tools/pets__create_pet");
    expect(create.body.inputSchema).toEqual({
      type: "object",
      properties: { body: { $ref: "#/$defs/NewPet" } },
      required: ["body"],
      additionalProperties: false,
      $defs: {
        NewPet: {
          type: "object",
          required: ["name"],
          additionalProperties: false,
          properties: {
            name: { type: "string", minLength: 1 },
            tag: { type: "string" },
            owner: { $ref: "#/$defs/Owner" },
          },
        },
        // Recursive, as the document has it.
        Owner: {
          type: "object",
          properties: { name: { type: "string" }, friend: { $ref: "#/$defs/Owner" } },
        },
      },
    });
    const replace = await request("GET", "/tools/pets__put_pets_pet_id");
    const pet = (replace.body.inputSchema as { $defs: { Pet: { allOf: { properties: object }[] } } }).$defs
      .Pet;
    // `id` is readOnly: a request never carries it.
    expect(pet.allOf[1]).toEqual({ type: "object", properties: {} });
  });

  it("calls GET with query parameters (arrays repeated) and a header parameter, with the pack's secret header", async () => {
    const value = await echoed("pets__list_pets", {
      limit: 5,
      tags: ["cute", "small"],
      "X-Request-Id": "r-1",
    });
    expect(value.method).toBe("GET");
    expect(value.path).toBe("/v1/pets");
    expect(value.query).toEqual([
      ["limit", "5"],
      ["tags", "cute"],
      ["tags", "small"],
    ]);
    expect(value.headers["x-request-id"]).toBe("r-1");
    // The upstream echoed the credential: the result shows it scrubbed.
    expect(value.headers.authorization).toBe("Bearer ***");
    expect(JSON.stringify(value)).not.toContain(TOKEN);
  });

  it("calls POST with the JSON body", async () => {
    const value = await echoed("pets__create_pet", { body: { name: "Rex", owner: { name: "Ann" } } });
    expect(value).toMatchObject({
      method: "POST",
      path: "/v1/pets",
      query: [],
      body: { name: "Rex", owner: { name: "Ann" } },
    });
    expect(value.headers["content-type"]).toBe("application/json");
  });

  it("calls GET, PUT and DELETE with the path parameter percent-encoded", async () => {
    expect(await echoed("pets__get_pet_by_id", { petId: "a b/c" })).toMatchObject({
      method: "GET",
      path: "/v1/pets/a%20b%2Fc",
      body: null,
    });
    expect(await echoed("pets__put_pets_pet_id", { petId: "7", body: { name: "Max" } })).toMatchObject({
      method: "PUT",
      path: "/v1/pets/7",
      body: { name: "Max" },
    });
    expect(await echoed("pets__delete_pet", { petId: "7", hard: true })).toMatchObject({
      method: "DELETE",
      path: "/v1/pets/7",
      query: [["hard", "true"]],
    });
  });

  it("calls PATCH with two path parameters and an optional body left out", async () => {
    expect(await echoed("pets__patch_tag", { petId: 3, tag: "good boy" })).toMatchObject({
      method: "PATCH",
      path: "/v1/pets/3/tags/good%20boy",
      body: null,
    });
    expect(await echoed("pets__patch_tag", { petId: 3, tag: "x", body: { note: "n" } })).toMatchObject({
      body: { note: "n" },
    });
  });

  it("answers 422 invalid_params for input the generated schema refuses", async () => {
    const cases: [string, unknown, string][] = [
      ["pets__list_pets", { limit: 1000 }, "limit"],
      ["pets__list_pets", { tags: "cute" }, "tags"],
      ["pets__list_pets", { color: "red" }, "color"],
      ["pets__create_pet", {}, "body"],
      ["pets__create_pet", { body: { tag: "no name" } }, "body.name"],
      ["pets__create_pet", { body: { name: "Rex", id: "1" } }, "body.id"],
      ["pets__patch_tag", { petId: "three", tag: "x" }, "petId"],
    ];
    for (const [name, params, path] of cases) {
      const { status, body } = await invoke(name, params);
      expect(status, `${name} ${JSON.stringify(params)}`).toBe(422);
      expect(body.code).toBe("invalid_params");
      expect((body.errors as { path: string }[]).map((error) => error.path)).toContain(path);
    }
  });

  it("refuses a path value that would make a '..' segment, and reports an upstream error scrubbed", async () => {
    const dots = await invoke("pets__get_pet_by_id", { petId: ".." });
    expect(dots.status).toBe(200);
    expect(dots.body).toMatchObject({ error: "InvalidRequest" });
    const missing = await invoke("pets__get_pet_by_id", { petId: "missing" });
    expect(missing.body).toMatchObject({ error: "HttpError", status: 404 });
    expect(missing.body.message).toBe("HTTP 404 Not Found: no pet; you sent Bearer ***");
  });

  it("does not call the pack document itself", async () => {
    const { status, body } = await invoke("pets", {});
    expect(status).toBe(404);
    expect(body.code).toBe("tool_not_found");
  });

  it("offers only the operations the allow-list names", async () => {
    const put = await request(
      "PUT",
      "/tools/some_pets",
      `type: openapi\ndescription: Some pets\nparameters:\n  spec: specs/pets.yaml\n  baseUrl: ${base}/v1\n  operations: [getPetById, "DELETE /pets/{petId}"]\n`,
      "application/yaml",
    );
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const { body } = await request("GET", "/tools");
    const names = (body.tools as { name: string; pack?: string }[])
      .filter((tool) => tool.pack === "some_pets")
      .map((tool) => tool.name);
    expect(names).toEqual(["some_pets__delete_pet", "some_pets__get_pet_by_id"]);
    expect(await echoed("some_pets__get_pet_by_id", { petId: "9" })).toMatchObject({ path: "/v1/pets/9" });
  });

  it("refuses on write a baseUrl at a literal address the network policy refuses", async () => {
    const { status, body } = await request(
      "PUT",
      "/tools/metadata_pets",
      "type: openapi\ndescription: x\nparameters:\n  spec: specs/pets.yaml\n  baseUrl: http://169.254.169.254/latest\n",
      "application/yaml",
    );
    expect(status).toBe(422);
    expect(JSON.stringify(body.errors)).toMatch(/parameters\.baseUrl.*metadata/);
  });
});
