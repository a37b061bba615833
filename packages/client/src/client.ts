import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./openapi-types.js";
import { isProblem, type Problem, VanceApiError } from "./problems.js";
import { type RetryPolicy, retryingFetch } from "./retry.js";

const T = "/v1/tenants/{tenant}/projects/{project}";
type JsonOf<R> = R extends { content: { "application/json": infer Body } } ? Body : never;
type BodyOf<Op> = Op extends { requestBody?: { content: { "application/json": infer Body } } } ? Body : never;
type QueryOf<Op> = Op extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;
type Processes = paths[`${typeof T}/processes`];
type ManifestRoute = paths[`${typeof T}/processes/{id}/manifest`]["get"];
type ProcessInvokeRoute = paths[`${typeof T}/processes/{id}/invoke`]["post"];
type ToolRoute = paths[`${typeof T}/tools/{name}`];
type EmptyResponseRoute = paths[`${typeof T}/diagnostics/empty-response`]["post"];
type ObservedLimitsRoute = paths["/v1/models/observed-limits"]["post"];

/** `POST T/processes`'s body: the recipe, its hints, the model chain, client tools. */
export type SpawnRequest = BodyOf<Processes["post"]>;
export type SpawnedProcess = JsonOf<Processes["post"]["responses"][201]>;
export type ProcessRecord = JsonOf<paths[`${typeof T}/processes/{id}`]["get"]["responses"][200]>;
export type ManifestQuery = QueryOf<ManifestRoute>;
type ManifestAnswer = JsonOf<ManifestRoute["responses"][200]>;
/**
 * A manifest with its name lists: the service leaves them out when asked with the version of the
 * lists it answered before (`?names=`), and {@link ProjectClient.manifest} puts them back.
 */
export type Manifest = Omit<ManifestAnswer, "deferred" | "demoted"> &
  Required<Pick<ManifestAnswer, "deferred" | "demoted">>;
/** A manifest whose `tools` are in one wire format, as `?format=` asked. */
type InFormat<Tool> = Omit<Manifest, "tools"> & { tools: Extract<Manifest["tools"], Tool[]> };
export type OpenAiManifest = InFormat<{ type: "function" }>;
export type AnthropicManifest = InFormat<{ input_schema: unknown }>;
/** One tool of a manifest in the OpenAI wire format (`{ type: "function", function }`). */
export type OpenAiWireTool = OpenAiManifest["tools"][number];
/** One tool of a manifest in the Anthropic wire format (`{ name, description, input_schema }`). */
export type AnthropicWireTool = AnthropicManifest["tools"][number];
/** What a call answered: `{ value }`, the tool's `{ error, message }`, or a client tool's `{ route: "client" }`. */
export type Invocation = JsonOf<ProcessInvokeRoute["responses"][200]>;
export type ToolView = JsonOf<ToolRoute["get"]["responses"][200]>;
/** A tool configuration document (`PUT T/tools/{name}` as JSON). */
export type ToolDocument = BodyOf<ToolRoute["put"]>;
export type EmptyResponseReport = BodyOf<EmptyResponseRoute>;
export type EmptyResponseDiagnosis = JsonOf<EmptyResponseRoute["responses"][200]>;
export type ObservedLimit = JsonOf<ObservedLimitsRoute["responses"][200]>;

export interface VanceClientOptions {
  /** The service's root, e.g. `http://127.0.0.1:8787` (what the CLI calls `VANCE_URL`). */
  readonly baseUrl: string;
  /** The bearer token, or a function giving the current one (asked before every request). */
  readonly token: string | (() => string | Promise<string>);
  /** The `fetch` to use (default: the global one; Node 20, Deno, Bun, edge runtimes and browsers have it). */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** When requests are sent again (see {@link retryingFetch}). */
  readonly retry?: RetryPolicy;
}

