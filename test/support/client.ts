import type { components, paths } from "@vance/client";
import createClient, { type Middleware } from "openapi-fetch";
import { expect, vi } from "vitest";
import type { OpenApiDocument } from "../../functions/api/openapi";
import { bearer, type testApp } from "./app";
import { answerOf, apiDocument, operationOf, requestSchemaOf, schemaFor, violations } from "./openapi";

type App = Awaited<ReturnType<typeof testApp>>["app"];

const T = "/v1/tenants/{tenant}/projects/{project}";
type JsonOf<R> = R extends { content: { "application/json": infer Body } } ? Body : never;
type Processes = paths[`${typeof T}/processes`];
type ManifestRoute = paths[`${typeof T}/processes/{id}/manifest`]["get"];

/** The types below come from `/openapi.json` (openapi-typescript), so from the routes' schemas. */
export type Problem = components["schemas"]["Problem"];
export type SpawnRequest = NonNullable<Processes["post"]["requestBody"]>["content"]["application/json"];
export type SpawnedProcess = JsonOf<Processes["post"]["responses"][201]>;
export type ProcessRecord = JsonOf<paths[`${typeof T}/processes/{id}`]["get"]["responses"][200]>;
export type ManifestQuery = NonNullable<ManifestRoute["parameters"]["query"]>;
type ManifestAnswer = JsonOf<ManifestRoute["responses"][200]>;
/** A manifest asked without `?names=`: its name lists are always there. */
export type Manifest = Omit<ManifestAnswer, "deferred" | "demoted"> &
  Required<Pick<ManifestAnswer, "deferred" | "demoted">>;
/** A manifest whose `tools` are in one wire format, as `?format=` asked. */
type InFormat<Tool> = Omit<Manifest, "tools"> & { tools: Extract<Manifest["tools"], Tool[]> };
export type OpenAiManifest = InFormat<{ type: "function" }>;
export type AnthropicManifest = InFormat<{ input_schema: unknown }>;

/** An answer other than the one a typed call expects: its status and problem body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${status} ${problem.code}: ${problem.detail}`);
  }
}

/** The data of a typed call's success, or `ApiError`. */
async function ok<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await call;
  if (data === undefined) throw new ApiError(response.status, error as Problem);
  return data;
}

const mediaTypeOf = (headers: Headers) => (headers.get("content-type") ?? "").split(";")[0]!.trim();

/**
 * Holds every exchange of the typed client to `/openapi.json`: the status must be declared, the
 * answer must match its declared schema, and a request body the server accepted must match the
 * declared request schema — so the tests' own requests and answers check the document.
 */
function conformsTo(document: OpenApiDocument): Middleware {
  const sent = new Map<string, string>();
  return {
    async onRequest({ request, id }) {
      if (request.body) sent.set(id, await request.clone().text());
    },
    async onResponse({ request, response, schemaPath, id }) {
      const where = `${request.method} ${schemaPath}`;
      const body = sent.get(id);
      sent.delete(id);
      const operation = operationOf(document, request.method, schemaPath);
      if (!operation) throw new Error(`${where} is not in /openapi.json`);
      const declared = answerOf(operation, response.status);
      if (!declared)
        throw new Error(`${where} answered ${response.status}, which /openapi.json does not declare`);
      if (response.status !== 204) {
        const mediaType = mediaTypeOf(response.headers);
        const schema = schemaFor(declared.content, mediaType);
        if (schema === undefined)
          throw new Error(`${where} ${response.status}: ${mediaType} is not declared`);
        const wrong = violations(document, schema, await response.clone().json());
        if (wrong.length > 0)
          throw new Error(`${where} ${response.status} differs from /openapi.json: ${JSON.stringify(wrong)}`);
      }
      if (body !== undefined && response.ok) {
        const mediaType = mediaTypeOf(request.headers);
        const schema = requestSchemaOf(operation, mediaType);
        if (schema === undefined) throw new Error(`${where} accepted ${mediaType}, which is not declared`);
        const wrong = violations(document, schema, JSON.parse(body));
        if (wrong.length > 0)
          throw new Error(`${where} accepted a body /openapi.json refuses: ${JSON.stringify(wrong)}`);
      }
    },
  };
}

