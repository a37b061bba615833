import { bearer, type testApp } from "./app";

/** A manifest as the tests read it (OpenAI wire format). */
export type Manifest = {
  tools: { function: { name: string } }[];
  primary: string[];
  deferred: string[];
  demoted: string[];
  budget: { maxTools: number | null; reserve: number; limit: number | null };
  discoveryBlock: string;
  demotedDiscoveryBlock: string;
};

type App = Awaited<ReturnType<typeof testApp>>["app"];

/** A small JSON client over `app.request` for one project, with a read/write token. */
export async function projectClient(app: App, tenant = "acme", project = "shop") {
  const headers = await bearer({ tenant, roles: ["read", "write"] });
  const base = `/v1/tenants/${tenant}/projects/${project}`;
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
  return {
    base,
    headers,
    putTool: async (name: string, yaml: string, project_ = project) => {
      const res = await app.request(`/v1/tenants/${tenant}/projects/${project_}/tools/${name}`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/yaml" },
        body: yaml,
      });
      if (res.status >= 300) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    },
    spawn: async (request: Record<string, unknown>) => {
      const res = await call("POST", "/processes", { models: [], ...request });
      if (res.status !== 201) throw new Error(`spawn: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as unknown as { processId: string; allowedTools: string[] };
    },
    manifest: async (processId: string, query = "") =>
      call("GET", `/processes/${processId}/manifest${query}`),
    invoke: async (processId: string, name: string, params: unknown = {}) =>
      call("POST", `/processes/${processId}/invoke`, { name, params }),
    call,
  };
}
