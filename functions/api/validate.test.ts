import { silentLogger } from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { type AuthEnv, authentication, mintToken, need } from "./auth";
import { TokenVerifier } from "./identity/verifier";
import { describe as describeRoute, jsonResponse, openApiDocument } from "./openapi";
import { problemResponse } from "./problem";
import { commaListQuery, json, ProjectPathSchema, params, query } from "./validate";

const SECRET = "validate-test-secret-0123456789";

/** One route of each input kind, as the route modules declare them, on a bare app. */
function app() {
  const hono = new Hono<AuthEnv>();
  hono.onError((error) => problemResponse(error, () => {}));
  hono.use(
    "/v1/*",
    authentication(
      new TokenVerifier(
        { secret: SECRET, localTokens: true, issuers: [], publicUrl: "http://localhost" },
        { logger: silentLogger },
      ),
    ),
  );
  const doc = describeRoute({
    summary: "a test route",
    tag: "meta",
    responses: { 200: jsonResponse("ok", v.object({})) },
  });
  hono.post(
    "/v1/tenants/:tenant/projects/:project/things",
    doc,
    need("read"),
    params(ProjectPathSchema),
    query(v.object({ with: v.optional(commaListQuery("a comma list")) }), {
      code: "invalid_format",
    }),
    json(v.strictObject({ name: v.string() })),
    (c) => c.json({ param: c.req.valid("param"), query: c.req.valid("query"), json: c.req.valid("json") }),
  );
  return hono;
}

const token = async () => ({
  authorization: `Bearer ${await mintToken(SECRET, { tenant: "acme", roles: ["read"] }, 600)}`,
});

async function post(path: string, body: string, headers: Record<string, string>) {
  const res = await app().request(path, { method: "POST", body, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("route input declared once (validate.ts)", () => {
  const T = "/v1/tenants/acme/projects/shop/things";
  const jsonType = { "content-type": "application/json" };

  it("hands the handler the validated path, query (comma list trimmed, empties dropped) and body", async () => {
    const res = await post(`${T}?with=%20a%20,,b,%20`, '{"name":"x"}', { ...jsonType, ...(await token()) });
    expect(res).toEqual({
      status: 200,
      body: { param: { tenant: "acme", project: "shop" }, query: { with: ["a", "b"] }, json: { name: "x" } },
    });
  });

  it("answers the problem codes the hand checks answered: invalid_id, the route's query code, the JSON body's", async () => {
    const headers = { ...jsonType, ...(await token()) };
    const refused = [
      await post("/v1/tenants/acme/projects/Shop/things", '{"name":"x"}', headers),
      await post(`${T}?with=a&with=b`, '{"name":"x"}', headers),
      await post(T, "{", headers),
      await post(T, '{"name":1}', headers),
      await post(T, '{"name":"x"}', { "content-type": "text/plain", ...(await token()) }),
    ];
    expect(refused.map(({ status, body }) => [status, body.code])).toEqual([
      [400, "invalid_id"],
      [400, "invalid_format"],
      [400, "invalid_json"],
      [422, "validation_failed"],
      [415, "unsupported_media_type"],
    ]);
    expect(refused[0]!.body.detail).toBe(
      "project 'Shop' is not a valid id: lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 63 characters; or _tenant",
    );
    expect(refused[3]!.body.errors).toEqual([{ path: "name", message: expect.any(String) }]);
  });

  it("verifies the token only where a route needs one: no token is 401 there, and 404 where no route is", async () => {
    const res = await post(T, '{"name":"x"}', jsonType);
    expect([res.status, res.body.code]).toEqual([401, "unauthenticated"]);
    const none = await app().request("/v1/nothing-here");
    expect(none.status).toBe(404);
  });

  it("documents the route from the same schemas: parameters, query, body, and the problems each input answers", async () => {
    const document = await openApiDocument(app(), "test");
    const operation = document.paths?.["/v1/tenants/{tenant}/projects/{project}/things"]?.post;
    expect(operation?.parameters).toEqual([
      { in: "path", name: "tenant", required: true, schema: { $ref: "#/components/schemas/TenantId" } },
      { in: "path", name: "project", required: true, schema: { $ref: "#/components/schemas/ProjectId" } },
      { in: "query", name: "with", description: "a comma list", schema: { type: "string" } },
    ]);
    expect(
      Object.keys(
        operation?.requestBody && "content" in operation.requestBody ? operation.requestBody.content : {},
      ),
    ).toEqual(["application/json"]);
    expect(operation?.responses?.["400"]).toMatchObject({ description: "invalid_json | invalid_id" });
    expect(Object.keys(operation?.responses ?? {}).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "413",
      "415",
      "422",
      "500",
      "503",
    ]);
    expect(JSON.stringify(operation)).not.toContain("x-vance-problems");
  });
});