/** The data of a typed call's success, or `VanceApiError` with the answer's problem. */
async function ok<Data>(
  call: Promise<{ data?: Data; error?: unknown; response: Response }>,
  request: string,
): Promise<Data> {
  let outcome: { data?: Data; error?: unknown; response: Response };
  try {
    outcome = await call;
  } catch (error) {
    if (error instanceof VanceApiError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new VanceApiError(0, problemOf(0, "unreachable", `no answer: ${detail}`), request);
  }
  const { data, error, response } = outcome;
  if (response.ok && (data !== undefined || response.status === 204)) return data as Data;
  if (isProblem(error)) throw new VanceApiError(response.status, error, request);
  const text = typeof error === "string" ? error : JSON.stringify(error ?? null);
  throw new VanceApiError(
    response.status,
    problemOf(
      response.status,
      "invalid_answer",
      `HTTP ${response.status} without a problem body: ${text.slice(0, 200)}`,
    ),
    request,
  );
}

function problemOf(status: number, code: Problem["code"], detail: string): Problem {
  return { type: "about:blank", title: code, status, detail, code };
}

/** The calls an engine makes inside one project; everything else through `api`. */
export interface ProjectClient {
  readonly tenant: string;
  readonly project: string;
  /** `POST T/processes`: spawns a process and freezes its allow set. */
  spawn(request: SpawnRequest): Promise<SpawnedProcess>;
  /** `GET T/processes/{id}`: the record, activations included. */
  process(processId: string): Promise<ProcessRecord>;
  /**
   * `DELETE T/processes/{id}`: ends the process — its record is deleted and its place among the
   * tenant's live processes (`VANCE_QUOTA_LIVE_PROCESSES`) given back. Idempotent for the caller:
   * a process that is not there (404 `process_not_found`: ended already, by this call's own retry
   * too) resolves like a 204; any other problem throws `VanceApiError`.
   */
  end(processId: string): Promise<void>;
  /**
   * `GET T/processes/{id}/manifest`: this turn's tools, buckets, budget and discovery blocks. The
   * `deferred` and `demoted` lists (most of the bytes from a few thousand tools up) are asked only
   * when they changed: the client sends the `namesVersion` of the lists it kept from this process's
   * last answer (`?names=`) and puts them back into an answer that left them out.
   */
  manifest(processId: string, query: ManifestQuery & { format: "anthropic" }): Promise<AnthropicManifest>;
  manifest(processId: string, query?: ManifestQuery & { format?: "openai" }): Promise<OpenAiManifest>;
  manifest(processId: string, query?: ManifestQuery): Promise<OpenAiManifest | AnthropicManifest>;
  /** `POST T/processes/{id}/invoke`: a call inside the process (the meta-tools too). */
  invoke(
    processId: string,
    name: string,
    params?: unknown,
    skillTools?: readonly string[],
  ): Promise<Invocation>;
  /** `GET T/tools/{name}`: one tool's document and input schema (activates nothing). */
  tool(name: string): Promise<ToolView>;
  /** `PUT T/tools/{name}` with a YAML (string) or JSON (object) document. */
  putTool(name: string, document: string | ToolDocument): Promise<ToolView>;
  /** `POST T/diagnostics/empty-response`: the empty-response diagnosis (fires once per `requestId`). */
  reportEmptyResponse(report: EmptyResponseReport): Promise<EmptyResponseDiagnosis>;
}

export interface VanceClient {
  /** The typed client over every route of `/openapi.json` (openapi-fetch). */
  readonly api: Client<paths>;
  /** The calls of one project (`_tenant`: the tenant layer). */
  project(tenant: string, project: string): ProjectClient;
  /** `POST /v1/models/observed-limits`: learns an endpoint's tool limit from its rejection text. */
  reportObservedLimit(model: string, errorText: string): Promise<ObservedLimit>;
}

/** A typed client of the service: every route, problems as `VanceApiError`, retries where idempotent. */
export function createVanceClient(options: VanceClientOptions): VanceClient {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const send = retryingFetch(baseFetch, options.retry);
  const token = options.token;
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    fetch: async (request) => {
      const bearer = typeof token === "string" ? token : await token();
      request.headers.set("authorization", `Bearer ${bearer}`);
      return send(request);
    },
  });

  const lists = new KeptNameLists();

  const project = (tenant: string, project: string): ProjectClient => {
    const path = { tenant, project };
    const inProcess = (id: string) => ({ ...path, id });
    async function manifest(processId: string, query: ManifestQuery = {}): Promise<Manifest> {
      const process = `${tenant}/${project}/${processId}`;
      const kept = query.names === undefined ? lists.get(process) : undefined;
      const answer = await ok(
        api.GET(`${T}/processes/{id}/manifest`, {
          params: {
            path: inProcess(processId),
            query: kept ? { ...query, names: kept.namesVersion } : query,
          },
        }),
        `GET manifest of ${processId}`,
      );
      const { deferred, demoted } = answer;
      if (deferred !== undefined && demoted !== undefined) {
        if (query.names === undefined && typeof answer.namesVersion === "string") {
          lists.set(process, { namesVersion: answer.namesVersion, deferred, demoted });
        }
        return { ...answer, deferred, demoted };
      }
      if (kept?.namesVersion !== answer.namesVersion) {
        throw new VanceApiError(
          200,
          problemOf(200, "invalid_answer", "the manifest left out name lists this client does not have"),
          `GET manifest of ${processId}`,
        );
      }
      return { ...answer, deferred: kept.deferred, demoted: kept.demoted };
    }
    return {
      tenant,
      project,
      spawn: (request) =>
        ok(api.POST(`${T}/processes`, { params: { path }, body: request }), "POST processes"),
      process: (processId) =>
        ok(
          api.GET(`${T}/processes/{id}`, { params: { path: inProcess(processId) } }),
          `GET process ${processId}`,
        ),
      end: async (processId) => {
        try {
          await ok(
            api.DELETE(`${T}/processes/{id}`, { params: { path: inProcess(processId) } }),
            `DELETE process ${processId}`,
          );
        } catch (error) {
          if (!(error instanceof VanceApiError && error.code === "process_not_found")) throw error;
        }
      },
      manifest: manifest as ProjectClient["manifest"],
      invoke: (processId, name, params = {}, skillTools = []) =>
        ok(
          api.POST(`${T}/processes/{id}/invoke`, {
            params: {
              path: inProcess(processId),
              query: skillTools.length > 0 ? { with: skillTools.join(",") } : {},
            },
            body: { name, params },
          }),
          `POST invoke ${name} in ${processId}`,
        ),
      tool: (name) =>
        ok(api.GET(`${T}/tools/{name}`, { params: { path: { ...path, name } } }), `GET tool ${name}`),
      putTool: (name, document) =>
        ok(
          api.PUT(`${T}/tools/{name}`, {
            params: { path: { ...path, name } },
            // YAML goes as sent (comments kept); an object as JSON.
            body: document as ToolDocument,
            ...(typeof document === "string"
              ? {
                  bodySerializer: (body: unknown) => String(body),
                  headers: { "content-type": "application/yaml" },
                }
              : {}),
          }),
          `PUT tool ${name}`,
        ),
      reportEmptyResponse: (report) =>
        ok(
          api.POST(`${T}/diagnostics/empty-response`, { params: { path }, body: report }),
          "POST diagnostics/empty-response",
        ),
    };
  };

  return {
    api,
    project,
    reportObservedLimit: (model, errorText) =>
      ok(
        api.POST("/v1/models/observed-limits", { body: { model, error: errorText } }),
        "POST observed-limits",
      ),
  };
}

/** Name lists of a process's last manifest, by version. */
interface NameLists {
  readonly namesVersion: string;
  readonly deferred: string[];
  readonly demoted: string[];
}

/** Processes whose lists a client keeps: the most recently asked; an older one asks them again. */
const KEPT_PROCESSES = 64;

/** The name lists of the processes this client asked manifests of, the least recently used dropped. */
class KeptNameLists {
  readonly #byProcess = new Map<string, NameLists>();

  get(process: string): NameLists | undefined {
    const kept = this.#byProcess.get(process);
    if (kept) {
      this.#byProcess.delete(process);
      this.#byProcess.set(process, kept);
    }
    return kept;
  }

  set(process: string, lists: NameLists): void {
    this.#byProcess.delete(process);
    this.#byProcess.set(process, lists);
    for (const oldest of this.#byProcess.keys()) {
      if (this.#byProcess.size <= KEPT_PROCESSES) break;
      this.#byProcess.delete(oldest);
    }
  }
}