/**
 * A client for one project with a read/write token: typed calls (`spawn`, `manifest`, `process`,
 * and `api` for any route) whose exchanges are held to `/openapi.json`, and untyped `call`/`invoke`.
 */
export async function projectClient(app: App, tenant = "acme", project = "shop") {
  const headers = await bearer({ tenant, roles: ["read", "write"] });
  const base = `/v1/tenants/${tenant}/projects/${project}`;
  const api = createClient<paths>({
    baseUrl: "http://localhost",
    headers,
    fetch: async (request) => app.request(request),
  });
  api.use(conformsTo(await apiDocument(app)));
  const inProject = { tenant, project };

  const call = async (method: string, path: string, body?: unknown, contentType = "application/json") => {
    const res = await app.request(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": contentType }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : null) as Record<string, unknown>,
    };
  };

  function manifest(
    processId: string,
    query: ManifestQuery & { format: "anthropic" },
  ): Promise<AnthropicManifest>;
  function manifest(
    processId: string,
    query?: ManifestQuery & { format?: "openai" },
  ): Promise<OpenAiManifest>;
  async function manifest(processId: string, query: ManifestQuery = {}) {
    const params = { path: { ...inProject, id: processId }, query };
    const answer = await ok(api.GET(`${T}/processes/{id}/manifest`, { params }));
    // The document allows either format; the route answers the one asked for.
    const key = query.format === "anthropic" ? "input_schema" : "function";
    if (!answer.tools.every((tool) => key in tool)) throw new Error(`the tools are not in the ${key} format`);
    const { deferred, demoted } = answer;
    if (query.names !== undefined)
      throw new Error("this client asks whole manifests; send `names` through `api`");
    if (deferred === undefined || demoted === undefined) throw new Error("a manifest without name lists");
    return { ...answer, deferred, demoted };
  }

  return {
    base,
    headers,
    /** The typed client over every route (openapi-fetch), held to `/openapi.json`. */
    api,
    /**
     * `GET T/tools` once every pack in it is `current` (its spec compiled, its server listed). A
     * listing asked sooner waits `VANCE_SOURCE_WAIT_MS` and then shows a pack without its
     * sub-tools, which a loaded machine reaches; this waits for the state instead.
     */
    currentListing: async (): Promise<Record<string, unknown>> => {
      let listed: Record<string, unknown> = {};
      await vi.waitFor(
        async () => {
          const answer = await call("GET", "/tools");
          expect(answer.status).toBe(200);
          listed = answer.body;
          const packs = listed.packs as { pack: string; status: string }[];
          expect(packs.filter((pack) => pack.status !== "current")).toEqual([]);
        },
        // Bounded by the test's own time limit; the interval keeps the polling cheap.
        { timeout: 600_000, interval: 100 },
      );
      return listed;
    },
    putTool: async (name: string, yaml: string, project_ = project) => {
      const res = await app.request(`/v1/tenants/${tenant}/projects/${project_}/tools/${name}`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/yaml" },
        body: yaml,
      });
      if (res.status >= 300) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    },
    /** `POST T/processes` (`models` defaults to none). */
    spawn: (request: Omit<SpawnRequest, "models"> & Partial<Pick<SpawnRequest, "models">>) =>
      ok(api.POST(`${T}/processes`, { params: { path: inProject }, body: { models: [], ...request } })),
    /** `GET T/processes/{id}`. */
    process: (processId: string) =>
      ok(api.GET(`${T}/processes/{id}`, { params: { path: { ...inProject, id: processId } } })),
    /** `GET T/processes/{id}/manifest`: OpenAI tools unless `format: "anthropic"`. */
    manifest,
    invoke: async (processId: string, name: string, params: unknown = {}) =>
      call("POST", `/processes/${processId}/invoke`, { name, params }),
    call,
  };
}
